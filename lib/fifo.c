// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: FIFO send (compose, trigger) and receive (peek, consume, credit).
 *
 * Both FIFOs are rings of 128-byte units addressed by free-running 64-bit
 * positions.  A packet never wraps: when it does not fit before the end of
 * the ring, a PERCS_PKT_PAD entry fills the rest and the packet starts at
 * unit 0.
 *
 * The library's collectives share the receive FIFO with the application:
 * wherever it is read, their packets (results of the library's CAU trees,
 * messages of its software groups) are handed to them (lp_coll_claim())
 * and never returned; the others that the library meets while it waits
 * for its own are kept in the receive stash, in order, which percs_recv()
 * and percs_recv_peek() empty first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static inline struct percs_pkt_hdr *sq_entry(const struct lp_sq *q,
					     uint32_t pos)
{
	return (struct percs_pkt_hdr *)(q->base + (size_t)pos * PERCS_FLIT_SIZE);
}

/* Free units in the send FIFO as of the last send_head we read. */
static inline uint64_t sq_free(const struct lp_sq *q)
{
	uint64_t used = q->tail - q->head;

	/* A head beyond our tail is the HFI's bug; treat it as no room. */
	return used > q->units ? 0 : q->units - used;
}

/*
 * Reserve room for one packet (header @h, @len payload bytes) at the send
 * FIFO's tail, inserting a pad entry first when it would wrap, and write
 * the header.  *@payload is set to the @len contiguous bytes after the
 * header, which the caller fills.  Nothing is visible to the HFI until the
 * next trigger.  Return: 0, or -EAGAIN when the FIFO has no room (nothing
 * written, the tail unchanged).
 */
static int sq_reserve(struct percs_window *w, const struct percs_pkt_hdr *h,
		      size_t len, void **payload)
{
	struct lp_sq *q = &w->sq;
	uint32_t n = lp_pkt_units(len);
	uint32_t pos = q->tail & q->mask;
	uint32_t pad = n > q->units - pos ? q->units - pos : 0;
	struct percs_pkt_hdr *e;

	if (lp_unlikely(sq_free(q) < pad + n)) {
		q->head = lp_load_acquire(&w->status->send_head);
		if (sq_free(q) < pad + n)
			return -EAGAIN;
	}
	if (pad) {
		struct percs_pkt_hdr ph = {
			.kind = PERCS_PKT_PAD,
			.length = lp_pad_length(pad),
		};

		memcpy(sq_entry(q, pos), &ph, sizeof(ph));
		q->tail += pad;
		pos = 0;
	}
	e = sq_entry(q, pos);
	memcpy(e, h, sizeof(*h));
	q->tail += n;
	*payload = e + 1;
	return 0;
}

/* Reserve, then copy the payload @buf of @len bytes in. */
static int sq_compose(struct percs_window *w, const struct percs_pkt_hdr *h,
		      const void *buf, size_t len)
{
	void *p;
	int ret = sq_reserve(w, h, len, &p);

	if (!ret && len)
		memcpy(p, buf, len);
	return ret;
}

/* The header of a direct-route FIFO packet, arguments checked. */
static int fifo_hdr(struct percs_pkt_hdr *h, const struct percs_addr *dst,
		    size_t len, uint32_t tag, unsigned int flags)
{
	if (lp_unlikely(len > PERCS_MAX_PAYLOAD))
		return -EMSGSIZE;
	if (lp_unlikely(!dst || (flags & ~PERCS_PKT_F_ALL)))
		return -EINVAL;
	*h = (struct percs_pkt_hdr) {
		.kind = PERCS_PKT_FIFO,
		.route = PERCS_ROUTE_DIRECT,
		.flags = (uint16_t)flags,
		.length = (uint16_t)len,
		.dst = *dst,
		.tag = tag,
	};
	return 0;
}

int percs_send_compose(struct percs_window *w, const struct percs_addr *dst,
		       const void *buf, size_t len, uint32_t tag,
		       unsigned int flags)
{
	struct percs_pkt_hdr h;
	int ret = fifo_hdr(&h, dst, len, tag, flags);

	if (lp_unlikely(ret))
		return ret;
	if (lp_unlikely(len && !buf))
		return -EINVAL;
	ret = lp_cq_room(w, lp_pkt_asks(flags));
	if (lp_unlikely(ret))
		return ret;
	ret = sq_compose(w, &h, buf, len);
	lp_cq_owe(w, lp_pkt_asks(flags), ret);
	return ret;
}

int percs_send_reserve(struct percs_window *w, const struct percs_addr *dst,
		       size_t len, uint32_t tag, unsigned int flags,
		       void **payload)
{
	struct percs_pkt_hdr h;
	int ret;

	if (lp_unlikely(!payload))
		return -EINVAL;
	*payload = NULL;
	ret = fifo_hdr(&h, dst, len, tag, flags);
	if (!ret)
		ret = lp_cq_room(w, lp_pkt_asks(flags));
	if (lp_unlikely(ret))
		return ret;
	ret = sq_reserve(w, &h, len, payload);
	lp_cq_owe(w, lp_pkt_asks(flags), ret);
	return ret;
}

int percs_send_compose_hdr(struct percs_window *w,
			   const struct percs_pkt_hdr *hdr,
			   const void *buf, size_t len)
{
	struct percs_pkt_hdr h;
	bool asks;
	int ret;

	if (len > PERCS_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (!hdr || (len && !buf) || hdr->kind == PERCS_PKT_PAD)
		return -EINVAL;
	h = *hdr;
	h.length = (uint16_t)len;
	/* RDMA and atomic descriptors always post an entry. */
	asks = lp_pkt_asks(h.flags) || h.kind == PERCS_PKT_RDMA ||
	       h.kind == PERCS_PKT_ATOMIC;
	ret = lp_cq_room(w, asks);
	if (ret)
		return ret;
	ret = sq_compose(w, &h, buf, len);
	lp_cq_owe(w, asks, ret);
	return ret;
}

/*
 * sq_reserve(); when the FIFO is full, publish what is queued, let the
 * engine drain it (the doorbell) and try once more.
 */
static int sq_reserve_kicked(struct percs_window *w,
			     const struct percs_pkt_hdr *h, size_t len,
			     void **payload)
{
	int ret = sq_reserve(w, h, len, payload);

	if (ret == -EAGAIN) {
		lp_store_release(&w->db->send_tail, w->sq.tail);
		ret = w->doorbell(w, PERCS_KICK_F_SEND);
		if (ret < 0)
			return ret;
		ret = sq_reserve(w, h, len, payload);
	}
	return ret;
}

int lp_desc_reserve(struct percs_window *w, const struct percs_pkt_hdr *h,
		    void **payload)
{
	if (lp_unlikely(h->length > PERCS_MAX_PAYLOAD))
		return -EMSGSIZE;
	return sq_reserve_kicked(w, h, h->length, payload);
}

int lp_desc_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		 const void *buf, size_t len)
{
	struct percs_pkt_hdr hl = *h;
	void *p;
	int ret;

	hl.length = (uint16_t)len;
	if (lp_unlikely(len > PERCS_MAX_PAYLOAD))
		return -EMSGSIZE;
	ret = lp_desc_reserve(w, &hl, &p);
	if (ret)
		return ret;
	memcpy(p, buf, len);
	return percs_send_trigger(w);
}

int percs_send_trigger(struct percs_window *w)
{
	lp_store_release(&w->db->send_tail, w->sq.tail);
	return lp_notify(w, PERCS_KICK_F_SEND);
}

int percs_send(struct percs_window *w, const struct percs_addr *dst,
	       const void *buf, size_t len, uint32_t tag, unsigned int flags)
{
	struct percs_pkt_hdr h;
	void *p;
	int ret = fifo_hdr(&h, dst, len, tag, flags);

	if (!ret && lp_unlikely(len && !buf))
		ret = -EINVAL;
	if (!ret)
		ret = lp_cq_room(w, lp_pkt_asks(flags));
	if (lp_unlikely(ret))
		return ret;
	ret = sq_reserve_kicked(w, &h, len, &p);
	if (ret)
		return ret;
	lp_cq_owe(w, lp_pkt_asks(flags), 0);
	if (len)
		memcpy(p, buf, len);
	return percs_send_trigger(w);
}

size_t percs_send_space(const struct percs_window *w)
{
	struct lp_sq q = w->sq;
	uint64_t free, contig, n;

	q.head = lp_load_acquire(&w->status->send_head);
	free = sq_free(&q);
	contig = q.units - (q.tail & q.mask);
	/* Largest packet at the tail, or after a pad at unit 0. */
	n = free < contig ? free : contig;
	if (free > contig && free - contig > n)
		n = free - contig;
	if (n > PERCS_MAX_PKT_UNITS)
		n = PERCS_MAX_PKT_UNITS;
	return n ? n * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE : 0;
}

/*
 * The entry at the receive head, pad entries skipped (and consumed), and
 * so are the packets of the library's collectives (handed to them).
 * Return: 0 and *@out, -EAGAIN if the FIFO is empty, -EIO if the HFI
 * published an index or an entry that cannot be right, -ENOMEM if a
 * collective could not keep its packet (left in the FIFO).
 */
static int rq_next(struct percs_window *w, const struct percs_pkt_hdr **out)
{
	struct lp_rq *q = &w->rq;

	q->peeked = 0;
	for (;;) {
		const struct percs_pkt_hdr *h;
		uint32_t pos, to_end, n;
		uint64_t avail;
		uint16_t len;

		if (q->head == q->tail) {
			q->tail = lp_load_acquire(&w->status->recv_tail);
			if (q->head == q->tail)
				return -EAGAIN;
		}
		avail = q->tail - q->head;
		if (lp_unlikely(avail > q->units))
			return -EIO;
		pos = q->head & q->mask;
		to_end = q->units - pos;
		h = (const struct percs_pkt_hdr *)(q->base +
						   (size_t)pos * PERCS_FLIT_SIZE);
		if (h->kind == PERCS_PKT_PAD) {
			/* A pad always fills the ring to its end. */
			if (lp_unlikely(avail < to_end))
				return -EIO;
			q->head += to_end;
			continue;
		}
		len = h->length;
		n = lp_pkt_units(len);
		if (lp_unlikely(len > PERCS_MAX_PAYLOAD || n > to_end ||
				n > avail))
			return -EIO;
		if (lp_unlikely(w->coll != NULL)) {
			int r = lp_coll_claim(w, h);

			if (r < 0)
				return r;
			if (r) {
				q->head += n;
				continue;
			}
		}
		q->peeked = n;
		*out = h;
		return 0;
	}
}

bool lp_recv_pending(struct percs_window *w)
{
	const struct percs_pkt_hdr *h;

	return w->rstash.count || rq_next(w, &h) == 0;
}

/* ---- the receive stash ---------------------------------------------------- */

static int rstash_push(struct percs_window *w, const struct percs_pkt_hdr *h)
{
	struct lp_rstash *st = &w->rstash;
	struct lp_rstash_ent *e = malloc(sizeof(*e) + h->length);

	if (!e)
		return -ENOMEM;
	e->next = NULL;
	memcpy(&e->hdr, h, sizeof(*h) + h->length);
	if (st->tail)
		st->tail->next = e;
	else
		st->head = e;
	st->tail = e;
	st->count++;
	return 0;
}

static void rstash_pop(struct lp_rstash *st)
{
	struct lp_rstash_ent *e = st->head;

	st->head = e->next;
	if (!st->head)
		st->tail = NULL;
	st->count--;
	st->peeked = false;
	free(e);
}

void lp_rstash_release(struct percs_window *w)
{
	while (w->rstash.head)
		rstash_pop(&w->rstash);
}

/*
 * Unlink and return the first kept packet that @match accepts (the caller
 * frees it), or NULL.  For a group created after its first messages came.
 */
struct lp_rstash_ent *lp_rstash_take(struct percs_window *w,
		bool (*match)(const struct percs_pkt_hdr *h, void *arg),
		void *arg)
{
	struct lp_rstash *st = &w->rstash;
	struct lp_rstash_ent **pp, *prev = NULL;

	for (pp = &st->head; *pp; prev = *pp, pp = &(*pp)->next) {
		struct lp_rstash_ent *e = *pp;

		if (!match(&e->hdr, arg))
			continue;
		*pp = e->next;
		if (st->tail == e)
			st->tail = prev;
		st->count--;
		st->peeked = false;
		return e;
	}
	return NULL;
}

/* Hand back consumed receive space as percs_recv() does. */
static void rq_credit_lazy(struct percs_window *w)
{
	struct lp_rq *q = &w->rq;

	if (q->head - q->credited >= q->batch ||
	    (lp_load_relaxed(&w->status->flags) & PERCS_STATUS_SENDERS_WAIT) ||
	    (q->head != q->credited &&
	     q->head == lp_load_acquire(&w->status->recv_tail)))
		percs_recv_credit(w);
}

/*
 * Empty the receive FIFO: the collectives' packets go to them, every other
 * one to the stash.  Credits are returned as percs_recv() does, and when
 * the FIFO is empty.  Return: packets stashed, or -errno (-EIO, -ENOMEM).
 */
int lp_recv_drain(struct percs_window *w)
{
	const struct percs_pkt_hdr *h;
	int n = 0, ret;

	while ((ret = rq_next(w, &h)) == 0) {
		ret = rstash_push(w, h);
		if (ret)
			break;
		/*
		 * Past the FIFO's packet, never percs_recv_consume(): after
		 * an application's peek at the stash without a consume, that
		 * would drop the stash's head and keep this packet twice.
		 */
		w->rq.head += w->rq.peeked;
		w->rq.peeked = 0;
		n++;
	}
	rq_credit_lazy(w);
	return ret == -EAGAIN ? n : ret;
}

const struct percs_pkt_hdr *percs_recv_peek(struct percs_window *w)
{
	const struct percs_pkt_hdr *h;

	if (w->rstash.head) {
		w->rstash.peeked = true;
		return &w->rstash.head->hdr;
	}
	if (!rq_next(w, &h))
		return h;
	/*
	 * Auto mode: the answer may wait on our own request; a failed kick
	 * leaves the window's error, which the next send or wait reports.
	 */
	if (lp_unlikely(w->au.on))
		(void)lp_auto_progress(w);
	return NULL;
}

void percs_recv_consume(struct percs_window *w)
{
	if (w->rstash.peeked) {
		rstash_pop(&w->rstash);
		return;
	}
	w->rq.head += w->rq.peeked;
	w->rq.peeked = 0;
}

int percs_recv_credit(struct percs_window *w)
{
	struct lp_rq *q = &w->rq;
	int ret;

	if (q->head != q->credited) {
		lp_store_release(&w->db->recv_head, q->head);
		q->credited = q->head;
	}
	/* Pairs with the HFI's SENDERS_WAIT store, barrier, head re-check. */
	lp_smp_mb();
	if (!(lp_load_relaxed(&w->status->flags) & PERCS_STATUS_SENDERS_WAIT))
		return 0;
	ret = w->kick(w, PERCS_KICK_F_CREDIT);
	return ret < 0 ? ret : 0;
}

/* Copy packet @h out: its header to @hdr (if wanted), its payload to @buf. */
static int recv_copy_out(const struct percs_pkt_hdr *h,
			 struct percs_pkt_hdr *hdr, void *buf, size_t cap)
{
	uint16_t len = h->length;

	if (len > cap)
		return -EMSGSIZE;
	if (hdr)
		memcpy(hdr, h, sizeof(*hdr));
	if (len)
		memcpy(buf, h + 1, len);
	return len;
}

int percs_recv(struct percs_window *w, struct percs_pkt_hdr *hdr, void *buf,
	       size_t cap)
{
	struct lp_rq *q = &w->rq;
	const struct percs_pkt_hdr *h;
	uint16_t len;
	int ret;

	if (w->rstash.head) {
		ret = recv_copy_out(&w->rstash.head->hdr, hdr, buf, cap);
		if (ret >= 0)
			rstash_pop(&w->rstash);
		return ret;
	}
	ret = rq_next(w, &h);
	if (ret) {
		/* Idle: hand back whatever we still hold. */
		if (ret == -EAGAIN && q->head != q->credited)
			percs_recv_credit(w);
		/* Auto mode: the answer may wait on our own unsent request. */
		if (ret == -EAGAIN && lp_unlikely(w->au.on)) {
			int k = lp_auto_progress(w);

			if (k)
				return k;
		}
		return ret;
	}
	ret = recv_copy_out(h, hdr, buf, cap);
	if (ret < 0)
		return ret;
	len = (uint16_t)ret;
	percs_recv_consume(w);

	/*
	 * Credits are returned in batches of a quarter ring (never more than
	 * half is held back), or at once when senders wait for them.  The
	 * packet is already ours: a failing credit kick does not undo it.
	 */
	if (q->head - q->credited >= q->batch ||
	    (lp_load_relaxed(&w->status->flags) & PERCS_STATUS_SENDERS_WAIT))
		percs_recv_credit(w);
	return len;
}
