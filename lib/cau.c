// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: the collectives the kernel's CAU executes on a tree (shapes:
 * cau_shape.c; tree handles: cau_tree.c).
 *
 * The kernel numbers a member's n-th descriptor on a tree operation n and
 * combines it with every other member's n-th; results carry seq = n.  So a
 * tree handle counts what it posted (t->posted) and keeps, by number
 * modulo PERCS_CAU_MAX_INFLIGHT, the request and chunk of every operation
 * whose result it waits for.  A vector is cut into chunks of
 * PERCS_CAU_PAYLOAD bytes, one operation each; requests post their chunks
 * in the order they were started (the tree's queue), at most 16 waiting
 * for results at a time - the kernel's own limit per member: an operation
 * is posted only when the slot of the one 16 before it is free.  A
 * non-root's reduce gets no result: its chunks are done once posted.
 *
 * Descriptors carry the tag lp_cau_tag(idx, seq): a completion entry for
 * one of them (an error: user_data is the tag) names the tree and the
 * operation.  A tree's end is a completion entry with user_data the tree
 * id and res -ECONNRESET.
 *
 * A bcast is the CAU's multicast (PERCS_COLL_MCAST): the origin posts its
 * chunks as multicasts (tag lp_cau_tag(0, idx): index 0 is no tree's, so
 * the tag says "a multicast of tree idx"), which take no operation
 * number and wait for no result; the kernel numbers an origin's
 * multicasts on a tree from 1 and delivers them to every other member in
 * that order.  So every member counts, per origin, the multicasts its
 * bcast calls have claimed (a call from origin o of n chunks claims o's
 * next n), and matches each arriving multicast by (origin, seq) to the
 * running call that claimed it; one that comes before its call (a root
 * returns once it has posted, and may be a call ahead) is kept until the
 * call starts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "firmware-model/cau.h"	/* fm_cau_check(), fm_cau_elem_size() */

/* A chunk's result (or error) came: the request has one more done. */
static void chunk_done(struct lp_cau_slot *s, int status, const uint8_t *data,
		       size_t have)
{
	struct percs_coll_req *r = s->req;
	struct lp_cau_req *cr = &r->cau;
	size_t off = (size_t)s->chunk * PERCS_CAU_PAYLOAD;
	size_t len = cr->bytes - off < PERCS_CAU_PAYLOAD ? cr->bytes - off :
							     PERCS_CAU_PAYLOAD;

	if (!status && cr->dst && cr->coll != PERCS_COLL_BARRIER) {
		if (have < len)
			status = -EPROTO;
		else
			memcpy(cr->dst + off, data, len);
	}
	if (status && !r->status)
		r->status = status;
	cr->resolved++;
	*s = (struct lp_cau_slot){ 0 };
}

/* ---- multicasts ---------------------------------------------------------- */

/* A multicast that came before the bcast call it belongs to. */
struct lp_cau_mc_pkt {
	struct lp_cau_mc_pkt *next;
	uint32_t origin;
	uint64_t seq;
	int status;
	size_t have;
	uint8_t data[PERCS_CAU_PAYLOAD];
};

/**
 * struct lp_cau_mc - a tree handle's multicast state
 * @early: multicasts that came before their call, in arrival order
 * @early_tail: where the next one is linked
 * @last: the origin of the last multicast that came (runs are common)
 * @claimed: per origin, its multicasts that calls here have claimed
 * @members: the members' windows, by index (a multicast's src)
 */
struct lp_cau_mc {
	struct lp_cau_mc_pkt *early;
	struct lp_cau_mc_pkt **early_tail;
	uint32_t last;
	uint64_t *claimed;
	struct percs_addr members[];
};

int lp_cau_mc_init(struct percs_cau_tree *t, const struct percs_cau_member *m)
{
	struct lp_cau_mc *mc = calloc(1, sizeof(*mc) +
				      t->nr * sizeof(mc->members[0]));

	if (!mc)
		return -ENOMEM;
	mc->claimed = calloc(t->nr, sizeof(*mc->claimed));
	if (!mc->claimed) {
		free(mc);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nr; i++)
		mc->members[i] = m[i].win;
	mc->early_tail = &mc->early;
	t->mc = mc;
	return 0;
}

void lp_cau_mc_free(struct percs_cau_tree *t)
{
	struct lp_cau_mc *mc = t->mc;
	struct lp_cau_mc_pkt *p, *next;

	if (!mc)
		return;
	for (p = mc->early; p; p = next) {
		next = p->next;
		free(p);
	}
	free(mc->claimed);
	free(mc);
	t->mc = NULL;
}

static bool addr_eq(const struct percs_addr *a, const struct percs_addr *b)
{
	return a->hub == b->hub && a->hfi == b->hfi && a->window == b->window;
}

/* The member whose window is @a, or UINT32_MAX. */
static uint32_t mc_origin(struct percs_cau_tree *t, const struct percs_addr *a)
{
	struct lp_cau_mc *mc = t->mc;

	if (mc->last < t->nr && addr_eq(&mc->members[mc->last], a))
		return mc->last;
	for (uint32_t i = 0; i < t->nr; i++)
		if (addr_eq(&mc->members[i], a))
			return mc->last = i;
	return UINT32_MAX;
}

/* Chunk @seq of the origin's multicasts lands in @r (it claimed it). */
static void mc_chunk(struct percs_coll_req *r, uint64_t seq, int status,
		     const uint8_t *data, size_t have)
{
	struct lp_cau_req *cr = &r->cau;
	size_t off = (size_t)(seq - cr->mc_base - 1) * PERCS_CAU_PAYLOAD;
	size_t len = cr->bytes - off < PERCS_CAU_PAYLOAD ? cr->bytes - off :
							     PERCS_CAU_PAYLOAD;

	if (!status && have < len)
		status = -EPROTO;
	if (!status)
		memcpy(cr->dst + off, data, len);
	if (status && !r->status)
		r->status = status;
	cr->resolved++;
}

/* The running receive that claimed multicast @seq of @origin, or NULL. */
static struct percs_coll_req *mc_req(struct percs_cau_tree *t, uint32_t origin,
				     uint64_t seq)
{
	struct percs_coll_req *r;

	for (r = t->w->coll->head; r; r = r->next) {
		struct lp_cau_req *cr = &r->cau;

		if (!r->done && r->kind == LP_REQ_CAU && cr->t == t &&
		    cr->coll == PERCS_COLL_MCAST && cr->want &&
		    cr->origin == origin && seq > cr->mc_base &&
		    seq - cr->mc_base <= cr->nchunks)
			return r;
	}
	return NULL;
}

/*
 * A multicast arrived: to the call that claimed it, kept for the call
 * still to come, or dropped (its call ended without it, or it is from no
 * member: neither can be taken by anyone).
 */
static void mc_claim(struct percs_cau_tree *t, const struct percs_pkt_hdr *h,
		     const struct percs_coll_ext *e)
{
	const uint8_t *data = (const uint8_t *)(h + 1) + sizeof(*e);
	size_t have = h->length - sizeof(*e);
	uint32_t origin = mc_origin(t, &h->src);
	struct lp_cau_mc *mc = t->mc;
	struct percs_coll_req *r;
	struct lp_cau_mc_pkt *p;

	if (origin == UINT32_MAX || !e->seq)
		return;
	if (e->seq <= mc->claimed[origin]) {
		r = mc_req(t, origin, e->seq);
		if (r)
			mc_chunk(r, e->seq, e->status, data, have);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		/* Lost here: the call it belongs to fails. */
		if (!t->late_err)
			t->late_err = -ENOMEM;
		return;
	}
	*p = (struct lp_cau_mc_pkt){
		.origin = origin, .seq = e->seq, .status = e->status,
		.have = have < PERCS_CAU_PAYLOAD ? have : PERCS_CAU_PAYLOAD,
	};
	memcpy(p->data, data, p->have);
	*mc->early_tail = p;
	mc->early_tail = &p->next;
}

/* A receiving call starts: it claims the origin's next chunks. */
static void mc_start(struct percs_cau_tree *t, struct percs_coll_req *r)
{
	struct lp_cau_req *cr = &r->cau;
	struct lp_cau_mc *mc = t->mc;
	struct lp_cau_mc_pkt **pp = &mc->early, *p;

	cr->mc_base = mc->claimed[cr->origin];
	mc->claimed[cr->origin] += cr->nchunks;
	mc->early_tail = &mc->early;
	while ((p = *pp)) {
		if (p->origin == cr->origin && p->seq > cr->mc_base &&
		    p->seq - cr->mc_base <= cr->nchunks) {
			mc_chunk(r, p->seq, p->status, p->data, p->have);
			*pp = p->next;
			free(p);
			continue;
		}
		pp = &p->next;
		mc->early_tail = pp;
	}
}

/* ---- results and completion entries ------------------------------------------ */

int lp_cau_claim(struct percs_window *w, const struct percs_pkt_hdr *h)
{
	struct percs_coll_ext e;
	struct percs_cau_tree *t;
	struct lp_cau_slot *s;

	if (h->length < sizeof(e))
		return 0;
	memcpy(&e, h + 1, sizeof(e));
	t = lp_cau_tree_by_id(w->coll, e.tree);
	if (!t)
		return 0;	/* not a tree of the library's: the user's */
	if (e.coll == PERCS_COLL_MCAST) {
		mc_claim(t, h, &e);
		return 1;
	}
	s = &t->slot[e.seq % PERCS_CAU_MAX_INFLIGHT];
	if (s->req && s->seq == e.seq)
		chunk_done(s, e.status, (const uint8_t *)(h + 1) + sizeof(e),
			   h->length - sizeof(e));
	else if (e.status && !t->late_err)
		t->late_err = e.status;	/* a non-root's reduce */
	return 1;
}

bool lp_cau_cqe(struct percs_window *w, const struct percs_cqe *c)
{
	struct lp_coll *coll = w->coll;
	uint32_t tag = (uint32_t)c->user_data;
	struct percs_cau_tree *t;

	if (c->res == -ECONNRESET) {
		t = lp_cau_tree_by_id(coll, (uint32_t)c->user_data);
		if (!t || (c->user_data >> 32))
			return false;
		lp_cau_tree_end(t, -ECONNRESET);
		return true;
	}
	if ((c->user_data >> 32) || (tag >> 24) != PERCS_CAU_TAG_HI)
		return false;
	if (!((tag >> 16) & 0xff)) {
		/* A multicast's descriptor (lp_cau_tag(0, idx)). */
		t = (tag & 0xffff) < LP_CAU_TREES ? coll->tree[tag & 0xffff] :
						    NULL;
		if (!t)
			return false;
		if (c->res && !t->late_err)
			t->late_err = c->res;
		goto out;
	}
	t = coll->tree[(tag >> 16) & 0xff];
	if (!t)
		return false;
	if (!c->res)
		return true;
	for (unsigned int i = 0; i < PERCS_CAU_MAX_INFLIGHT; i++) {
		struct lp_cau_slot *s = &t->slot[i];

		if (s->req && (s->seq & 0xffff) == (tag & 0xffff)) {
			chunk_done(s, c->res, NULL, 0);
			goto out;
		}
	}
	if (!t->late_err)
		t->late_err = c->res;
out:
	/* No such tree (it ended): no other result will come. */
	if (c->res == -ENOENT)
		lp_cau_tree_end(t, -ECONNRESET);
	return true;
}

/* ---- posting ---------------------------------------------------------------- */

/* Compose the descriptor of chunk @chunk of @r as operation @seq. */
static int post_chunk(struct percs_cau_tree *t, struct lp_cau_req *cr,
		      uint32_t chunk, uint64_t seq)
{
	uint8_t buf[PERCS_COLL_EXT_SIZE + PERCS_CAU_PAYLOAD] = { 0 };
	size_t off = (size_t)chunk * PERCS_CAU_PAYLOAD, len = 0;
	struct percs_coll_ext e = {
		.tree = t->id, .coll = cr->coll, .op = cr->op,
		.type = cr->type,
	};
	struct percs_pkt_hdr h = {
		.kind = PERCS_PKT_COLL,
		.route = PERCS_ROUTE_DIRECT,
		.tag = cr->coll == PERCS_COLL_MCAST ? lp_cau_tag(0, t->idx) :
						      lp_cau_tag(t->idx, seq),
	};

	if (cr->coll != PERCS_COLL_BARRIER) {
		len = cr->bytes - off < PERCS_CAU_PAYLOAD ? cr->bytes - off :
							     PERCS_CAU_PAYLOAD;
		e.count = (uint8_t)((len + cr->esize - 1) / cr->esize);
		if (cr->src)
			memcpy(buf + sizeof(e), cr->src + off, len);
	}
	memcpy(buf, &e, sizeof(e));
	return percs_send_compose_hdr(t->w, &h, buf,
				      sizeof(e) + (size_t)e.count * cr->esize);
}

/*
 * Post the chunks of the tree's queued requests, in order, as far as the
 * slots and the send FIFO allow, then trigger.
 */
int lp_cau_post(struct percs_cau_tree *t)
{
	unsigned int composed = 0;
	int ret = 0;

	while (t->q_head && !t->err) {
		struct percs_coll_req *r = t->q_head;
		struct lp_cau_req *cr = &r->cau;

		while (cr->posted < cr->nchunks) {
			uint64_t seq = t->posted + 1;
			struct lp_cau_slot *s =
				&t->slot[seq % PERCS_CAU_MAX_INFLIGHT];

			if (cr->coll == PERCS_COLL_MCAST) {
				/* No operation number, no result. */
				ret = post_chunk(t, cr, cr->posted, 0);
				if (ret == -EAGAIN) {
					ret = 0;
					goto out;
				}
				if (ret)
					goto out;
				cr->resolved++;
				cr->posted++;
				composed++;
				continue;
			}
			if (s->req)
				goto out;	/* the one 16 before still runs */
			ret = post_chunk(t, cr, cr->posted, seq);
			if (ret == -EAGAIN) {
				ret = 0;
				goto out;
			}
			if (ret)
				goto out;
			t->posted = seq;
			if (cr->want)
				*s = (struct lp_cau_slot){
					.seq = seq, .req = r,
					.chunk = cr->posted,
				};
			else
				cr->resolved++;
			cr->posted++;
			composed++;
		}
		t->q_head = cr->qnext;
		if (!t->q_head)
			t->q_tail = NULL;
	}
out:
	if (composed) {
		int k = percs_send_trigger(t->w);

		if (k && !ret)
			ret = k;
	}
	return ret;
}

/* Finish a request whose chunks are all posted and done. */
void lp_cau_check(struct percs_coll_req *r)
{
	struct lp_cau_req *cr = &r->cau;
	struct percs_cau_tree *t = cr->t;
	int status = 0;

	if (cr->posted < cr->nchunks || cr->resolved < cr->nchunks)
		return;
	if (!r->status && t->late_err) {
		status = t->late_err;
		t->late_err = 0;
	}
	lp_req_finish(r, status);
}

/* ---- the collectives -------------------------------------------------------- */

struct cau_args {
	uint8_t coll;
	uint8_t op;
	uint8_t type;
	const void *src;
	void *dst;
	size_t bytes;
	bool want;
	uint32_t origin;
};

static int cau_run(struct percs_cau_tree *t, const struct cau_args *a,
		   struct percs_coll_req **out)
{
	struct percs_coll_req stack, *r = &stack;
	struct lp_cau_req *cr;
	size_t nchunks;

	if (t->err)
		return t->err;
	nchunks = a->coll == PERCS_COLL_BARRIER ? 1 :
		  (a->bytes + PERCS_CAU_PAYLOAD - 1) / PERCS_CAU_PAYLOAD;
	if (nchunks > UINT32_MAX)
		return -EINVAL;
	if (out) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
	} else {
		memset(r, 0, sizeof(*r));
	}
	lp_req_start(t->w, r, LP_REQ_CAU);
	cr = &r->cau;
	*cr = (struct lp_cau_req){
		.t = t, .src = a->src, .dst = a->want ? a->dst : NULL,
		.bytes = a->bytes, .nchunks = (uint32_t)nchunks,
		.coll = a->coll, .op = a->op, .type = a->type,
		.esize = (uint8_t)fm_cau_elem_size(a->type), .want = a->want,
		.origin = a->origin,
	};
	t->running++;
	if (a->coll == PERCS_COLL_MCAST && a->want) {
		/* A multicast received posts nothing: it claims chunks. */
		cr->posted = cr->nchunks;
		mc_start(t, r);
		lp_cau_check(r);
		return lp_req_run(r, out);
	}
	if (t->q_tail)
		t->q_tail->cau.qnext = r;
	else
		t->q_head = r;
	t->q_tail = r;
	/* Start at once; errors of the kick come from the wait. */
	lp_cau_post(t);
	lp_cau_check(r);
	return lp_req_run(r, out);
}

static int cau_reduction(struct percs_cau_tree *t, unsigned int coll,
			 const void *sendbuf, void *recvbuf, size_t count,
			 unsigned int type, unsigned int op,
			 struct percs_coll_req **req)
{
	size_t esize = fm_cau_elem_size(type);
	bool want = coll == PERCS_COLL_ALLREDUCE || t->me == t->root;
	struct cau_args a = {
		.coll = (uint8_t)coll, .op = (uint8_t)op, .type = (uint8_t)type,
		.src = sendbuf, .dst = recvbuf, .bytes = count * esize,
		.want = want,
	};

	if (!t || fm_cau_check(op, type, 0) || count > SIZE_MAX / 8 ||
	    (count && (!sendbuf || (want && !recvbuf))))
		return -EINVAL;
	return cau_run(t, &a, req);
}

int percs_cau_iallreduce(struct percs_cau_tree *t, const void *sendbuf,
			 void *recvbuf, size_t count, unsigned int type,
			 unsigned int op, struct percs_coll_req **req)
{
	if (!t || !req)
		return -EINVAL;
	return cau_reduction(t, PERCS_COLL_ALLREDUCE, sendbuf, recvbuf, count,
			     type, op, req);
}

int percs_cau_allreduce(struct percs_cau_tree *t, const void *sendbuf,
			void *recvbuf, size_t count, unsigned int type,
			unsigned int op)
{
	if (!t)
		return -EINVAL;
	return cau_reduction(t, PERCS_COLL_ALLREDUCE, sendbuf, recvbuf, count,
			     type, op, NULL);
}

int percs_cau_ireduce(struct percs_cau_tree *t, const void *sendbuf,
		      void *recvbuf, size_t count, unsigned int type,
		      unsigned int op, struct percs_coll_req **req)
{
	if (!t || !req)
		return -EINVAL;
	return cau_reduction(t, PERCS_COLL_REDUCE, sendbuf, recvbuf, count,
			     type, op, req);
}

int percs_cau_reduce(struct percs_cau_tree *t, const void *sendbuf,
		     void *recvbuf, size_t count, unsigned int type,
		     unsigned int op)
{
	if (!t)
		return -EINVAL;
	return cau_reduction(t, PERCS_COLL_REDUCE, sendbuf, recvbuf, count,
			     type, op, NULL);
}

/*
 * The CAU's multicast: the origin posts 64-byte chunks (64-bit words, the
 * last padded with zeros), the others take the origin's next chunks.
 */
static int cau_bcast(struct percs_cau_tree *t, unsigned int root, void *buf,
		     size_t len, struct percs_coll_req **req)
{
	struct cau_args a = {
		.coll = PERCS_COLL_MCAST, .op = PERCS_CAU_OP_NOP,
		.type = PERCS_CAU_T_U64, .src = t->me == root ? buf : NULL,
		.dst = buf, .bytes = len, .want = t->me != root,
		.origin = root,
	};

	if (root >= t->nr || (len && !buf))
		return -EINVAL;
	return cau_run(t, &a, req);
}

int percs_cau_ibcast(struct percs_cau_tree *t, unsigned int root, void *buf,
		     size_t len, struct percs_coll_req **req)
{
	if (!t || !req)
		return -EINVAL;
	return cau_bcast(t, root, buf, len, req);
}

int percs_cau_bcast(struct percs_cau_tree *t, unsigned int root, void *buf,
		    size_t len)
{
	if (!t)
		return -EINVAL;
	return cau_bcast(t, root, buf, len, NULL);
}

int percs_cau_ibarrier(struct percs_cau_tree *t, struct percs_coll_req **req)
{
	struct cau_args a = { .coll = PERCS_COLL_BARRIER, .want = true };

	if (!t || !req)
		return -EINVAL;
	return cau_run(t, &a, req);
}

int percs_cau_barrier(struct percs_cau_tree *t)
{
	struct cau_args a = { .coll = PERCS_COLL_BARRIER, .want = true };

	if (!t)
		return -EINVAL;
	return cau_run(t, &a, NULL);
}
