// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs unit tests: collectives - included by lib-unit.c, whose fake
 * HFI it extends with a fake CAU.
 *
 * The fake CAU executes PERCS_PKT_COLL descriptors from the send FIFOs of
 * fake windows as the kernel does (checks, a member's n-th descriptor is
 * operation n, at most 16 operations a member has not seen finish - the
 * 17th waits in the send FIFO -, results written into the members' receive
 * FIFOs, held back while they are full, -EINVAL when members disagree), but
 * combines every operation in member order with the firmware model's ALU.
 * Multicasts (PERCS_COLL_MCAST) as the kernel's: numbered per origin from
 * 1, written into every other member's receive FIFO in the origin's order
 * (held while a FIFO is full, and then every later one to that member
 * too), at most FC_MC_BUFS of an origin not yet everywhere - the next one
 * waits in its send FIFO, and the origin's engine runs again when one
 * finishes, as the kernel wakes it.
 * Its tree ioctls (CREATE, JOIN, DESTROY) answer on fake window fds
 * (/dev/null fds, one per window); DESTROY posts -ECONNRESET entries to the
 * other members.  Knobs hold results back, release them newest first, and
 * give an operation an error status.
 *
 * The software collectives run N ranks on N fake windows in one thread:
 * every rank starts its non-blocking collective, then the test calls
 * percs_coll_test() on each in turn; in kick mode each trigger moves the
 * packets into the destination's receive FIFO at once.  One test runs them
 * as threads with blocking calls through the polling engine thread.
 */
#include <sys/ioctl.h>

#include "firmware-model/cau.h"	/* the reference ALU */

#define FC_TREES	8
#define FC_RING		64
#define FC_MC_BUFS	4	/* an origin's multicasts not yet everywhere */
#define FC_MC		(NWIN * FC_MC_BUFS)

/* A multicast on its way to the members. */
struct fc_mc {
	uint64_t stamp;		/* post order in the tree, 0: free */
	uint64_t seq;		/* the origin's n-th */
	unsigned int origin;
	uint32_t tag;
	uint32_t wants;		/* members still to get it */
	uint8_t type, count;
	uint8_t data[PERCS_CAU_PAYLOAD];
};

struct fc_op {
	uint64_t seq;
	uint32_t have;		/* members whose input is in */
	uint32_t wants;		/* members that get a result packet */
	uint32_t delivered;	/* of those, written */
	uint8_t coll, op, type, count;
	int status;
	bool fired;
	uint32_t tag[NWIN];
	uint8_t in[NWIN][PERCS_CAU_PAYLOAD];
	uint8_t res[PERCS_CAU_PAYLOAD];
};

struct fc_tree {
	uint32_t id;
	bool live;
	uint32_t flags;
	unsigned int nr;
	struct percs_cau_member m[NWIN];
	bool joined[NWIN];
	uint64_t posted[NWIN];	/* descriptors accepted */
	uint64_t done[NWIN];	/* operations finished for the member */
	unsigned int peak[NWIN];	/* most unfinished at once */
	struct fc_op ops[FC_RING];
	uint64_t mc_posted[NWIN];	/* multicasts of each origin */
	unsigned int mc_busy[NWIN];	/* of those, not yet everywhere */
	bool mc_waiting[NWIN];	/* a multicast waits in its send FIFO */
	uint64_t mc_stamp;
	struct fc_mc mc[FC_MC];
};

static struct {
	struct fc_tree t[FC_TREES];
	uint32_t next_id;
	bool hold;		/* results are not written */
	bool reverse;		/* written newest first */
	uint64_t fail_seq;	/* this operation gets fail_status */
	int fail_status;
	unsigned int descs;	/* descriptors accepted */
	unsigned int bad;	/* descriptors refused */
	unsigned int busy;	/* times a descriptor waited for its slot */
	unsigned int mc_busy;	/* times a multicast waited for a buffer */
	unsigned int mc_delivered;
	struct percs_coll_ext last;
} FC = { .next_id = 100 };

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
static void fc_pump(void)
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

static int fake_coll(struct fwin *f, const struct percs_pkt_hdr *h)
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

static int fake_cau_ioctl(int fd, unsigned long req, unsigned long arg)
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

static struct fwin *cw[NWIN];
static struct percs_cau_tree *ct[NWIN];

/* @n windows on hubs 0 .. n-1, each with a fd of its own. */
static void cenv_init(unsigned int n, uint32_t flags, uint32_t recv_size)
{
	H.hubs = true;
	memset(&FC, 0, sizeof(FC));
	FC.next_id = 100;
	for (unsigned int i = 0; i < n; i++) {
		cw[i] = fwin_new((uint16_t)i, 65536, recv_size, flags);
		cw[i]->w->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	}
}

static void cenv_fini(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		fwin_free(cw[i]);
		cw[i] = NULL;
	}
	H.hubs = false;
}

static struct percs_addr *caddrs(unsigned int n)
{
	static struct percs_addr a[NWIN];

	for (unsigned int i = 0; i < n; i++)
		a[i] = cw[i]->addr;
	return a;
}

/* A k-ary tree over the first @n windows, created by 0, joined by all. */
static int ctrees(unsigned int n, unsigned int flags, unsigned int fanout,
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
static bool run_reqs(struct percs_coll_req **req, unsigned int n, int *st)
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
static void cfill(void *buf, size_t count, unsigned int type, unsigned int rank,
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
static void cref(void *out, size_t count, unsigned int type, unsigned int op,
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
static bool close_enough(const void *a, const void *b, size_t count,
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
static bool op_type_next(unsigned int *op, unsigned int *type)
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
static unsigned int heap_height(unsigned int n, unsigned int k)
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

/* ---- tests: shapes ------------------------------------------------------------ */

/*
 * The default shape: one root, every other member one parent, fan-out
 * within bounds, supernodes kept together (one crossing edge each), depth
 * of the two heaps, for many sizes, fan-outs, roots and supernode sizes.
 */
static void test_cau_shape_kary(void)
{
	static struct percs_addr a[PERCS_CAU_MAX_MEMBERS];
	static struct percs_cau_member m[PERCS_CAU_MAX_MEMBERS];
	static const unsigned int nrs[] = { 1, 2, 3, 5, 8, 9, 17, 64, 65, 100,
					    513, 1024 };
	static const unsigned int fans[] = { 0, 1, 2, 3, 4, 8, 32 };
	static const unsigned int hpss[] = { 0, 1, 4, 32 };
	unsigned int kids[PERCS_CAU_MAX_MEMBERS];

	for (unsigned int i = 0; i < PERCS_CAU_MAX_MEMBERS; i++)
		a[i] = (struct percs_addr){ .hub = (i * 7919) % 2048,
					    .hfi = i & 1, .window = i % 5 };
	for (unsigned int hi = 0; hi < 4; hi++)
	for (unsigned int ni = 0; ni < sizeof(nrs) / sizeof(nrs[0]); ni++)
	for (unsigned int fi = 0; fi < sizeof(fans) / sizeof(fans[0]); fi++) {
		struct percs_hfi_info topo = { .hubs_per_supernode = hpss[hi] };
		unsigned int nr = nrs[ni], hps = hpss[hi];
		unsigned int k = fans[fi] ? fans[fi] : PERCS_CAU_DEF_FANOUT;
		unsigned int roots[3] = { 0, nr / 2, nr - 1 };

		if (k == 1 && nr > 100)
			continue;	/* a chain: fine, but slow to check */
		for (unsigned int ri = 0; ri < 3; ri++) {
			unsigned int root = roots[ri], nroot = 0, cross = 0;
			unsigned int nsn = 0, biggest = 0;
			static unsigned int sncount[2048];
			int depth;

			REQUIRE(percs_cau_shape_kary(a, nr, root, fans[fi],
						     hps ? &topo : NULL, m) == 0);
			depth = percs_cau_shape_check(m, nr);
			CHECK(depth >= 0);
			memset(kids, 0, sizeof(kids));
			memset(sncount, 0, sizeof(sncount));
			for (unsigned int i = 0; i < nr; i++) {
				unsigned int sn = hps ? a[i].hub / hps : 0;

				CHECK(!memcmp(&m[i].win, &a[i], sizeof(a[i])));
				CHECK_EQ(m[i].reserved, 0);
				if (!sncount[sn]++)
					nsn++;
				if (sncount[sn] > biggest)
					biggest = sncount[sn];
				if (m[i].parent == PERCS_CAU_ROOT) {
					nroot++;
					CHECK_EQ(i, root);
					continue;
				}
				REQUIRE(m[i].parent < nr);
				kids[m[i].parent]++;
				if (hps && a[m[i].parent].hub / hps !=
				    a[i].hub / hps)
					cross++;
			}
			CHECK_EQ(nroot, 1);
			for (unsigned int i = 0; i < nr; i++)
				CHECK(kids[i] <= 2 * k &&
				      kids[i] <= PERCS_CAU_MAX_CHILDREN);
			/* A subtree leaves its supernode once: at its head. */
			if (hps)
				CHECK_EQ(cross, nsn - 1);
			CHECK(depth <= (int)(heap_height(biggest, k) +
					     heap_height(nsn, k)));
		}
	}
	/* The same arguments, the same shape (every member builds it). */
	{
		static struct percs_cau_member m2[PERCS_CAU_MAX_MEMBERS];
		struct percs_hfi_info topo = { .hubs_per_supernode = 32 };

		CHECK_EQ(percs_cau_shape_kary(a, 700, 5, 6, &topo, m), 0);
		CHECK_EQ(percs_cau_shape_kary(a, 700, 5, 6, &topo, m2), 0);
		CHECK(!memcmp(m, m2, 700 * sizeof(m[0])));
	}
	/* Errors. */
	CHECK_EQ(percs_cau_shape_kary(NULL, 4, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 0, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 1025, 0, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 4, 0, NULL, m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, PERCS_CAU_MAX_FANOUT + 1, NULL,
				      m), -EINVAL);
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, PERCS_CAU_MAX_FANOUT, NULL, m),
		 0);
	a[3].hub = a[1].hub;
	CHECK_EQ(percs_cau_shape_kary(a, 4, 0, 0, NULL, m), -EEXIST);
}

/* Explicit shapes and the checks, in the kernel's order. */
static void test_cau_shape_explicit(void)
{
	struct percs_addr a[80];
	struct percs_cau_member m[80];
	uint32_t p[80];

	for (unsigned int i = 0; i < 80; i++)
		a[i] = (struct percs_addr){ .hub = i, .window = 3 };
	/* A chain 0 <- 1 <- 2 <- 3 <- 4 rooted at 0: depth 4. */
	p[0] = PERCS_CAU_ROOT;
	for (unsigned int i = 1; i < 5; i++)
		p[i] = i - 1;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	CHECK_EQ(percs_cau_shape_check(m, 5), 4);
	CHECK_EQ(m[3].parent, 2);
	CHECK_EQ(m[0].parent, PERCS_CAU_ROOT);
	/* Root at the end, a star: depth 1. */
	for (unsigned int i = 0; i < 5; i++)
		p[i] = 4;
	p[4] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	CHECK_EQ(percs_cau_shape_check(m, 5), 1);
	CHECK_EQ(percs_cau_shape_check(m, 1), -EINVAL);	/* no root */
	p[0] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -EINVAL);	/* two */
	p[0] = 5;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -EINVAL);	/* range */
	p[0] = 1;
	p[1] = 2;
	p[2] = 0;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), -ELOOP);
	p[0] = p[1] = p[2] = 4;
	CHECK_EQ(percs_cau_shape_parents(a, p, 5, m), 0);
	m[2].reserved = 1;
	CHECK_EQ(percs_cau_shape_check(m, 5), -EINVAL);
	m[2].reserved = 0;
	m[2].win.reserved = 1;
	CHECK_EQ(percs_cau_shape_check(m, 5), -EINVAL);
	/* 65 children: -EMLINK; 64: fine. */
	for (unsigned int i = 0; i < 80; i++)
		p[i] = 0;
	p[0] = PERCS_CAU_ROOT;
	CHECK_EQ(percs_cau_shape_parents(a, p, 66, m), -EMLINK);
	CHECK_EQ(percs_cau_shape_parents(a, p, 65, m), 0);
	/* Two members on one hub, found after the shape. */
	a[7].hub = 2;
	CHECK_EQ(percs_cau_shape_parents(a, p, 10, m), -EEXIST);
	CHECK_EQ(percs_cau_shape_check(m, 0), -EINVAL);
	CHECK_EQ(percs_cau_shape_check(NULL, 3), -EINVAL);
	CHECK_EQ(percs_cau_shape_parents(NULL, p, 3, m), -EINVAL);
}

/* ---- tests: CAU collectives ------------------------------------------------- */

/*
 * Allreduce of every op x type and many lengths on 5 members: results as
 * the CAU computes (the fake combines in member order: exact for floats
 * too), chunks of 64 bytes, at most 16 in flight, the 16 reached.
 */
static void test_cau_allreduce(void)
{
	static const size_t counts[] = { 0, 1, 7, 8, 16, 17, 100, 1000 };
	const unsigned int n = 5;
	unsigned int op = 0, type = 0;
	uint8_t *in[NWIN], *out[NWIN], *ref;
	struct percs_coll_req *req[NWIN];
	uint64_t seed = 1, ops = 0;
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, PERCS_CAU_F_ORDERED, 2, 0) == 0);
	CHECK_EQ(FC.t[0].flags, PERCS_CAU_F_ORDERED);
	ref = malloc(8001);
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(8001);
		out[i] = malloc(8001);
	}
	do {
		for (unsigned int c = 0; c < sizeof(counts) / sizeof(counts[0]);
		     c++, seed++) {
			size_t cnt = counts[c], esz = percs_coll_type_size(type);

			if (cnt == 1000 && !(op == PERCS_CAU_OP_SUM &&
					     type == PERCS_CAU_T_F64) &&
			    !(op == PERCS_CAU_OP_XOR && type == PERCS_CAU_T_U32))
				continue;
			cref(ref, cnt, type, op, n, seed);
			for (unsigned int i = 0; i < n; i++) {
				cfill(in[i], cnt, type, i, seed);
				memset(out[i], 0xa5, 8001);
				REQUIRE(percs_cau_iallreduce(ct[i], in[i],
					out[i], cnt, type, op, &req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++) {
				CHECK_EQ(st[i], 0);
				if (memcmp(out[i], ref, cnt * esz))
					t_fail(__FILE__, __LINE__,
					       "%s %s count %zu member %u differs",
					       fm_cau_op_name(op),
					       fm_cau_type_name(type), cnt, i);
				CHECK_EQ(out[i][cnt * esz], 0xa5);
			}
			ops += (cnt * esz + 63) / 64;
		}
	} while (op_type_next(&op, &type));
	for (unsigned int i = 0; i < n; i++) {
		struct percs_cau_tree_info info;

		CHECK_EQ(percs_cau_tree_query(ct[i], &info), 0);
		CHECK_EQ(info.ops, ops);
		CHECK_EQ(info.me, i);
		CHECK_EQ(info.root, 0);
		CHECK_EQ(info.nr_members, n);
		CHECK_EQ(info.running, 0);
		CHECK_EQ(info.status, 0);
		CHECK_EQ(FC.t[0].peak[i], PERCS_CAU_MAX_INFLIGHT);
	}
	CHECK_EQ(FC.descs, ops * n);
	CHECK_EQ(FC.busy, 0);	/* never a 17th: the library waits first */
	CHECK_EQ(FC.bad, 0);
	CHECK_EQ(H.violations, 0);
	/* In place, blocking on one member once the others have posted. */
	for (unsigned int i = 1; i < n; i++) {
		cfill(in[i], 50, PERCS_CAU_T_S64, i, 99);
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], in[i], 50,
					     PERCS_CAU_T_S64, PERCS_CAU_OP_MIN,
					     &req[i]) == 0);
	}
	cfill(in[0], 50, PERCS_CAU_T_S64, 0, 99);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], in[0], 50, PERCS_CAU_T_S64,
				     PERCS_CAU_OP_MIN), 0);
	req[0] = NULL;
	REQUIRE(run_reqs(req, n, st));
	cref(ref, 50, PERCS_CAU_T_S64, PERCS_CAU_OP_MIN, n, 99);
	for (unsigned int i = 0; i < n; i++)
		CHECK(!memcmp(in[i], ref, 50 * 8));
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(percs_cau_tree_destroy(ct[i]), 0);
		free(in[i]);
		free(out[i]);
	}
	free(ref);
	cenv_fini(n);
}

/*
 * Results held back: each member has exactly 16 operations waiting, none
 * more; then written newest first: matched by seq, not by order.
 */
static void test_cau_seq_matching(void)
{
	const unsigned int n = 4, cnt = 1000;
	struct percs_coll_req *req[NWIN];
	double *in[NWIN], *out[NWIN], ref[1000];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 1) == 0);
	FC.hold = true;
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(cnt * 8);
		out[i] = calloc(cnt, 8);
		cfill(in[i], cnt, PERCS_CAU_T_F64, i, 5);
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], cnt,
					     PERCS_CAU_T_F64, PERCS_CAU_OP_MAX,
					     &req[i]) == 0);
	}
	for (unsigned int k = 0; k < 100; k++)
		for (unsigned int i = 0; i < n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(FC.t[0].posted[i], PERCS_CAU_MAX_INFLIGHT);
		CHECK_EQ(ct[i]->posted, PERCS_CAU_MAX_INFLIGHT);
	}
	FC.reverse = true;
	FC.hold = false;
	fc_pump();
	REQUIRE(run_reqs(req, n, st));
	cref(ref, cnt, PERCS_CAU_T_F64, PERCS_CAU_OP_MAX, n, 5);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], 0);
		CHECK(!memcmp(out[i], ref, sizeof(ref)));
		CHECK_EQ(FC.t[0].posted[i], 125);
		free(in[i]);
		free(out[i]);
	}
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * The receive FIFO is shared: the application's packets, and results of
 * a tree the library does not know, met while the library waits, come
 * back from percs_recv() and percs_recv_peek() in order; the library's
 * own results never do.  The same for completion entries.
 */
static void test_cau_recv_stash(void)
{
	const unsigned int n = 3;
	struct percs_addr nowhere = { .hub = 9, .window = 9 };
	struct percs_coll_req *req[NWIN];
	struct percs_cau_member m[2];
	struct percs_cau_create cr = { .size = sizeof(cr) };
	struct percs_cau_tree_op jo = { .size = sizeof(jo) };
	struct percs_pkt_hdr h;
	const struct percs_pkt_hdr *ph;
	uint64_t v[NWIN], out[NWIN];
	uint8_t buf[256];
	struct percs_cqe c[8];
	int st[NWIN], r;

	cenv_init(n, 0, 16384);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	/* A raw tree of windows 1 and 2, outside the library. */
	m[0] = (struct percs_cau_member){ .win = cw[2]->addr,
					  .parent = PERCS_CAU_ROOT };
	m[1] = (struct percs_cau_member){ .win = cw[1]->addr, .parent = 0 };
	cr.nr_members = 2;
	cr.members = (uintptr_t)m;
	REQUIRE(ioctl(cw[2]->w->fd, PERCS_IOC_CAU_CREATE, &cr) == 0);
	jo.tree = cr.tree;
	REQUIRE(ioctl(cw[1]->w->fd, PERCS_IOC_CAU_JOIN, &jo) == 0);

	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "one", 3, 1, 0), 0);
	CHECK_EQ(percs_send(cw[1]->w, &nowhere, NULL, 0, 901, 0), 0);
	for (unsigned int i = 0; i < n; i++) {
		v[i] = i + 1;
		REQUIRE(percs_cau_iallreduce(ct[i], &v[i], &out[i], 1,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	}
	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "two", 3, 2, 0), 0);
	{
		/* A raw descriptor on the raw tree, from both members. */
		uint8_t d[PERCS_COLL_EXT_SIZE + 8] = { 0 };
		struct percs_coll_ext e = {
			.tree = cr.tree, .coll = PERCS_COLL_ALLREDUCE,
			.op = PERCS_CAU_OP_SUM, .type = PERCS_CAU_T_U64,
			.count = 1,
		};
		struct percs_pkt_hdr rh = { .kind = PERCS_PKT_COLL, .tag = 3 };

		memcpy(d, &e, sizeof(e));
		d[sizeof(e)] = 40;
		CHECK_EQ(percs_send_compose_hdr(cw[2]->w, &rh, d, sizeof(d)), 0);
		CHECK_EQ(percs_send_trigger(cw[2]->w), 0);
		d[sizeof(e)] = 2;
		CHECK_EQ(percs_send_compose_hdr(cw[1]->w, &rh, d, sizeof(d)), 0);
		CHECK_EQ(percs_send_trigger(cw[1]->w), 0);
	}
	CHECK_EQ(percs_send(cw[1]->w, &nowhere, NULL, 0, 902, 0), 0);
	REQUIRE(run_reqs(req, n, st));
	CHECK_EQ(percs_send(cw[2]->w, &cw[1]->addr, "four", 4, 4, 0), 0);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], 0);
		CHECK_EQ(out[i], 6);
	}
	CHECK(cw[1]->w->rstash.count >= 2);
	/* In order: one, two, the raw tree's result (tag 3), four. */
	ph = percs_recv_peek(cw[1]->w);
	REQUIRE(ph);
	CHECK_EQ(ph->tag, 1);
	CHECK_EQ(ph->kind, PERCS_PKT_FIFO);
	CHECK(!memcmp(ph + 1, "one", 3));
	percs_recv_consume(cw[1]->w);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, 2), -EMSGSIZE);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), 3);
	CHECK_EQ(h.tag, 2);
	CHECK(!memcmp(buf, "two", 3));
	r = percs_recv(cw[1]->w, &h, buf, sizeof(buf));
	CHECK_EQ(r, PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD);
	CHECK_EQ(h.kind, PERCS_PKT_COLL);
	CHECK_EQ(h.tag, 3);
	CHECK_EQ(buf[PERCS_COLL_EXT_SIZE], 42);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), 4);
	CHECK_EQ(h.tag, 4);
	CHECK_EQ(percs_recv(cw[1]->w, &h, buf, sizeof(buf)), -EAGAIN);
	CHECK_EQ(cw[1]->w->rstash.count, 0);
	/* The CQ: the application's two entries, in order, nothing else. */
	CHECK_EQ(percs_cq_poll(cw[1]->w, c, 8), 2);
	CHECK_EQ(c[0].user_data, 901);
	CHECK_EQ(c[1].user_data, 902);
	/* Window 2's own result of the raw tree; then nothing anywhere. */
	CHECK_EQ(percs_recv(cw[2]->w, &h, buf, sizeof(buf)),
		 PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD);
	CHECK_EQ(h.tag, 3);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(percs_recv(cw[i]->w, &h, buf, sizeof(buf)), -EAGAIN);
		CHECK_EQ(cw[i]->db->recv_head, cw[i]->st->recv_tail);
	}
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * Errors: an operation's status (the other chunks' results still land);
 * members that disagree; a tree ended by a member (-ECONNRESET for the
 * running requests and every later call), also when the application took
 * the end's completion entry itself (the 20 ms probe); a descriptor's
 * error; -EBUSY for running requests; bad arguments.
 */
static void test_cau_errors(void)
{
	const unsigned int n = 3;
	struct percs_coll_req *req[NWIN];
	uint64_t in[NWIN][40], out[NWIN][40], ref[40];
	struct percs_cau_tree_info info;
	struct percs_cqe c[4];
	uint64_t t0;
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	/* Operation 3 (of 5) fails: everyone gets -EINVAL, 4 chunks land. */
	FC.fail_seq = 3;
	FC.fail_status = -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		cfill(in[i], 40, PERCS_CAU_T_U64, i, 7);
		memset(out[i], 0, sizeof(out[i]));
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 40,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	}
	REQUIRE(run_reqs(req, n, st));
	cref(ref, 40, PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, n, 7);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[i], -EINVAL);
		CHECK(!memcmp(out[i], ref, 16 * 8));
		CHECK(!memcmp(out[i] + 24, ref + 24, 16 * 8));
		CHECK_EQ(out[i][16], 0);
	}
	FC.fail_seq = 0;
	/* Disagreeing members (MAX against SUM): -EINVAL, and go on. */
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 2,
					     PERCS_CAU_T_U64,
					     i ? PERCS_CAU_OP_SUM : PERCS_CAU_OP_MAX,
					     &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], -EINVAL);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);

	/* Bad arguments: nothing posted. */
	CHECK_EQ(percs_cau_allreduce(NULL, in[0], out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1,
				     PERCS_CAU_T_F64, PERCS_CAU_OP_XOR), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1,
				     PERCS_CAU_T_U32, PERCS_CAU_OP_PROD), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1, 6, 1), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], in[0], out[0], 1, 0, 8), -EINVAL);
	CHECK_EQ(percs_cau_allreduce(ct[0], NULL, out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_cau_iallreduce(ct[0], in[0], out[0], 1, 0, 1, NULL),
		 -EINVAL);
	CHECK_EQ(percs_cau_bcast(ct[0], n, out[0], 8), -EINVAL);
	CHECK_EQ(percs_cau_ibarrier(ct[0], NULL), -EINVAL);
	CHECK_EQ(percs_coll_test(NULL), -EINVAL);
	CHECK_EQ(percs_coll_wait(NULL, 0), -EINVAL);
	CHECK_EQ(percs_coll_req_free(NULL), 0);
	CHECK_EQ(percs_cau_tree_query(ct[0], &info), 0);
	CHECK_EQ(info.ops, 5 + 1 + 1);

	/* Member 0 never posts; 1 and 2 wait; 0 ends the tree. */
	for (unsigned int i = 1; i < n; i++)
		REQUIRE(percs_cau_iallreduce(ct[i], in[i], out[i], 3,
					     PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					     &req[i]) == 0);
	CHECK_EQ(percs_coll_wait(req[1], 5), -EINPROGRESS);
	CHECK_EQ(percs_coll_req_free(req[1]), -EBUSY);
	/* The application takes member 2's end entry itself. */
	CHECK_EQ(percs_cau_tree_destroy(ct[0]), 0);
	CHECK_EQ(percs_cq_poll(cw[2]->w, c, 4), 1);
	CHECK_EQ(c[0].res, -ECONNRESET);
	CHECK_EQ(c[0].kind, PERCS_PKT_COLL);
	CHECK_EQ(c[0].user_data, FC.t[0].id);
	CHECK_EQ(percs_coll_wait(req[1], 1000), -ECONNRESET);
	t0 = lp_now_ns();
	CHECK_EQ(percs_coll_wait(req[2], 2000), -ECONNRESET);
	CHECK(lp_now_ns() - t0 < 1000000000ULL);
	CHECK(lp_now_ns() - t0 >= 15000000ULL);	/* found by the probe */
	for (unsigned int i = 1; i < n; i++) {
		CHECK_EQ(percs_coll_req_free(req[i]), 0);
		CHECK_EQ(percs_cau_barrier(ct[i]), -ECONNRESET);
		CHECK_EQ(percs_cau_ibarrier(ct[i], &req[i]), -ECONNRESET);
		CHECK_EQ(percs_cau_tree_query(ct[i], &info), 0);
		CHECK_EQ(info.status, -ECONNRESET);
		CHECK_EQ(percs_cau_tree_destroy(ct[i]), 0);	/* ended */
	}

	/* A descriptor refused by the CAU (member 1 not joined any more). */
	REQUIRE(ctrees(2, 0, 0, 0) == 0);
	FC.t[1].joined[1] = false;
	REQUIRE(percs_cau_iallreduce(ct[1], in[1], out[1], 1, PERCS_CAU_T_U64,
				     PERCS_CAU_OP_SUM, &req[1]) == 0);
	CHECK_EQ(percs_coll_wait(req[1], 1000), -EPERM);
	CHECK_EQ(percs_coll_req_free(req[1]), 0);
	REQUIRE(percs_cau_iallreduce(ct[0], in[0], out[0], 1, PERCS_CAU_T_U64,
				     PERCS_CAU_OP_SUM, &req[0]) == 0);
	CHECK_EQ(percs_coll_wait(req[0], 1), -EINPROGRESS);
	/* Destroying ends this member's running requests too. */
	CHECK_EQ(percs_cau_tree_destroy(ct[0]), 0);
	CHECK_EQ(percs_coll_test(req[0]), -ECONNRESET);
	CHECK_EQ(percs_coll_req_free(req[0]), 0);
	/* The end's entry that came meanwhile is taken at the destroy. */
	CHECK_EQ(percs_cau_tree_destroy(ct[1]), 0);
	CHECK_EQ(percs_cq_poll(cw[1]->w, c, 4), 0);
	/* Not a member; bad flags; no such tree; joined twice. */
	{
		struct percs_cau_member m[2];
		struct percs_cau_tree *t;

		CHECK_EQ(percs_cau_shape_kary(caddrs(2), 2, 0, 0, NULL, m), 0);
		CHECK_EQ(percs_cau_tree_create(cw[2]->w, m, 2, 0, &t), -EPERM);
		CHECK_EQ(percs_cau_tree_create(cw[0]->w, m, 2, 2, &t), -EINVAL);
		CHECK_EQ(percs_cau_tree_join(cw[1]->w, 12345, m, 2, 0, &t),
			 -ENOENT);
		REQUIRE(percs_cau_tree_create(cw[0]->w, m, 2, 0, &t) == 0);
		CHECK_EQ(percs_cau_tree_join(cw[0]->w, percs_cau_tree_id(t), m,
					     2, 0, &ct[0]), -EALREADY);
		CHECK_EQ(cw[0]->w->coll->nr_trees, 1);
	}
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);	/* the release frees the tree left */
}

/*
 * Reduce: the result at the root only; the others are done once posted;
 * an error that comes for them later is the next call's.
 */
static void test_cau_reduce(void)
{
	const unsigned int n = 5, root = 2, cnt = 100;
	struct percs_coll_req *req[NWIN];
	uint32_t in[NWIN][100], out[NWIN][100], ref[100];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 3, root) == 0);
	CHECK_EQ(ct[0]->root, root);
	for (unsigned int i = 0; i < n; i++) {
		cfill(in[i], cnt, PERCS_CAU_T_U32, i, 11);
		memset(out[i], 0, sizeof(out[i]));
	}
	/* The non-roots finish before the root has posted anything. */
	for (unsigned int i = 0; i < n; i++)
		if (i != root) {
			REQUIRE(percs_cau_ireduce(ct[i], in[i],
						  i == 1 ? NULL : out[i], cnt,
						  PERCS_CAU_T_U32,
						  PERCS_CAU_OP_SUM, &req[i]) == 0);
			CHECK_EQ(percs_coll_test(req[i]), 0);
			CHECK_EQ(percs_coll_req_free(req[i]), 0);
		}
	CHECK_EQ(percs_cau_reduce(ct[root], in[root], out[root], cnt,
				  PERCS_CAU_T_U32, PERCS_CAU_OP_SUM), 0);
	cref(ref, cnt, PERCS_CAU_T_U32, PERCS_CAU_OP_SUM, n, 11);
	CHECK(!memcmp(out[root], ref, sizeof(ref)));
	CHECK_EQ(out[0][0], 0);
	/* Operation 8 (the reduce's second chunk) fails. */
	FC.fail_seq = 8;
	FC.fail_status = -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ireduce(ct[i], in[i], out[i], 32,
					  PERCS_CAU_T_U32, PERCS_CAU_OP_SUM,
					  &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], i == root ? -EINVAL : 0);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], i == root ? 0 : -EINVAL);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_cau_ibarrier(ct[i], &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/*
 * Bcast on the CAU's multicast: any length (1000 bytes: 16 multicasts, more
 * than an origin has buffers, so some wait in its send FIFO), any origin;
 * the origin's bytes and nothing beyond.  Then multicasts that come before
 * their call: roots 0 and 3 start both of their calls at once and finish
 * them before members 1 and 2 start; member 1 meets root 0's multicasts
 * while in its first call (the second is complete as soon as it starts),
 * and member 2 never makes the second call (what it kept is freed with
 * the tree).
 */
static void test_cau_bcast(void)
{
	static const size_t lens[] = { 0, 1, 7, 8, 63, 64, 65, 200, 1000 };
	const unsigned int n = 4;
	struct percs_coll_req *req[NWIN], *req2[NWIN];
	uint8_t buf[NWIN][1001], b2[NWIN][300];
	int st[NWIN];

	cenv_init(n, 0, 65536);
	REQUIRE(ctrees(n, 0, 0, 0) == 0);
	for (unsigned int li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
	for (unsigned int root = 0; root < n; root += n - 1) {
		size_t len = lens[li];

		for (unsigned int i = 0; i < n; i++) {
			if (i == root)
				fill(buf[i], sizeof(buf[i]), (uint32_t)len);
			else
				memset(buf[i], 0x5a, sizeof(buf[i]));
			REQUIRE(percs_cau_ibcast(ct[i], root, buf[i], len,
						 &req[i]) == 0);
		}
		REQUIRE(run_reqs(req, n, st));
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(st[i], 0);
			CHECK(pattern_ok(buf[i], len, (uint32_t)len));
			if (i != root)
				CHECK_EQ(buf[i][len], 0x5a);
		}
		CHECK(!len || (FC.last.coll == PERCS_COLL_MCAST &&
			       FC.last.op == PERCS_CAU_OP_NOP));
	}
	CHECK(FC.mc_busy > 0);
	/* Nothing but multicasts was posted: no operation numbers taken. */
	CHECK_EQ(ct[0]->posted, 0);

	/* Early multicasts, delivered origin by origin, newest origin first. */
	FC.reverse = true;
	for (unsigned int i = 0; i < n; i++) {
		memset(buf[i], 0x5a, sizeof(buf[i]));
		memset(b2[i], 0x5a, sizeof(b2[i]));
	}
	fill(buf[3], 300, 3);
	fill(b2[0], 200, 4);
	for (unsigned int i = 0; i < n; i += n - 1) {
		REQUIRE(percs_cau_ibcast(ct[i], 3, buf[i], 300, &req[i]) == 0);
		REQUIRE(percs_cau_ibcast(ct[i], 0, b2[i], 200, &req2[i]) == 0);
	}
	req[1] = req[2] = req2[1] = req2[2] = NULL;
	REQUIRE(run_reqs(req2, n, st));
	REQUIRE(run_reqs(req, n, st));
	CHECK(pattern_ok(buf[0], 300, 3));
	CHECK(pattern_ok(b2[3], 200, 4));
	for (unsigned int i = 1; i < 3; i++)
		REQUIRE(percs_cau_ibcast(ct[i], 3, buf[i], 300, &req[i]) == 0);
	req[0] = req[3] = NULL;
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 1; i < 3; i++) {
		CHECK_EQ(st[i], 0);
		CHECK(pattern_ok(buf[i], 300, 3));
	}
	/* Member 1 kept root 0's: complete at once, nothing more read. */
	REQUIRE(percs_cau_ibcast(ct[1], 0, b2[1], 200, &req2[1]) == 0);
	CHECK(req2[1]->done);
	CHECK_EQ(percs_coll_wait(req2[1], 0), 0);
	CHECK(pattern_ok(b2[1], 200, 4));
	CHECK_EQ(b2[1][200], 0x5a);
	CHECK_EQ(percs_coll_req_free(req2[1]), 0);
	FC.reverse = false;
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);	/* member 2's kept multicasts go with its tree */
}

/*
 * Many requests started at once on every member (more operations than 16):
 * they post in the order started and complete; barriers among them.
 */
static void test_cau_many_requests(void)
{
	const unsigned int n = 6, k = 12;
	struct percs_coll_req *req[NWIN * 24];
	int64_t in[NWIN][12][20], out[NWIN][12][20], ref[20];
	int st[NWIN * 24];

	cenv_init(n, 0, 8192);
	REQUIRE(ctrees(n, 0, 2, 0) == 0);
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < k; j++) {
			cfill(in[i][j], 20, PERCS_CAU_T_S64, i, 100 + j);
			REQUIRE(percs_cau_iallreduce(ct[i], in[i][j], out[i][j],
						     20, PERCS_CAU_T_S64,
						     PERCS_CAU_OP_SUM,
						     &req[i * 24 + 2 * j]) == 0);
			REQUIRE(percs_cau_ibarrier(ct[i],
						   &req[i * 24 + 2 * j + 1]) == 0);
		}
	REQUIRE(run_reqs(req, n * 24, st));
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < k; j++) {
			cref(ref, 20, PERCS_CAU_T_S64, PERCS_CAU_OP_SUM, n,
			     100 + j);
			CHECK_EQ(st[i * 24 + 2 * j], 0);
			CHECK_EQ(st[i * 24 + 2 * j + 1], 0);
			CHECK(!memcmp(out[i][j], ref, sizeof(ref)));
		}
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/* ---- tests: software collectives ---------------------------------------------- */

static struct percs_sw_group *sg[NWIN];

static void sgroups(unsigned int n, uint16_t ctx)
{
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, ctx,
					      &sg[i]) == 0);
}

/*
 * One software allreduce on @n ranks, all started and then tested in
 * turn; integer results exact, float results the same bits on every rank
 * and close to the rank-order reference.
 */
static void sw_allreduce_once(unsigned int n, unsigned int algo, size_t cnt,
			      unsigned int type, unsigned int op,
			      uint64_t seed)
{
	size_t bytes = cnt * fm_cau_elem_size(type);
	struct percs_coll_req *req[NWIN];
	uint8_t *in[NWIN], *out[NWIN], *ref = malloc(bytes + 1);
	bool flt = type >= PERCS_CAU_T_F32;
	int st[NWIN];

	cref(ref, cnt, type, op, n, seed);
	for (unsigned int i = 0; i < n; i++) {
		in[i] = malloc(bytes + 1);
		out[i] = malloc(bytes + 1);
		cfill(in[i], cnt, type, i, seed);
		memset(out[i], 0xa5, bytes + 1);
	}
	/* Started in reverse order: early messages wait as unexpected. */
	for (unsigned int i = n; i-- > 0;)
		REQUIRE(percs_sw_iallreduce(sg[i], algo, in[i],
					    i == 1 ? in[i] : out[i], cnt, type,
					    op, &req[i]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *res = i == 1 ? in[i] : out[i];

		CHECK_EQ(st[i], 0);
		if (flt ? memcmp(res, i ? (i == 1 ? in[1] : out[i]) : out[0],
				 bytes) || memcmp(res, n > 1 ? out[0] : res,
						  bytes) ||
			  !close_enough(res, ref, cnt, type) :
			  memcmp(res, ref, bytes))
			t_fail(__FILE__, __LINE__,
			       "n %u algo %u %s %s count %zu rank %u differs",
			       n, algo, fm_cau_op_name(op),
			       fm_cau_type_name(type), cnt, i);
		if (i != 1)
			CHECK_EQ(out[i][bytes], 0xa5);
	}
	for (unsigned int i = 0; i < n; i++) {
		free(in[i]);
		free(out[i]);
	}
	free(ref);
}

/* Every algorithm, 1 to 11 ranks, short to multi-packet vectors. */
static void test_sw_allreduce(void)
{
	static const size_t counts[] = { 0, 1, 3, 64, 1000, 5000 };
	static const unsigned int algos[] = {
		PERCS_SW_BINOMIAL, PERCS_SW_RECDBL, PERCS_SW_RABENSEIFNER,
		PERCS_SW_AUTO,
	};
	static const unsigned int ot[][2] = {
		{ PERCS_CAU_OP_SUM, PERCS_CAU_T_U64 },
		{ PERCS_CAU_OP_MIN, PERCS_CAU_T_S32 },
		{ PERCS_CAU_OP_SUM, PERCS_CAU_T_F64 },
		{ PERCS_CAU_OP_PROD, PERCS_CAU_T_F32 },
	};
	uint64_t seed = 1;

	for (unsigned int n = 1; n <= 11; n++) {
		/* Small receive FIFOs: senders wait for the receivers. */
		cenv_init(n, 0, n % 2 ? 4096 : 65536);
		sgroups(n, 7);
		for (unsigned int a = 0; a < 4; a++)
			for (unsigned int c = 0; c < 6; c++)
				for (unsigned int k = 0; k < 4; k++)
					sw_allreduce_once(n, algos[a], counts[c],
							  ot[k][1], ot[k][0],
							  seed++);
		for (unsigned int i = 0; i < n; i++) {
			CHECK_EQ(percs_sw_group_destroy(sg[i]), 0);
			CHECK_EQ(cw[i]->w->rstash.count, 0);
		}
		CHECK_EQ(H.violations, 0);
		cenv_fini(n);
	}
	/* Every op x type once, on 6 ranks. */
	{
		unsigned int op = 0, type = 0;

		cenv_init(6, 0, 65536);
		sgroups(6, 8);
		do {
			for (unsigned int a = 0; a < 3; a++)
				sw_allreduce_once(6, algos[a], 300, type, op,
						  seed++);
		} while (op_type_next(&op, &type));
		cenv_fini(6);
	}
}

/* Reduce to every root, bcast from every root, barriers, on 1 to 9 ranks. */
static void test_sw_reduce_bcast_barrier(void)
{
	static const unsigned int balgos[] = {
		PERCS_SW_AUTO, PERCS_SW_DISSEMINATION, PERCS_SW_BINOMIAL,
		PERCS_SW_RECDBL,
	};
	struct percs_coll_req *req[NWIN];
	int st[NWIN];

	for (unsigned int n = 1; n <= 9; n++) {
		cenv_init(n, 0, 4096);
		sgroups(n, 3);
		for (unsigned int root = 0; root < n; root++) {
			static int32_t in[NWIN][700], out[NWIN][700];
			int32_t ref[700];
			static uint8_t buf[NWIN][3000];
			size_t len = 1 + root * 700;

			cref(ref, 700, PERCS_CAU_T_S32, PERCS_CAU_OP_MAX, n,
			     root);
			for (unsigned int i = 0; i < n; i++) {
				cfill(in[i], 700, PERCS_CAU_T_S32, i, root);
				memset(out[i], 0, sizeof(out[i]));
				REQUIRE(percs_sw_ireduce(sg[i], PERCS_SW_AUTO,
					root, in[i], i == root ? out[i] : NULL,
					700, PERCS_CAU_T_S32, PERCS_CAU_OP_MAX,
					&req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++)
				CHECK_EQ(st[i], 0);
			CHECK(!memcmp(out[root], ref, sizeof(ref)));
			for (unsigned int i = 0; i < n; i++)
				if (i != root)
					CHECK_EQ(out[i][0], 0);

			if (len > sizeof(buf[0]))
				len = sizeof(buf[0]);
			for (unsigned int i = 0; i < n; i++) {
				if (i == root)
					fill(buf[i], len, root);
				else
					memset(buf[i], 0, sizeof(buf[i]));
				REQUIRE(percs_sw_ibcast(sg[i], PERCS_SW_BINOMIAL,
							root, buf[i], len,
							&req[i]) == 0);
			}
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++) {
				CHECK_EQ(st[i], 0);
				CHECK(pattern_ok(buf[i], len, root));
			}
		}
		for (unsigned int a = 0; a < 4; a++) {
			/* Everyone but the last enters: nobody leaves. */
			for (unsigned int i = 0; i + 1 < n; i++)
				REQUIRE(percs_sw_ibarrier(sg[i], balgos[a],
							  &req[i]) == 0);
			for (unsigned int k = 0; k < 50; k++)
				for (unsigned int i = 0; i + 1 < n; i++)
					CHECK_EQ(percs_coll_test(req[i]),
						 -EINPROGRESS);
			REQUIRE(percs_sw_ibarrier(sg[n - 1], balgos[a],
						  &req[n - 1]) == 0);
			REQUIRE(run_reqs(req, n, st));
			for (unsigned int i = 0; i < n; i++)
				CHECK_EQ(st[i], 0);
		}
		CHECK_EQ(H.violations, 0);
		cenv_fini(n);
	}
}

/*
 * Several collectives in flight at once on two groups of the same windows,
 * one rank starting late (its messages pile up as unexpected); a group
 * created after its first messages were kept for percs_recv().
 */
static void test_sw_concurrent_and_late(void)
{
	const unsigned int n = 5;
	struct percs_sw_group *g2[NWIN];
	struct percs_coll_req *req[NWIN * 3];
	uint64_t in[NWIN][300], out[NWIN][300], ref[300];
	uint8_t b[NWIN][100];
	struct percs_pkt_hdr h;
	uint8_t pkt[64];
	int st[NWIN * 3];

	cenv_init(n, 0, 65536);
	sgroups(n, 1);
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, 2,
					      &g2[i]) == 0);
	for (unsigned int i = 1; i < n; i++) {
		cfill(in[i], 300, PERCS_CAU_T_U64, i, 42);
		memset(b[i], 0, sizeof(b[i]));
		REQUIRE(percs_sw_iallreduce(sg[i], PERCS_SW_RABENSEIFNER, in[i],
					    out[i], 300, PERCS_CAU_T_U64,
					    PERCS_CAU_OP_XOR, &req[3 * i]) == 0);
		REQUIRE(percs_sw_ibcast(g2[i], 0, 0, b[i], 100,
					&req[3 * i + 1]) == 0);
		REQUIRE(percs_sw_ibarrier(sg[i], PERCS_SW_AUTO,
					  &req[3 * i + 2]) == 0);
	}
	for (unsigned int k = 0; k < 100; k++)
		for (unsigned int i = 3; i < 3 * n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	/* The application's packet in the middle stays its own. */
	CHECK_EQ(percs_send(cw[3]->w, &cw[0]->addr, "app", 3, 77, 0), 0);
	cfill(in[0], 300, PERCS_CAU_T_U64, 0, 42);
	fill(b[0], 100, 9);
	REQUIRE(percs_sw_iallreduce(sg[0], PERCS_SW_RABENSEIFNER, in[0], out[0],
				    300, PERCS_CAU_T_U64, PERCS_CAU_OP_XOR,
				    &req[0]) == 0);
	REQUIRE(percs_sw_ibcast(g2[0], 0, 0, b[0], 100, &req[1]) == 0);
	REQUIRE(percs_sw_ibarrier(sg[0], PERCS_SW_AUTO, &req[2]) == 0);
	REQUIRE(run_reqs(req, 3 * n, st));
	cref(ref, 300, PERCS_CAU_T_U64, PERCS_CAU_OP_XOR, n, 42);
	for (unsigned int i = 0; i < n; i++) {
		CHECK_EQ(st[3 * i], 0);
		CHECK_EQ(st[3 * i + 1], 0);
		CHECK_EQ(st[3 * i + 2], 0);
		CHECK(!memcmp(out[i], ref, sizeof(ref)));
		CHECK(pattern_ok(b[i], 100, 9));
		CHECK(!sg[i]->unexp);
	}
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), 3);
	CHECK_EQ(h.tag, 77);
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), -EAGAIN);

	/*
	 * Group 5 exists on ranks 1..4 only; rank 0's library meets their
	 * messages while it works for group 1 and keeps them as the
	 * application's, until rank 0 creates group 5.
	 */
	for (unsigned int i = 1; i < n; i++) {
		REQUIRE(percs_sw_group_create(cw[i]->w, caddrs(n), n, 5,
					      &g2[i]) == 0);
		REQUIRE(percs_sw_ibarrier(g2[i], PERCS_SW_DISSEMINATION,
					  &req[i]) == 0);
	}
	for (unsigned int k = 0; k < 20; k++)
		for (unsigned int i = 1; i < n; i++)
			CHECK_EQ(percs_coll_test(req[i]), -EINPROGRESS);
	CHECK_EQ(percs_coll_progress(cw[0]->w), 0);
	CHECK(cw[0]->w->rstash.count >= 1);
	REQUIRE(percs_sw_group_create(cw[0]->w, caddrs(n), n, 5, &g2[0]) == 0);
	CHECK_EQ(cw[0]->w->rstash.count, 0);
	REQUIRE(percs_sw_ibarrier(g2[0], PERCS_SW_DISSEMINATION, &req[0]) == 0);
	REQUIRE(run_reqs(req, n, st));
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(st[i], 0);
	CHECK_EQ(percs_recv(cw[0]->w, &h, pkt, sizeof(pkt)), -EAGAIN);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
}

/* Group and argument errors; a member's window gone; disagreeing counts. */
static void test_sw_errors(void)
{
	struct percs_addr a[4];
	struct percs_sw_group *g;
	struct percs_coll_req *req[NWIN];
	uint64_t in[NWIN][64], out[NWIN][64];
	struct percs_cqe c[4];
	int st[NWIN];

	cenv_init(3, 0, 65536);
	memcpy(a, caddrs(3), 3 * sizeof(a[0]));
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a, 0, 1, &g), -EINVAL);
	CHECK_EQ(percs_sw_group_create(NULL, a, 3, 1, &g), -EINVAL);
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a + 1, 2, 1, &g), -EPERM);
	a[2] = a[1];
	CHECK_EQ(percs_sw_group_create(cw[0]->w, a, 3, 1, &g), -EEXIST);
	sgroups(3, 1);
	CHECK_EQ(percs_sw_group_create(cw[0]->w, caddrs(3), 3, 1, &g), -EEXIST);
	CHECK_EQ(percs_sw_group_rank(sg[2]), 2);
	/* Refused calls use no collective number: the next ones match. */
	CHECK_EQ(percs_sw_reduce(sg[0], PERCS_SW_RECDBL, 0, in[0], out[0], 1,
				 PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_barrier(sg[0], PERCS_SW_RABENSEIFNER), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_allreduce(sg[0], PERCS_SW_DISSEMINATION, in[0],
				    out[0], 1, PERCS_CAU_T_U64,
				    PERCS_CAU_OP_SUM), -EOPNOTSUPP);
	CHECK_EQ(percs_sw_allreduce(sg[0], 0, in[0], out[0], 1,
				    PERCS_CAU_T_F32, PERCS_CAU_OP_AND), -EINVAL);
	CHECK_EQ(percs_sw_allreduce(sg[0], 0, NULL, out[0], 1,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EINVAL);
	CHECK_EQ(percs_sw_reduce(sg[0], 0, 3, in[0], out[0], 1,
				 PERCS_CAU_T_U64, PERCS_CAU_OP_SUM), -EINVAL);
	CHECK_EQ(percs_sw_bcast(sg[0], 0, 0, NULL, 5), -EINVAL);
	CHECK_EQ(percs_sw_allreduce(NULL, 0, in[0], out[0], 1, 0, 1), -EINVAL);
	CHECK_EQ(percs_sw_ibarrier(sg[0], 0, NULL), -EINVAL);
	CHECK_EQ(sg[0]->opseq, 0);
	/* Counts that disagree: the receiver of a wrong message: -EPROTO. */
	for (unsigned int i = 0; i < 3; i++)
		REQUIRE(percs_sw_iallreduce(sg[i], PERCS_SW_RECDBL, in[i],
					    out[i], i ? 64 : 32,
					    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
					    &req[i]) == 0);
	run_reqs(req, 3, st);
	CHECK(st[0] == -EPROTO || st[1] == -EPROTO || st[2] == -EPROTO);
	CHECK_EQ(percs_sw_group_destroy(sg[0]), req[0] ? -EBUSY : 0);
	cenv_fini(3);

	/* The wrong message waited as unexpected: found when the step comes. */
	cenv_init(2, 0, 65536);
	sgroups(2, 1);
	REQUIRE(percs_sw_iallreduce(sg[1], PERCS_SW_RECDBL, in[1], out[1], 64,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
				    &req[1]) == 0);
	CHECK_EQ(percs_coll_progress(cw[0]->w), 0);
	CHECK(sg[0]->unexp != NULL);
	REQUIRE(percs_sw_iallreduce(sg[0], PERCS_SW_RECDBL, in[0], out[0], 32,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM,
				    &req[0]) == 0);
	CHECK_EQ(percs_coll_test(req[0]), -EPROTO);
	CHECK_EQ(percs_coll_req_free(req[0]), 0);
	CHECK_EQ(percs_sw_group_destroy(sg[0]), 0);
	cenv_fini(2);

	/* Rank 1's window does not exist: the send completes -ECONNREFUSED. */
	cenv_init(1, 0, 65536);
	a[0] = cw[0]->addr;
	a[1] = (struct percs_addr){ .hub = 9, .window = 9 };
	REQUIRE(percs_sw_group_create(cw[0]->w, a, 2, 4, &g) == 0);
	CHECK_EQ(percs_sw_allreduce(g, PERCS_SW_RECDBL, in[0], out[0], 8,
				    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM),
		 -ECONNREFUSED);
	CHECK_EQ(percs_cq_poll(cw[0]->w, c, 4), 0);
	CHECK_EQ(percs_sw_group_destroy(g), 0);
	cenv_fini(1);
}

/* percs_coll_combine() and percs_coll_type_size(). */
static void test_coll_combine(void)
{
	double x[20], y[20];
	uint32_t u[3] = { 1, 5, 9 }, v[3] = { 4, 2, 9 };
	float nan_a, nan_b, fz[2] = { -0.0f, 0.0f }, fw[2] = { 0.0f, -0.0f };
	uint32_t bits;

	CHECK_EQ(percs_coll_type_size(PERCS_CAU_T_S32), 4);
	CHECK_EQ(percs_coll_type_size(PERCS_CAU_T_F64), 8);
	CHECK_EQ(percs_coll_type_size(9), 0);
	for (int i = 0; i < 20; i++) {
		x[i] = i;
		y[i] = 0.5 * i;
	}
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_F64, 20, x,
				    y), 0);
	CHECK(x[19] == 19 * 1.5);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MAX, PERCS_CAU_T_U32, 3, u,
				    v), 0);
	CHECK(u[0] == 4 && u[1] == 5 && u[2] == 9);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_XOR, PERCS_CAU_T_F64, 1, x,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_PROD, PERCS_CAU_T_S64, 1, x,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_S64, 1, NULL,
				    y), -EINVAL);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_SUM, PERCS_CAU_T_S64, 0, NULL,
				    NULL), 0);
	/* MIN: -0.0 below +0.0 either way; the first NaN wins. */
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MIN, PERCS_CAU_T_F32, 2, fz,
				    fw), 0);
	memcpy(&bits, &fz[0], 4);
	CHECK_EQ(bits, 0x80000000);
	memcpy(&bits, &fz[1], 4);
	CHECK_EQ(bits, 0x80000000);
	bits = 0x7fc00001;
	memcpy(&nan_a, &bits, 4);
	bits = 0x7fc00002;
	memcpy(&nan_b, &bits, 4);
	CHECK_EQ(percs_coll_combine(PERCS_CAU_OP_MAX, PERCS_CAU_T_F32, 1,
				    &nan_a, &nan_b), 0);
	memcpy(&bits, &nan_a, 4);
	CHECK_EQ(bits, 0x7fc00001);
}

/* ---- threaded: blocking calls, a polling engine -------------------------------- */

struct crank {
	unsigned int rank, n;
	unsigned int bad;
};

static void *crank_thread(void *p)
{
	struct crank *c = p;
	unsigned int r = c->rank, n = c->n;
	struct percs_sw_group *g;
	uint64_t in[300], out[300], ref[300];
	uint8_t b[500];

	if (percs_sw_group_create(cw[r]->w, caddrs(n), n, 11, &g)) {
		c->bad++;
		return NULL;
	}
	for (unsigned int it = 0; it < 60; it++) {
		unsigned int algo = it % 4, cnt = 1 + (it * 37) % 300;

		cfill(in, cnt, PERCS_CAU_T_U64, r, it);
		cref(ref, cnt, PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, n, it);
		if (percs_sw_allreduce(g, algo, in, out, cnt, PERCS_CAU_T_U64,
				       PERCS_CAU_OP_SUM) ||
		    memcmp(out, ref, cnt * 8))
			c->bad++;
		if (percs_cau_allreduce(ct[r], in, out, cnt, PERCS_CAU_T_U64,
					PERCS_CAU_OP_SUM) ||
		    memcmp(out, ref, cnt * 8))
			c->bad++;
		if (r == it % n)
			fill(b, sizeof(b), it);
		else
			memset(b, 0, sizeof(b));
		if (percs_sw_bcast(g, 0, it % n, b, sizeof(b)) ||
		    !pattern_ok(b, sizeof(b), it))
			c->bad++;
		memset(b, 0, sizeof(b));
		if (r == it % n)
			fill(b, sizeof(b), it + 1);
		if (percs_cau_bcast(ct[r], it % n, b, sizeof(b)) ||
		    !pattern_ok(b, sizeof(b), it + 1))
			c->bad++;
		if (percs_sw_barrier(g, it % 3 + 2 == 3 ? 1 : it % 3 + 2) ||
		    percs_cau_barrier(ct[r]))
			c->bad++;
	}
	if (percs_sw_group_destroy(g))
		c->bad++;
	return NULL;
}

static void test_coll_threaded_poll_mode(void)
{
	const unsigned int n = 6;
	struct crank c[NWIN];
	pthread_t e, t[NWIN];

	cenv_init(n, PERCS_WINDOW_F_POLL, 8192);
	REQUIRE(ctrees(n, PERCS_CAU_F_ORDERED, 2, 0) == 0);
	H.threaded = true;
	sem_init(&H.wake, 0, 0);
	REQUIRE(!pthread_create(&e, NULL, engine_thread, NULL));
	for (unsigned int i = 0; i < n; i++) {
		c[i] = (struct crank){ .rank = i, .n = n };
		REQUIRE(!pthread_create(&t[i], NULL, crank_thread, &c[i]));
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(c[i].bad, 0);
	}
	__atomic_store_n(&engine_stop, true, __ATOMIC_RELEASE);
	sem_post(&H.wake);
	pthread_join(e, NULL);
	H.threaded = false;
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(FC.busy, 0);
	CHECK_EQ(H.violations, 0);
	cenv_fini(n);
	sem_destroy(&H.wake);
}
