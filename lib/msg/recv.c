// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-msg: the receive side.
 *
 * Ordered packets (PM_EAGER, PM_RTS) are handed to matching strictly in
 * their per-sender sequence order: one that comes early waits in the
 * sender's out-of-order list.  Matching takes the first posted receive
 * that fits, in post order; an arrival nobody waits for joins the
 * unexpected list, in arrival order, which later receives search first.
 * An RTS that matched waits for a read slot (at most PM_MAX_READS RDMA
 * reads in flight, so their completion entries always fit the CQ), then
 * the data is read from the sender's registration straight into the
 * receive buffer, and a PM_FIN frees the sender.  A read that fails, or
 * cannot start, fails its receive and the FIN says so: the send fails
 * too, and neither side waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg_internal.h"

static bool req_matches(const struct percs_msg_req *r, uint32_t src,
			int32_t tag, uint32_t ctx)
{
	return (r->peer == PERCS_MSG_ANY_SOURCE || r->peer == (int)src) &&
	       (r->tag == PERCS_MSG_ANY_TAG || r->tag == tag) &&
	       r->ctx == ctx;
}

void pm_give_credit(struct percs_msg *m, unsigned int src, uint64_t bytes)
{
	struct pm_peer *p = m->peers[src];
	struct pm_hdr h = { .type = PM_CREDIT, .src = m->rank };

	if (!p)
		return;
	p->owed += bytes;
	/* Batch the returns: half the initial credit at a time. */
	if (p->owed < m->credit_init / 2)
		return;
	h.len = p->owed;
	if (!pm_post(m, src, &h, NULL, 0, NULL, 0, 0))
		p->owed = 0;
}

static void status_set(struct percs_msg_req *r, const struct pm_hdr *h,
		       size_t got)
{
	r->status.source = (int)h->src;
	r->status.tag = h->tag;
	r->status.len = got;
	r->status.msg_len = h->len;
	r->status.error = h->len > r->len ? -EMSGSIZE : 0;
}

/*
 * Matched an eager message: copy it out, give its credit back.  @buffered:
 * it was kept (out of order or unexpected) and counted in unexpected_now.
 */
static void eager_complete(struct percs_msg *m, struct percs_msg_req *r,
			   const struct pm_hdr *h, const void *data,
			   bool buffered)
{
	size_t n = h->len < r->len ? h->len : r->len;

	if (n)
		memcpy(r->buf, data, n);
	status_set(r, h, n);
	if (buffered)
		m->cnt.unexpected_now -= PM_UNEXP_COST(h->len);
	pm_give_credit(m, h->src, PM_UNEXP_COST(h->len));
	pm_req_done(r);
}

/* Matched an RTS: queue the read. */
static void rts_matched(struct percs_msg *m, struct percs_msg_req *r,
			const struct pm_hdr *h, const struct pm_rts *rts)
{
	r->rts = *h;
	r->rts_buf = *rts;
	r->state = PM_ST_QUEUED;
	pm_list_add_tail(&m->queued_reads, &r->link);
}

/*
 * A copy of a message kept until a receive matches it, its eager bytes
 * charged to the unexpected bound.
 */
static struct pm_inmsg *inmsg_keep(struct percs_msg *m, const struct pm_hdr *h,
				   const struct pm_rts *rts, const void *data)
{
	size_t n = h->type == PM_EAGER ? h->len : 0;
	struct pm_inmsg *im = malloc(sizeof(*im) + n);

	if (!im)
		return NULL;
	pm_list_init(&im->link);
	im->hdr = *h;
	if (rts)
		im->rts = *rts;
	if (n)
		memcpy(im->data, data, n);
	if (h->type == PM_EAGER)
		m->cnt.unexpected_now += PM_UNEXP_COST(h->len);
	if (m->cnt.unexpected_now > m->cnt.unexpected_peak)
		m->cnt.unexpected_peak = m->cnt.unexpected_now;
	return im;
}

/*
 * One ordered message, in its turn: to a posted receive, or to the
 * unexpected list (@im: its copy if it has one already).
 */
static int deliver(struct percs_msg *m, const struct pm_hdr *h,
		   const struct pm_rts *rts, const void *data,
		   struct pm_inmsg *im)
{
	struct pm_link *l;

	for (l = m->posted.next; l != &m->posted; l = l->next) {
		struct percs_msg_req *r = pm_container(l, struct percs_msg_req,
						       link);

		if (!req_matches(r, h->src, h->tag, h->ctx))
			continue;
		pm_list_del(&r->link);
		if (h->type == PM_EAGER)
			eager_complete(m, r, h, data, im != NULL);
		else
			rts_matched(m, r, h, rts);
		free(im);
		return 0;
	}
	if (!im) {
		im = inmsg_keep(m, h, rts, data);
		if (!im)
			return -ENOMEM;
	}
	pm_list_add_tail(&m->unexpected, &im->link);
	return 0;
}

/* An ordered packet: deliver it and whatever it unblocks, or keep it. */
static int ordered_arrived(struct percs_msg *m, const struct pm_hdr *h,
			   const struct pm_rts *rts, const void *data)
{
	struct pm_peer *p = pm_peer(m, h->src);
	struct pm_inmsg *im;
	struct pm_link *l;
	int ret;

	if (!p)
		return -ENOMEM;
	if (h->seq != p->recv_seq) {
		/* Early: keep it in seq order until its turn. */
		if ((int32_t)(h->seq - p->recv_seq) < 0)
			return -EPROTO;
		im = inmsg_keep(m, h, rts, data);
		if (!im)
			return -ENOMEM;
		m->cnt.out_of_order++;
		for (l = p->ooo.next; l != &p->ooo; l = l->next) {
			struct pm_inmsg *o = pm_container(l, struct pm_inmsg,
							  link);

			if ((int32_t)(h->seq - o->hdr.seq) < 0)
				break;
		}
		pm_list_add_tail(l, &im->link);	/* before l */
		return 0;
	}
	ret = deliver(m, h, rts, data, NULL);
	if (ret)
		return ret;
	p->recv_seq++;
	while (!pm_list_empty(&p->ooo)) {
		im = pm_container(p->ooo.next, struct pm_inmsg, link);
		if (im->hdr.seq != p->recv_seq)
			break;
		pm_list_del(&im->link);
		/* deliver() frees @im or keeps it on the unexpected list. */
		ret = deliver(m, &im->hdr, &im->rts, im->data, im);
		if (ret)
			return ret;
		p->recv_seq++;
	}
	return 0;
}

static int packet_arrived(struct percs_msg *m, const struct percs_pkt_hdr *ph,
			  const unsigned char *pl, size_t len)
{
	struct pm_hdr h;
	struct pm_rts rts = { 0 };
	size_t ext = 0;

	if (ph->tag != PM_PKT_TAG || len < sizeof(h))
		return 0;	/* not the messaging layer's: ignored */
	memcpy(&h, pl, sizeof(h));
	if (h.src >= m->size ||
	    memcmp(&ph->src, &m->addrs[h.src], sizeof(ph->src)))
		return 0;	/* not from the rank it names */
	if (h.type == PM_RTS) {
		ext = sizeof(rts);
		if (len < sizeof(h) + ext)
			return -EPROTO;
		memcpy(&rts, pl + sizeof(h), ext);
	}
	switch (h.type) {
	case PM_EAGER:
		if (len != sizeof(h) + h.len)
			return -EPROTO;
		return ordered_arrived(m, &h, NULL, pl + sizeof(h));
	case PM_RTS:
		return ordered_arrived(m, &h, &rts, NULL);
	case PM_FIN:
		pm_fin_arrived(m, h.cookie, h.status);
		return 0;
	case PM_CREDIT:
		if (m->peers[h.src])
			m->peers[h.src]->credit += h.len;
		return 0;
	}
	return -EPROTO;
}

int pm_drain(struct percs_msg *m)
{
	unsigned char buf[PERCS_MAX_PAYLOAD];
	struct percs_pkt_hdr ph;
	int n, ret;

	for (;;) {
		n = percs_recv(m->w, &ph, buf, sizeof(buf));
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		m->idle_rounds = 0;
		ret = packet_arrived(m, &ph, buf, (size_t)n);
		if (ret)
			return ret;
	}
}

/* The sender's PM_FIN: @err is 0 or the -errno the read failed with. */
static int fin_send(struct percs_msg *m, const struct percs_msg_req *r,
		    int err)
{
	struct pm_hdr h = {
		.type = PM_FIN,
		.src = m->rank,
		.status = (uint32_t)-err,
		.cookie = r->rts.cookie,
	};

	return pm_post(m, r->rts.src, &h, NULL, 0, NULL, 0, 0);
}

/*
 * The read of @r, @n bytes, put in flight.  A registration refused for
 * want of lockable memory while other reads hold theirs is retried when
 * they are done (like a full descriptor FIFO).  Return: 0, -EAGAIN (try
 * again next round), or -errno: this read cannot be done.
 */
static int read_start(struct percs_msg *m, struct percs_msg_req *r, size_t n)
{
	int ret;

	ret = pm_mr_get(m, r->buf, n, PERCS_ACCESS_LOCAL_WRITE, &r->mr);
	if (ret)
		return ret == -ENOMEM && m->reads ? -EAGAIN : ret;
	ret = percs_rdma_read(m->w, &m->addrs[r->rts.src], r->rts_buf.handle,
			      r->rts_buf.addr, r->mr, r->buf, n, 0,
			      (uintptr_t)r);
	if (ret) {
		pm_mr_put(m, r->mr);
		r->mr = 0;
	}
	return ret;
}

/*
 * @r is over: its status from the RTS (@got bytes, @err its error if
 * any), and the sender told, so that its send ends too (failed when the
 * read did: a sender must not believe data arrived that did not).
 */
static int rndv_complete(struct percs_msg *m, struct percs_msg_req *r,
			 size_t got, int err)
{
	int ret;

	status_set(r, &r->rts, got);
	if (err)
		r->status.error = err;
	ret = fin_send(m, r, err);
	pm_req_done(r);
	return ret;
}

int pm_reads_start(struct percs_msg *m)
{
	while (m->reads < PM_MAX_READS && !pm_list_empty(&m->queued_reads)) {
		struct percs_msg_req *r = pm_container(m->queued_reads.next,
						       struct percs_msg_req,
						       link);
		size_t n = r->rts.len < r->len ? r->rts.len : r->len;
		int ret = n ? read_start(m, r, n) : 0;

		if (ret == -EAGAIN)
			return ret;
		pm_list_del(&r->link);
		if (n && !ret) {
			pm_list_add_tail(&m->reading, &r->link);
			r->state = PM_ST_READING;
			m->reads++;
			continue;
		}
		/*
		 * Nothing to read, or this read cannot be done (a buffer
		 * that cannot be registered for writing): this request
		 * fails, not the endpoint.
		 */
		ret = rndv_complete(m, r, 0, ret);
		if (ret)
			return ret;
	}
	return 0;
}

static struct percs_msg_req *reading_find(struct percs_msg *m, uint64_t ud)
{
	struct pm_link *l;

	for (l = m->reading.next; l != &m->reading; l = l->next)
		if ((uintptr_t)pm_container(l, struct percs_msg_req, link) == ud)
			return pm_container(l, struct percs_msg_req, link);
	return NULL;
}

static int read_done(struct percs_msg *m, struct percs_msg_req *r, int res)
{
	size_t n = r->rts.len < r->len ? r->rts.len : r->len;

	pm_list_del(&r->link);
	m->reads--;
	pm_mr_put(m, r->mr);
	r->mr = 0;
	return rndv_complete(m, r, res ? 0 : n, res);
}

int pm_cq_drain(struct percs_msg *m)
{
	struct percs_cqe cqe[16];
	int n, i, ret;

	for (;;) {
		n = percs_cq_poll(m->w, cqe, 16);
		if (n == -EOVERFLOW && m->watch) {
			/*
			 * Refused packets to a peer that just died can fill
			 * the CQ before the launcher's word comes.  Once a
			 * peer failed the job is ending: carry on (a lost
			 * read completion is bounded by the grace period).
			 */
			ret = pm_watch(m, PM_WATCH_NOW);
			if (ret)
				return ret;
			if (m->nr_failed)
				continue;
		}
		if (n <= 0)
			return n;
		m->idle_rounds = 0;
		for (i = 0; i < n; i++) {
			struct percs_msg_req *r = NULL;

			if (cqe[i].kind == PERCS_PKT_RDMA &&
			    !(cqe[i].flags & PERCS_CQE_F_REMOTE))
				r = reading_find(m, cqe[i].user_data);
			if (r) {
				ret = read_done(m, r, cqe[i].res);
				if (ret)
					return ret;
			} else if (cqe[i].kind == PERCS_PKT_COLL) {
				/*
				 * A CAU tree's (its end, a descriptor's
				 * error): the application's, not ours; its
				 * library notices the end by itself.
				 */
				continue;
			} else if (cqe[i].res < 0 && !m->watch) {
				/* A packet of ours was refused: a peer is gone. */
				return cqe[i].res;
			} else if (cqe[i].res < 0) {
				/*
				 * In a job the launcher says which peer died
				 * (and it is ours that fail, not the endpoint).
				 */
				ret = pm_watch(m, PM_WATCH_NOW);
				if (ret)
					return ret;
			}
		}
	}
}

int percs_msg_irecv(struct percs_msg *m, void *buf, size_t cap, int src,
		    int tag, uint32_t ctx, struct percs_msg_req **req)
{
	struct percs_msg_req *r;
	struct pm_link *l;

	if (!m || !req || (cap && !buf) ||
	    (src != PERCS_MSG_ANY_SOURCE && (src < 0 || (unsigned int)src >= m->size)) ||
	    (tag != PERCS_MSG_ANY_TAG && tag < 0))
		return -EINVAL;
	if (m->error)
		return m->error;
	r = pm_req_get(m);
	if (!r)
		return -ENOMEM;
	pm_list_init(&r->link);
	r->m = m;
	r->kind = PM_REQ_RECV;
	r->state = PM_ST_POSTED;
	r->buf = buf;
	r->len = cap;
	r->peer = src;
	r->tag = tag;
	r->ctx = ctx;
	m->pending++;
	*req = r;

	for (l = m->unexpected.next; l != &m->unexpected; l = l->next) {
		struct pm_inmsg *im = pm_container(l, struct pm_inmsg, link);

		if (!req_matches(r, im->hdr.src, im->hdr.tag, im->hdr.ctx))
			continue;
		pm_list_del(&im->link);
		if (im->hdr.type == PM_EAGER)
			eager_complete(m, r, &im->hdr, im->data, true);
		else
			rts_matched(m, r, &im->hdr, &im->rts);
		free(im);
		return 0;
	}
	if (pm_peer_failed(m, src)) {
		/* It can never come: fail now, not after a wait. */
		r->status.source = src;
		r->status.tag = tag;
		r->status.error = -ECONNRESET;
		pm_req_done(r);
		return 0;
	}
	pm_list_add_tail(&m->posted, &r->link);
	return 0;
}

/* A matched eager message copied out without a request: status, credit. */
static void taken(struct percs_msg *m, const struct pm_hdr *h,
		  struct percs_msg_status *st)
{
	st->source = (int)h->src;
	st->tag = h->tag;
	st->len = h->len;
	st->msg_len = h->len;
	st->error = 0;
	pm_give_credit(m, h->src, PM_UNEXP_COST(h->len));
}

/*
 * The packet @ph at the head of the receive FIFO, received in place when
 * it is what a receive posted now would match at once: an eager message
 * that fits @cap, the next in order from its sender with nothing of that
 * sender's kept ahead of it.  Return: 1 received, 0 not such a packet.
 */
static int recv_in_place(struct percs_msg *m, const struct percs_pkt_hdr *ph,
			 void *buf, size_t cap, int src, int tag, uint32_t ctx,
			 struct percs_msg_status *st)
{
	const unsigned char *pl = (const unsigned char *)(ph + 1);
	struct pm_peer *p;
	struct pm_hdr h;

	if (ph->tag != PM_PKT_TAG || ph->length < sizeof(h))
		return 0;
	memcpy(&h, pl, sizeof(h));
	if (h.type != PM_EAGER || h.src >= m->size || h.len > cap ||
	    ph->length != sizeof(h) + h.len || h.ctx != ctx ||
	    (src != PERCS_MSG_ANY_SOURCE && (unsigned int)src != h.src) ||
	    (tag != PERCS_MSG_ANY_TAG && tag != h.tag))
		return 0;
	p = m->peers[h.src];
	if (!p || h.seq != p->recv_seq || !pm_list_empty(&p->ooo) ||
	    memcmp(&ph->src, &m->addrs[h.src], sizeof(ph->src)))
		return 0;
	if (h.len)
		memcpy(buf, pl + sizeof(h), h.len);
	/* The packet is ours now: a failing credit kick does not undo it. */
	percs_recv_consume(m->w);
	percs_recv_credit(m->w);
	p->recv_seq++;
	taken(m, &h, st);
	return 1;
}

/*
 * The first buffered message a receive posted now would match, taken
 * when it is eager and fits @cap.  Return: 1 taken, 0 none matches, -1
 * one matches that the request path must take (a rendezvous, too long).
 */
static int unexpected_take(struct percs_msg *m, void *buf, size_t cap,
			   int src, int tag, uint32_t ctx,
			   struct percs_msg_status *st)
{
	struct percs_msg_req want = { .peer = src, .tag = tag, .ctx = ctx };
	struct pm_link *l;

	for (l = m->unexpected.next; l != &m->unexpected; l = l->next) {
		struct pm_inmsg *im = pm_container(l, struct pm_inmsg, link);

		if (!req_matches(&want, im->hdr.src, im->hdr.tag, im->hdr.ctx))
			continue;
		if (im->hdr.type != PM_EAGER || im->hdr.len > cap)
			return -1;
		pm_list_del(&im->link);
		if (im->hdr.len)
			memcpy(buf, im->data, im->hdr.len);
		m->cnt.unexpected_now -= PM_UNEXP_COST(im->hdr.len);
		taken(m, &im->hdr, st);
		free(im);
		return 1;
	}
	return 0;
}

int percs_msg_recv_spin(struct percs_msg *m, void *buf, size_t cap, int src,
			int tag, uint32_t ctx, struct percs_msg_status *st)
{
	const struct percs_pkt_hdr *ph;
	uint64_t t0 = 0;
	unsigned int i;
	bool search;
	int ret;

	if (!m || !st || (cap && !buf) ||
	    (src != PERCS_MSG_ANY_SOURCE && (src < 0 || (unsigned int)src >= m->size)) ||
	    (tag != PERCS_MSG_ANY_TAG && tag < 0))
		return -EINVAL;
	if (m->error)
		return 0;
	search = true;
	for (i = 1;; i++) {
		/*
		 * An earlier receive or a buffered message comes first (the
		 * list is searched again after each round, which is what
		 * adds to it), and a failed peer is for the request path.
		 * Only a round changes any of them: they are looked at
		 * after one (@search), not at every look.
		 */
		if (search) {
			if (!pm_list_empty(&m->posted) || pm_peer_failed(m, src))
				return 0;
			ret = unexpected_take(m, buf, cap, src, tag, ctx, st);
			if (ret)
				return ret > 0 ? 1 : 0;
			search = false;
		}
		ph = percs_recv_peek(m->w);
		if (ph && recv_in_place(m, ph, buf, cap, src, tag, ctx, st))
			return 1;
		/* Anything else, and every PM_SPIN_PEEKS looks: a round. */
		if (!ph && i % PM_SPIN_PEEKS)
			continue;
		ret = percs_msg_progress(m);
		if (ret)
			return 0;
		search = true;
		if (!t0)
			t0 = pm_now_ns();
		else if (pm_now_ns() - t0 > PM_SPIN_NS)
			return 0;
	}
}

int percs_msg_iprobe(struct percs_msg *m, int src, int tag, uint32_t ctx,
		     struct percs_msg_status *st)
{
	struct percs_msg_req probe = { .peer = src, .tag = tag, .ctx = ctx };
	struct pm_link *l;
	int ret;

	if (!m || (src != PERCS_MSG_ANY_SOURCE &&
		   (src < 0 || (unsigned int)src >= m->size)) ||
	    (tag != PERCS_MSG_ANY_TAG && tag < 0))
		return -EINVAL;
	ret = percs_msg_progress(m);
	if (ret)
		return ret;
	for (l = m->unexpected.next; l != &m->unexpected; l = l->next) {
		struct pm_inmsg *im = pm_container(l, struct pm_inmsg, link);

		if (!req_matches(&probe, im->hdr.src, im->hdr.tag, im->hdr.ctx))
			continue;
		if (st) {
			st->source = (int)im->hdr.src;
			st->tag = im->hdr.tag;
			st->len = im->hdr.len;
			st->msg_len = im->hdr.len;
			st->error = 0;
		}
		return 1;
	}
	return 0;
}

int percs_msg_cancel(struct percs_msg_req *r)
{
	if (!r || r->kind != PM_REQ_RECV || r->state != PM_ST_POSTED)
		return 0;
	pm_list_del(&r->link);
	r->status.error = -ECANCELED;
	r->status.source = PERCS_MSG_ANY_SOURCE;
	r->status.tag = PERCS_MSG_ANY_TAG;
	pm_req_done(r);
	return 1;
}
