// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: the fake CAU.
 */
#include "unit.h"

struct fake_cau FC = { .next_id = 100 };

static struct fc_tree *fc_find(uint32_t id)
{
	for (int i = 0; i < FC_TREES; i++)
		if (FC.t[i].id == id && FC.t[i].nr)
			return &FC.t[i];
	return NULL;
}

static int fc_member(const struct fc_tree *t, const struct fwin *f)
{
	for (unsigned int i = 0; i < t->nr; i++)
		if (t->m[i].win.window == f->addr.window)
			return (int)i;
	return -1;
}

static unsigned int fc_root(const struct fc_tree *t)
{
	for (unsigned int i = 0; i < t->nr; i++)
		if (t->m[i].parent == PERCS_CAU_ROOT)
			return i;
	return 0;
}

/* Write @o's result to the members that want it and have room. */
static void fc_deliver(struct fc_tree *t, struct fwin *rootw, struct fc_op *o)
{
	for (unsigned int i = 0; i < t->nr; i++) {
		struct {
			struct percs_pkt_hdr h;
			struct percs_coll_ext e;
			uint8_t d[PERCS_CAU_PAYLOAD];
		} p;
		struct fwin *d = H.win[t->m[i].win.window];

		if (!(o->wants & (1U << i)) || (o->delivered & (1U << i)))
			continue;
		if (!d) {
			o->delivered |= 1U << i;
			continue;
		}
		memset(&p, 0, sizeof(p));
		p.h.kind = PERCS_PKT_COLL;
		p.h.length = sizeof(p.e) + sizeof(p.d);
		p.h.dst = d->addr;
		p.h.tag = o->tag[i];
		p.e = (struct percs_coll_ext){
			.tree = t->id, .coll = o->coll, .op = o->op,
			.type = o->type, .count = o->count, .seq = o->seq,
			.status = o->status,
		};
		memcpy(p.d, o->res, sizeof(p.d));
		if (deliver(rootw, &p.h) == 0)
			o->delivered |= 1U << i;
	}
}

static int fc_seq_cmp(const void *a, const void *b)
{
	const struct fc_op *x = *(struct fc_op *const *)a;
	const struct fc_op *y = *(struct fc_op *const *)b;
	int c = x->seq < y->seq ? -1 : x->seq > y->seq;

	return FC.reverse ? -c : c;
}

/*
 * Write @t's multicasts where they can go: each member gets them in the
 * order posted (FC.reverse: the origins taken last to first, each's in its
 * order) and none past one its FIFO had no room for.  An origin with a
 * multicast waiting in its send FIFO runs again once one finishes.
 */
static bool fc_mc_pump_once(struct fc_tree *t)
{
	uint32_t blocked = 0;
	bool freed[NWIN] = { false }, again = false;

	for (unsigned int k = 0; k < t->nr && !FC.hold; k++) {
		unsigned int o = FC.reverse ? t->nr - 1 - k : k;

		for (;;) {
			struct fc_mc *m = NULL;

			/* The origin's oldest not everywhere it can go. */
			for (int j = 0; j < FC_MC; j++)
				if (t->mc[j].stamp && t->mc[j].origin == o &&
				    (t->mc[j].wants & ~blocked) &&
				    (!m || t->mc[j].stamp < m->stamp))
					m = &t->mc[j];
			if (!m)
				break;
			for (unsigned int i = 0; i < t->nr; i++) {
				struct {
					struct percs_pkt_hdr h;
					struct percs_coll_ext e;
					uint8_t d[PERCS_CAU_PAYLOAD];
				} p;
				struct fwin *d = H.win[t->m[i].win.window];
				struct fwin *src = H.win[t->m[o].win.window];

				if (!(m->wants & ~blocked & (1U << i)))
					continue;
				if (!d || !src) {
					m->wants &= ~(1U << i);
					continue;
				}
				memset(&p, 0, sizeof(p));
				p.h.kind = PERCS_PKT_COLL;
				p.h.length = sizeof(p.e) + sizeof(p.d);
				p.h.dst = d->addr;
				p.h.tag = m->tag;
				p.e = (struct percs_coll_ext){
					.tree = t->id, .coll = PERCS_COLL_MCAST,
					.type = m->type, .count = m->count,
					.seq = m->seq,
				};
				memcpy(p.d, m->data, sizeof(p.d));
				if (deliver(src, &p.h) == 0) {
					m->wants &= ~(1U << i);
					FC.mc_delivered++;
				} else {
					blocked |= 1U << i;
				}
			}
			if (m->wants)
				continue;	/* blocked everywhere it wants */
			m->stamp = 0;
			t->mc_busy[o]--;
			freed[o] = true;
		}
	}
	for (unsigned int o = 0; o < t->nr; o++)
		if (freed[o] && t->mc_waiting[o] && H.win[t->m[o].win.window]) {
			t->mc_waiting[o] = false;
			if (engine_send(H.win[t->m[o].win.window]) > 0)
				again = true;
		}
	return again;
}

static void fc_mc_pump(struct fc_tree *t)
{
	/* What the woken origins posted goes out now, as in the kernel. */
	while (fc_mc_pump_once(t))
		;
}

/*
 * Write the results that can be written (oldest first, or newest first
 * with FC.reverse; none with FC.hold); a member's operations finish in
 * order, once its result is written (or it wants none).
 */
void fc_pump(void)
{
	for (int k = 0; k < FC_TREES; k++) {
		struct fc_tree *t = &FC.t[k];
		struct fc_op *todo[FC_RING];
		struct fwin *rootw;
		unsigned int n = 0;

		if (!t->nr || !t->live)
			continue;
		fc_mc_pump(t);
		rootw = H.win[t->m[fc_root(t)].win.window];
		for (int j = 0; j < FC_RING && !FC.hold && rootw; j++)
			if (t->ops[j].fired &&
			    t->ops[j].delivered != t->ops[j].wants)
				todo[n++] = &t->ops[j];
		qsort(todo, n, sizeof(todo[0]), fc_seq_cmp);
		for (unsigned int j = 0; j < n; j++)
			fc_deliver(t, rootw, todo[j]);
		for (unsigned int i = 0; i < t->nr; i++)
			for (;;) {
				struct fc_op *o = &t->ops[(t->done[i] + 1) % FC_RING];

				if (o->seq != t->done[i] + 1 || !o->fired ||
				    ((o->wants & (1U << i)) &&
				     !(o->delivered & (1U << i))))
					break;
				t->done[i]++;
			}
	}
}

static void fc_fire(struct fc_tree *t, struct fc_op *o)
{
	unsigned int root = fc_root(t);

	if (FC.fail_seq == o->seq && FC.fail_status)
		o->status = FC.fail_status;
	memcpy(o->res, o->in[0], sizeof(o->res));
	for (unsigned int i = 1; i < t->nr && !o->status; i++)
		fm_cau_combine(o->op, o->type, o->count, o->res, o->in[i]);
	if (o->status || o->coll == PERCS_COLL_BARRIER)
		memset(o->res, 0, sizeof(o->res));
	for (unsigned int i = 0; i < t->nr; i++)
		if (o->status || o->coll != PERCS_COLL_REDUCE || i == root)
			o->wants |= 1U << i;
	o->fired = true;
}

int fake_coll(struct fwin *f, const struct percs_pkt_hdr *h)
{
	uint8_t data[PERCS_CAU_PAYLOAD] = { 0 };
	struct percs_coll_ext e = { 0 };
	struct fc_tree *t;
	struct fc_op *o;
	unsigned int size;
	uint64_t seq;
	int err = -EINVAL, i;

	if (h->length >= sizeof(e))
		memcpy(&e, h + 1, sizeof(e));
	size = fm_cau_elem_size(e.type);
	if (h->length < sizeof(e) || e.seq || e.status || e.reserved ||
	    e.coll > PERCS_COLL_LAST || h->dst.hub || h->dst.hfi ||
	    h->dst.window || h->route != PERCS_ROUTE_DIRECT ||
	    fm_cau_check(e.op, e.type, e.count) ||
	    (e.coll == PERCS_COLL_BARRIER && (e.count || e.op)) ||
	    (e.coll == PERCS_COLL_MCAST && e.op) ||
	    h->length != sizeof(e) + e.count * size) {
		violation("malformed COLL descriptor", f);
		goto out;
	}
	memcpy(data, (const uint8_t *)(h + 1) + sizeof(e), e.count * size);
	t = fc_find(e.tree);
	err = -ENOENT;
	if (!t || !t->live)
		goto out;
	i = fc_member(t, f);
	err = -EPERM;
	if (i < 0 || !t->joined[i])
		goto out;
	if (e.coll == PERCS_COLL_MCAST) {
		struct fc_mc *m = NULL;

		for (int j = 0; j < FC_MC && !m; j++)
			if (!t->mc[j].stamp)
				m = &t->mc[j];
		if (t->mc_busy[i] >= FC_MC_BUFS || !m) {
			FC.mc_busy++;
			t->mc_waiting[i] = true;
			return -EBUSY;
		}
		*m = (struct fc_mc){
			.stamp = ++t->mc_stamp, .seq = ++t->mc_posted[i],
			.origin = (unsigned int)i, .tag = h->tag,
			.type = e.type, .count = e.count,
			.wants = ((t->nr == 32 ? ~0U : (1U << t->nr) - 1)) &
				 ~(1U << i),
		};
		memcpy(m->data, data, sizeof(m->data));
		t->mc_busy[i]++;
		if (!m->wants) {
			m->stamp = 0;
			t->mc_busy[i]--;
		}
		FC.descs++;
		FC.last = e;
		if (h->flags & PERCS_PKT_F_NOTIFY)
			post_cqe(f, h, 0, false);
		return 0;
	}
	seq = t->posted[i] + 1;
	if (seq > t->done[i] + PERCS_CAU_MAX_INFLIGHT) {
		FC.busy++;
		return -EBUSY;
	}
	o = &t->ops[seq % FC_RING];
	if (o->seq != seq) {
		memset(o, 0, sizeof(*o));
		o->seq = seq;
	}
	if (!o->have) {
		o->coll = e.coll;
		o->op = e.op;
		o->type = e.type;
		o->count = e.count;
	} else if (o->op != e.op || o->type != e.type || o->count != e.count ||
		   (o->coll == PERCS_COLL_BARRIER) !=
		   (e.coll == PERCS_COLL_BARRIER)) {
		o->status = -EINVAL;
	}
	memcpy(o->in[i], data, sizeof(data));
	o->tag[i] = h->tag;
	o->have |= 1U << i;
	t->posted[i] = seq;
	if (t->posted[i] - t->done[i] > t->peak[i])
		t->peak[i] = (unsigned int)(t->posted[i] - t->done[i]);
	FC.descs++;
	FC.last = e;
	if (o->have == (t->nr == 32 ? ~0U : (1U << t->nr) - 1))
		fc_fire(t, o);
	if (h->flags & PERCS_PKT_F_NOTIFY)
		post_cqe(f, h, 0, false);
	return 0;
out:
	FC.bad++;
	post_cqe(f, h, err, false);
	return err;
}

static int fc_errno(int e)
{
	errno = e;
	return -1;
}

int fake_cau_ioctl(int fd, unsigned long req, unsigned long arg)
{
	struct percs_cau_tree_op *op = (void *)arg;
	struct fwin *f = NULL;
	struct fc_tree *t;
	int me;

	for (int i = 0; i < NWIN; i++)
		if (H.win[i] && H.win[i]->w->fd == fd)
			f = H.win[i];
	if (!f)
		return __real_ioctl(fd, req, arg);
	if (req == PERCS_IOC_CAU_CREATE) {
		struct percs_cau_create *c = (void *)arg;

		if (c->size != sizeof(*c) || (c->flags & ~PERCS_CAU_F_ALL) ||
		    c->tree || !c->nr_members || c->nr_members > NWIN)
			return fc_errno(EINVAL);
		for (t = FC.t; t < FC.t + FC_TREES && t->nr; t++)
			;
		if (t == FC.t + FC_TREES)
			return fc_errno(ENOSPC);
		memset(t, 0, sizeof(*t));
		memcpy(t->m, (void *)(uintptr_t)c->members,
		       c->nr_members * sizeof(t->m[0]));
		me = percs_cau_shape_check(t->m, c->nr_members);
		if (me < 0) {
			memset(t, 0, sizeof(*t));
			return fc_errno(-me);
		}
		t->nr = c->nr_members;
		me = fc_member(t, f);
		if (me < 0) {
			memset(t, 0, sizeof(*t));
			return fc_errno(EPERM);
		}
		t->id = FC.next_id++;
		t->live = true;
		t->flags = c->flags;
		t->joined[me] = true;
		c->tree = t->id;
		return 0;
	}
	if (op->size != sizeof(*op) || op->flags || op->reserved)
		return fc_errno(EINVAL);
	t = fc_find(op->tree);
	if (!t || !t->live)
		return fc_errno(ENOENT);
	me = fc_member(t, f);
	if (me < 0)
		return fc_errno(EPERM);
	if (req == PERCS_IOC_CAU_JOIN) {
		if (t->joined[me])
			return fc_errno(EALREADY);
		t->joined[me] = true;
		return 0;
	}
	t->live = false;
	for (unsigned int i = 0; i < t->nr; i++) {
		struct fwin *d = H.win[t->m[i].win.window];

		/* A multicast waiting for a buffer completes (-ENOENT). */
		if (d && t->mc_waiting[i]) {
			t->mc_waiting[i] = false;
			engine_send(d);
		}
	}
	for (unsigned int i = 0; i < t->nr; i++) {
		struct fwin *d = H.win[t->m[i].win.window];
		struct percs_cqe c = {
			.user_data = t->id, .res = -ECONNRESET,
			.kind = PERCS_PKT_COLL,
		};

		if (d && (int)i != me)
			post_raw_cqe(d, &c);
	}
	return 0;
}

/* ---- helpers ---------------------------------------------------------------- */

struct fwin *cw[NWIN];
struct percs_cau_tree *ct[NWIN];

/* @n windows on hubs 0 .. n-1, each with a fd of its own. */
void cenv_init(unsigned int n, uint32_t flags, uint32_t recv_size)
{
	H.hubs = true;
	memset(&FC, 0, sizeof(FC));
	FC.next_id = 100;
	for (unsigned int i = 0; i < n; i++) {
		cw[i] = fwin_new((uint16_t)i, 65536, recv_size, flags);
		cw[i]->w->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	}
}

void cenv_fini(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		fwin_free(cw[i]);
		cw[i] = NULL;
	}
	H.hubs = false;
}

struct percs_addr *caddrs(unsigned int n)
{
	static struct percs_addr a[NWIN];

	for (unsigned int i = 0; i < n; i++)
		a[i] = cw[i]->addr;
	return a;
}

/* A k-ary tree over the first @n windows, created by 0, joined by all. */
int ctrees(unsigned int n, unsigned int flags, unsigned int fanout,
	   unsigned int root)
{
	struct percs_cau_member m[NWIN];
	int ret = percs_cau_shape_kary(caddrs(n), n, root, fanout, NULL, m);

	if (ret)
		return ret;
	ret = percs_cau_tree_create(cw[0]->w, m, n, flags, &ct[0]);
	for (unsigned int i = 1; i < n && !ret; i++)
		ret = percs_cau_tree_join(cw[i]->w, percs_cau_tree_id(ct[0]),
					  m, n, flags, &ct[i]);
	return ret;
}

/* Test every request until all are done; their statuses in @st. */
bool run_reqs(struct percs_coll_req **req, unsigned int n, int *st)
{
	unsigned int left = n;

	for (unsigned long iter = 0; left && iter < 2000000; iter++) {
		left = 0;
		for (unsigned int i = 0; i < n; i++) {
			int r;

			if (!req[i])
				continue;
			r = percs_coll_test(req[i]);
			if (r == -EINPROGRESS) {
				left++;
				continue;
			}
			st[i] = r;
			CHECK_EQ(percs_coll_req_free(req[i]), 0);
			req[i] = NULL;
		}
	}
	return left == 0;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* @count elements of @type for rank @rank, seed @seed; floats are finite. */
void cfill(void *buf, size_t count, unsigned int type, unsigned int rank,
	   uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + rank * 7919 + 1;

	for (size_t i = 0; i < count; i++) {
		uint64_t v = rng(&s);

		switch (type) {
		case PERCS_CAU_T_F32: {
			float f = (float)((int64_t)(v % 2000001) - 1000000) / 1024.0f;

			memcpy((uint8_t *)buf + i * 4, &f, 4);
			break;
		}
		case PERCS_CAU_T_F64: {
			double d = (double)((int64_t)(v % 2000001) - 1000000) / 3.0;

			memcpy((uint8_t *)buf + i * 8, &d, 8);
			break;
		}
		default:
			memcpy((uint8_t *)buf + i * fm_cau_elem_size(type), &v,
			       fm_cau_elem_size(type));
		}
	}
}

/* The reference: every rank's vector combined in rank order. */
void cref(void *out, size_t count, unsigned int type, unsigned int op,
	  unsigned int n, uint64_t seed)
{
	size_t bytes = count * fm_cau_elem_size(type);
	uint8_t *in = malloc(bytes + 1);

	cfill(out, count, type, 0, seed);
	for (unsigned int r = 1; r < n; r++) {
		cfill(in, count, type, r, seed);
		CHECK_EQ(percs_coll_combine(op, type, count, out, in), 0);
	}
	free(in);
}

/* Float results within a relative tolerance of the reference. */
bool close_enough(const void *a, const void *b, size_t count,
		  unsigned int type)
{
	for (size_t i = 0; i < count; i++) {
		double x, y;

		if (type == PERCS_CAU_T_F32) {
			float fx, fy;

			memcpy(&fx, (const uint8_t *)a + i * 4, 4);
			memcpy(&fy, (const uint8_t *)b + i * 4, 4);
			x = fx, y = fy;
		} else {
			memcpy(&x, (const uint8_t *)a + i * 8, 8);
			memcpy(&y, (const uint8_t *)b + i * 8, 8);
		}
		if (x != y && __builtin_fabs(x - y) >
		    1e-4 * (__builtin_fabs(x) + __builtin_fabs(y)) + 1e-3)
			return false;
	}
	return true;
}

/* Every op x type pair the CAU has. */
bool op_type_next(unsigned int *op, unsigned int *type)
{
	do {
		if (++*op > PERCS_CAU_OP_LAST) {
			*op = 0;
			if (++*type > PERCS_CAU_T_LAST)
				return false;
		}
	} while (fm_cau_check(*op, *type, 0));
	return true;
}

/* Height of a complete @k-ary heap of @n nodes. */
unsigned int heap_height(unsigned int n, unsigned int k)
{
	unsigned int h = 0;
	uint64_t level = 1, total = 1;

	while (total < n) {
		level *= k;
		total += level;
		h++;
	}
	return h;
}
