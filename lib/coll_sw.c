// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: software collectives over FIFO packets - groups, messages and
 * their matching, and the engine that runs a collective's schedule
 * (coll_sched.c builds them).
 *
 * A schedule is a list of steps, one per round of the algorithm in which
 * this member takes part: at most one message sent and one received.  A
 * step first composes its send (all of it: the data is copied into the
 * send FIFO, so a receive of the same step may then overwrite the buffer),
 * then waits for its receive; the request moves to the next step once the
 * receive is complete.  Messages travel in packets of at most LP_SW_FRAG
 * data bytes after a struct lp_sw_hdr (collective number, round, offset,
 * total), tagged PERCS_SW_TAG_HI << 16 | ctx.  A packet is matched by
 * (source rank, collective number, round): each algorithm sends at most
 * one message from one member to another in a round, so this names one
 * message whatever the order of arrival.  A packet that matches the
 * current step of a running request (its send done) is applied at once -
 * copied, or combined with the CAU's ALU; any other is copied to the
 * group's unexpected queue and applied when its step comes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "firmware-model/cau.h"	/* fm_cau_check(), fm_cau_elem_size() */

/* ---- groups ----------------------------------------------------------------- */

static int addr_cmp(const struct percs_addr *a, const struct percs_addr *b)
{
	if (a->hub != b->hub)
		return a->hub < b->hub ? -1 : 1;
	if (a->hfi != b->hfi)
		return a->hfi < b->hfi ? -1 : 1;
	if (a->window != b->window)
		return a->window < b->window ? -1 : 1;
	return 0;
}

static int member_cmp(const void *a, const void *b)
{
	return addr_cmp(&((const struct lp_sw_member *)a)->a,
			&((const struct lp_sw_member *)b)->a);
}

/* The rank of window @a in @g, or LP_SW_NONE. */
static uint32_t group_rank(const struct percs_sw_group *g,
			   const struct percs_addr *a)
{
	struct lp_sw_member key = { .a = *a };
	const struct lp_sw_member *m;

	key.a.reserved = 0;
	m = bsearch(&key, g->sorted, g->nr, sizeof(*m), member_cmp);
	return m ? m->rank : LP_SW_NONE;
}

static struct percs_sw_group *group_by_ctx(struct lp_coll *c, uint16_t ctx)
{
	struct percs_sw_group *g;

	for (g = c->groups; g && g->ctx != ctx; g = g->next)
		;
	return g;
}

static bool stashed_for(const struct percs_pkt_hdr *h, void *arg)
{
	const struct percs_sw_group *g = arg;

	return h->kind == PERCS_PKT_FIFO && h->tag == lp_sw_tag(g->ctx);
}

void lp_sw_group_free(struct percs_sw_group *g)
{
	struct lp_sw_frag *f, *n;

	for (f = g->unexp; f; f = n) {
		n = f->next;
		free(f);
	}
	free(g->members);
	free(g->sorted);
	free(g);
}

int percs_sw_group_create(struct percs_window *w,
			  const struct percs_addr *members, unsigned int nr,
			  uint16_t ctx, struct percs_sw_group **out)
{
	struct percs_sw_group *g;
	struct lp_rstash_ent *e;
	struct lp_coll *c;
	unsigned int i;
	int ret;

	if (!w || !members || !out || !nr || nr > PERCS_CAU_MAX_MEMBERS)
		return -EINVAL;
	c = lp_coll_get(w);
	g = calloc(1, sizeof(*g));
	if (!c || !g) {
		free(g);
		return -ENOMEM;
	}
	g->w = w;
	g->ctx = ctx;
	g->nr = nr;
	g->me = LP_SW_NONE;
	g->unexp_tail = &g->unexp;
	g->members = malloc(nr * sizeof(*g->members));
	g->sorted = malloc(nr * sizeof(*g->sorted));
	ret = -ENOMEM;
	if (!g->members || !g->sorted)
		goto fail;
	for (i = 0; i < nr; i++) {
		g->members[i] = members[i];
		g->members[i].reserved = 0;
		g->sorted[i] = (struct lp_sw_member){
			.a = g->members[i], .rank = i,
		};
	}
	qsort(g->sorted, nr, sizeof(*g->sorted), member_cmp);
	ret = -EEXIST;
	for (i = 1; i < nr; i++)
		if (!member_cmp(&g->sorted[i - 1], &g->sorted[i]))
			goto fail;
	if (group_by_ctx(c, ctx))
		goto fail;
	ret = -EPERM;
	g->me = group_rank(g, &w->addr);
	if (g->me == LP_SW_NONE)
		goto fail;
	g->next = c->groups;
	c->groups = g;
	/* Messages that came before, kept for percs_recv(): ours now. */
	while ((e = lp_rstash_take(w, stashed_for, g)) != NULL) {
		ret = lp_sw_claim(w, &e->hdr);
		free(e);
		if (ret < 0) {
			c->groups = g->next;
			goto fail;
		}
	}
	*out = g;
	return 0;
fail:
	lp_sw_group_free(g);
	return ret;
}

int percs_sw_group_destroy(struct percs_sw_group *g)
{
	struct percs_sw_group **pp;

	if (!g)
		return 0;
	if (g->running)
		return -EBUSY;
	for (pp = &g->w->coll->groups; *pp != g; pp = &(*pp)->next)
		;
	*pp = g->next;
	lp_sw_group_free(g);
	return 0;
}

unsigned int percs_sw_group_rank(const struct percs_sw_group *g)
{
	return g ? g->me : 0;
}

/* ---- receiving -------------------------------------------------------------- */

/*
 * Apply one packet (@len data bytes at @data) to the receive @x of request
 * @r.  A packet that does not fit the message ends the request (-EPROTO:
 * the members disagree on the collective).
 */
static void recv_frag(struct percs_coll_req *r, struct lp_sw_xfer *x,
		      const struct lp_sw_hdr *h, const uint8_t *data,
		      uint32_t len)
{
	struct lp_sw_req *s = &r->sw;
	size_t esize = x->action == LP_SW_COPY ? 1 :
		       fm_cau_elem_size(s->type);

	if (h->total != x->len || h->offset > x->len ||
	    len > x->len - h->offset || h->offset % esize || len % esize ||
	    x->done + len > x->len) {
		lp_req_finish(r, -EPROTO);
		return;
	}
	if (len && x->action == LP_SW_COPY)
		memcpy(x->buf + h->offset, data, len);
	else if (len)
		lp_combine(s->op, s->type, x->buf + h->offset, data, len,
			   x->action == LP_SW_COMB_L);
	x->done += len;
	x->seen = true;
}

/* Does a packet (source rank @src, header @h) belong to @r's current receive? */
static struct lp_sw_xfer *current_recv(struct percs_coll_req *r, uint32_t src,
				       const struct lp_sw_hdr *h)
{
	struct lp_sw_req *s = &r->sw;
	struct lp_sw_step *st;

	if (r->done || !s->sent || s->cur >= s->nsteps || h->opseq != s->opseq)
		return NULL;
	st = &s->steps[s->cur];
	if (st->round != h->round || st->recv.peer != src)
		return NULL;
	return &st->recv;
}

int lp_sw_claim(struct percs_window *w, const struct percs_pkt_hdr *h)
{
	struct percs_sw_group *g = group_by_ctx(w->coll, h->tag & 0xffff);
	const uint8_t *data = (const uint8_t *)(h + 1) + sizeof(struct lp_sw_hdr);
	struct percs_coll_req *r;
	struct lp_sw_frag *f;
	struct lp_sw_hdr sh;
	uint32_t src, len;

	if (!g || h->length < sizeof(sh))
		return 0;
	src = group_rank(g, &h->src);
	if (src == LP_SW_NONE)
		return 0;	/* not from a member: the application's */
	memcpy(&sh, h + 1, sizeof(sh));
	len = h->length - sizeof(sh);
	for (r = w->coll->head; r; r = r->next) {
		struct lp_sw_xfer *x;

		if (r->kind != LP_REQ_SW || r->sw.g != g)
			continue;
		x = current_recv(r, src, &sh);
		if (x) {
			recv_frag(r, x, &sh, data, len);
			return 1;
		}
	}
	f = malloc(sizeof(*f) + len);
	if (!f)
		return -ENOMEM;
	f->next = NULL;
	f->src = src;
	f->h = sh;
	f->len = len;
	memcpy(f->data, data, len);
	*g->unexp_tail = f;
	g->unexp_tail = &f->next;
	return 1;
}

/* Apply the unexpected packets that belong to @r's current receive. */
static void unexp_apply(struct percs_coll_req *r)
{
	struct percs_sw_group *g = r->sw.g;
	struct lp_sw_frag **pp = &g->unexp, *f;

	while ((f = *pp) != NULL && !r->done) {
		struct lp_sw_xfer *x = current_recv(r, f->src, &f->h);

		if (!x) {
			pp = &f->next;
			continue;
		}
		recv_frag(r, x, &f->h, f->data, f->len);
		*pp = f->next;
		if (g->unexp_tail == &f->next)
			g->unexp_tail = pp;
		free(f);
	}
}

/* A send of one of the group's messages failed: its collectives end. */
bool lp_sw_cqe(struct percs_window *w, const struct percs_cqe *c)
{
	struct percs_sw_group *g;
	struct percs_coll_req *r;

	if ((c->user_data >> 32) || ((uint32_t)c->user_data >> 16) !=
	    PERCS_SW_TAG_HI)
		return false;
	g = group_by_ctx(w->coll, c->user_data & 0xffff);
	if (!g)
		return false;
	if (!c->res)
		return true;
	for (r = w->coll->head; r; r = r->next)
		if (!r->done && r->kind == LP_REQ_SW && r->sw.g == g)
			lp_req_finish(r, c->res);
	return true;
}

/* ---- sending and the schedule ------------------------------------------------ */

/*
 * Compose as much of @st's send as the send FIFO takes, then trigger.
 * Return: 0 when all of it is composed, -EAGAIN when the FIFO is full, or
 * another -errno.
 */
static int send_step(struct percs_coll_req *r, struct lp_sw_step *st)
{
	struct lp_sw_req *s = &r->sw;
	struct percs_sw_group *g = s->g;
	struct lp_sw_xfer *x = &st->send;
	unsigned int composed = 0;
	int ret = 0, k;

	if (x->peer == LP_SW_NONE)
		return 0;
	while (!x->seen || x->done < x->len) {
		size_t n = x->len - x->done < LP_SW_FRAG ? x->len - x->done :
							   LP_SW_FRAG;
		struct lp_sw_hdr h = {
			.opseq = s->opseq, .round = st->round,
			.offset = (uint32_t)x->done, .total = (uint32_t)x->len,
		};
		void *p;

		ret = percs_send_reserve(g->w, &g->members[x->peer],
					 sizeof(h) + n, lp_sw_tag(g->ctx), 0,
					 &p);
		if (ret)
			break;
		memcpy(p, &h, sizeof(h));
		if (n)
			memcpy((uint8_t *)p + sizeof(h), x->buf + x->done, n);
		x->done += n;
		x->seen = true;
		composed++;
	}
	if (composed) {
		k = percs_send_trigger(g->w);
		if (k && (!ret || ret == -EAGAIN))
			ret = k;
	}
	return ret;
}

int lp_sw_advance(struct percs_coll_req *r)
{
	struct lp_sw_req *s = &r->sw;
	int ret;

	while (!r->done) {
		struct lp_sw_step *st;

		if (s->cur == s->nsteps) {
			lp_req_finish(r, 0);
			break;
		}
		st = &s->steps[s->cur];
		if (!s->sent) {
			ret = send_step(r, st);
			if (ret == -EAGAIN)
				return 0;	/* the next progress goes on */
			if (ret) {
				lp_req_finish(r, ret);
				return ret;
			}
			s->sent = true;
			unexp_apply(r);
			if (r->done)
				break;	/* -EPROTO: the steps are gone */
		}
		if (st->recv.peer != LP_SW_NONE &&
		    (!st->recv.seen || st->recv.done < st->recv.len))
			break;
		s->cur++;
		s->sent = false;
	}
	return 0;
}

void lp_sw_req_fini(struct percs_coll_req *r)
{
	r->sw.g->running--;
	free(r->sw.steps);
	free(r->sw.tmp);
	r->sw.steps = NULL;
	r->sw.tmp = NULL;
	r->sw.nsteps = r->sw.cur = 0;
}
