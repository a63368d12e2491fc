// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: the PGAS level of the remote atomics (percs_amo() and friends).
 *
 * Each operation becomes an atomic descriptor (atomic.c) that holds one of
 * the window's LP_AMO_SLOTS slots until its completion entry comes; the
 * entry names the slot in its user_data (struct lp_amo in internal.h).
 * Consecutive non-fetching ADD/AND/OR/XOR to the same registration, op and
 * width wait in w->amo.pend until PERCS_ATOMIC_MAX_PACKED of them fill one
 * packed descriptor, or until anything else comes.  Completions are taken
 * wherever the CQ is read (cq.c): in our waits, and in percs_cq_poll().
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "internal.h"

#define LP_AMO_SPINS	2000	/* CQ checks in a wait before sleeping */
/*
 * Then sleep in ppoll(2) and kick again: first 50 us, doubling to 1 ms
 * while nothing comes - the kernel's resend timeout (50 us doubling to
 * 20 ms), so that in kick mode our kicks run the first resends when due.
 */
#define LP_AMO_SLEEP_MIN_US	50
#define LP_AMO_SLEEP_MAX_US	1000
#define LP_AMO_TRIES	64	/* full send FIFO: retries without progress */
#define LP_AMO_LOST_MS	5000	/* default of struct lp_amo.lost_ms */

static uint64_t width_mask(unsigned int width)
{
	return width >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (width * 8)) - 1;
}

/* The value of @width bytes at @p (as the HFI stores it: host order). */
static uint64_t load_width(const void *p, unsigned int width)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (width) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static void store_width(void *p, unsigned int width, uint64_t v)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (width) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static void slot_free(struct lp_amo *a, unsigned int i)
{
	a->busy &= ~(1ULL << i);
	a->outstanding--;
}

/*
 * Map and register the result area.  Mapped rather than malloc'ed: a value
 * the HFI writes after the window's release lands in the still-pinned
 * page, never in memory handed out again.
 */
static int amo_results(struct percs_window *w)
{
	struct lp_amo *a = &w->amo;
	size_t len = 4096;
	void *p;
	int ret;

	if (a->results)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ret = percs_mr_reg(w, p, LP_AMO_SLOTS * sizeof(uint64_t),
			   PERCS_ACCESS_LOCAL_WRITE, &a->results_mr);
	if (ret) {
		munmap(p, len);
		return ret;
	}
	a->results = p;
	a->results_len = len;
	return 0;
}

void lp_amo_complete(struct percs_window *w, const struct percs_cqe *c)
{
	struct lp_amo *a = &w->amo;
	unsigned int i = (unsigned int)c->user_data & (LP_AMO_SLOTS - 1);
	uint32_t gen = (uint32_t)c->user_data >> LP_AMO_IDX_BITS;
	struct lp_amo_slot *s = &a->slot[i];

	/* Stale: its slot was declared lost after a CQ overflow. */
	if (!(a->busy & (1ULL << i)) || s->gen != gen || s->done)
		return;
	if (!c->res && s->fetched && a->results)
		store_width(s->fetched, s->width, a->results[i]);
	if (s->block) {
		s->done = true;
		s->res = c->res;
		return;
	}
	if (c->res && !a->first_err)
		a->first_err = c->res;
	slot_free(a, i);
}

void lp_amo_release(struct percs_window *w)
{
	struct lp_amo *a = &w->amo;

	if (!a->results)
		return;
	percs_mr_dereg(w, a->results_mr);
	munmap(a->results, a->results_len);
	a->results = NULL;
}

/* ---- waiting -------------------------------------------------------------- */

enum amo_until {
	AMO_DONE,	/* slot i has completed */
	AMO_ROOM,	/* a slot is free */
	AMO_IDLE,	/* nothing in flight */
};

static bool amo_reached(const struct lp_amo *a, enum amo_until u,
			unsigned int i)
{
	switch (u) {
	case AMO_DONE:
		return a->slot[i].done;
	case AMO_ROOM:
		return a->outstanding < LP_AMO_SLOTS;
	default:
		return !a->outstanding;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The kernel posts one entry per descriptor, but a full CQ drops entries.
 * When it has dropped some since a descriptor still in flight was sent and
 * nothing came for lost_ms, declare those descriptors lost (-EOVERFLOW);
 * their slots' generations make a late entry harmless.  *@since is when
 * this wait first saw the overflow (-1: not yet).
 */
static void amo_check_lost(struct percs_window *w, int64_t *since)
{
	struct lp_amo *a = &w->amo;
	uint64_t ovf = lp_load_relaxed(&w->status->cq_overflows);
	unsigned int lost_ms = a->lost_ms ? a->lost_ms : LP_AMO_LOST_MS;
	bool suspect = false;

	for (unsigned int i = 0; i < LP_AMO_SLOTS; i++)
		if ((a->busy & (1ULL << i)) && !a->slot[i].done &&
		    a->slot[i].ovf != ovf)
			suspect = true;
	if (!suspect)
		return;
	if (*since < 0) {
		*since = (int64_t)now_ms();
		return;
	}
	if (now_ms() - (uint64_t)*since < lost_ms)
		return;
	for (unsigned int i = 0; i < LP_AMO_SLOTS; i++) {
		struct lp_amo_slot *s = &a->slot[i];

		if (!(a->busy & (1ULL << i)) || s->done || s->ovf == ovf)
			continue;
		if (s->block) {
			s->done = true;
			s->res = -EOVERFLOW;
			continue;
		}
		if (!a->first_err)
			a->first_err = -EOVERFLOW;
		slot_free(a, i);
	}
	*since = -1;
}

/*
 * Take completions until @u holds.  Kick mode: each round rings the
 * doorbell, which runs the engine and its retransmissions; poll mode:
 * wakes the polling engine if it sleeps.  Then spin on the CQ a little,
 * then sleep in ppoll(2), longer each time nothing came.  The kernel
 * answers every descriptor (-ETIMEDOUT at worst), so this ends.
 */
static int amo_wait(struct percs_window *w, enum amo_until u, unsigned int i)
{
	unsigned int us = LP_AMO_SLEEP_MIN_US;
	int64_t since = -1;
	int ret;

	for (;;) {
		ret = lp_cq_drain(w);
		if (ret)
			return ret;
		if (amo_reached(&w->amo, u, i))
			return 0;
		ret = w->poll ? lp_notify(w, PERCS_KICK_F_SEND) :
				w->doorbell(w, PERCS_KICK_F_SEND);
		if (ret < 0)
			return ret;
		for (unsigned int n = 0;
		     n < LP_AMO_SPINS && !lp_cq_ring_pending(w); n++)
			lp_cpu_relax();
		if (lp_cq_ring_pending(w)) {
			us = LP_AMO_SLEEP_MIN_US;
			continue;
		}
		amo_check_lost(w, &since);
		if (amo_reached(&w->amo, u, i))
			return 0;
		ret = lp_sleep_us(w, us);
		if (ret)
			return ret;
		if (us < LP_AMO_SLEEP_MAX_US)
			us *= 2;
	}
}

/* ---- sending -------------------------------------------------------------- */

/*
 * Post @wr; while the send FIFO is full, take completions and retry, as
 * long as the HFI makes progress (a target whose receive FIFO stays full
 * blocks ours: then -EAGAIN).
 */
static int amo_post(struct percs_window *w, const struct percs_atomic_wr *wr)
{
	unsigned int tries = 0;

	for (;;) {
		uint64_t head = lp_load_acquire(&w->status->send_head);
		int ret = lp_atomic_post(w, wr);

		if (ret != -EAGAIN)
			return ret;
		if (lp_load_acquire(&w->status->send_head) != head)
			tries = 0;
		else if (++tries >= LP_AMO_TRIES)
			return -EAGAIN;
		ret = lp_cq_drain(w);
		if (ret)
			return ret;
		for (unsigned int n = 0; n < LP_AMO_SPINS; n++)
			lp_cpu_relax();
	}
}

/*
 * Send @wr in a free slot (waiting for one if all are in flight), which
 * completes into @fetched.  *@idx is the slot, or LP_AMO_SLOTS when
 * nothing was sent.  A kick that fails after the compose leaves the
 * descriptor to the HFI: its slot is taken (without @fetched: the caller
 * sees the error) and the error returned.
 */
static int amo_send(struct percs_window *w, struct percs_atomic_wr *wr,
		    void *fetched, bool block, unsigned int *idx)
{
	struct lp_amo *a = &w->amo;
	uint64_t tail, ovf;
	unsigned int i;
	uint32_t gen;
	int ret;

	*idx = LP_AMO_SLOTS;
	if (a->outstanding >= LP_AMO_SLOTS) {
		ret = amo_wait(w, AMO_ROOM, 0);
		if (ret)
			return ret;
	}
	i = (unsigned int)__builtin_ctzll(~a->busy);
	gen = (a->gen + 1) & LP_AMO_GEN_MASK;
	wr->user_data = (uint64_t)PERCS_AMO_USER_DATA_TAG << 32 |
			(uint64_t)gen << LP_AMO_IDX_BITS | i;
	if (wr->flags & PERCS_ATOMIC_F_FETCH) {
		wr->result_handle = a->results_mr;
		wr->result_addr = &a->results[i];
	}
	/* Before the post: a kick-mode engine may complete it inside. */
	ovf = lp_load_relaxed(&w->status->cq_overflows);
	tail = w->sq.tail;
	ret = amo_post(w, wr);
	if (ret && w->sq.tail == tail)
		return ret;
	a->gen = gen;
	a->busy |= 1ULL << i;
	a->outstanding++;
	a->slot[i] = (struct lp_amo_slot) {
		.fetched = ret ? NULL : fetched,
		.gen = gen,
		.width = wr->width,
		.block = block && !ret,
		.ovf = ovf,
	};
	*idx = i;
	return ret;
}

/* Send the packed descriptor being filled, if any; kept when not sent. */
int lp_amo_flush(struct percs_window *w)
{
	struct percs_atomic_wr *p = &w->amo.pend;
	unsigned int i;
	int ret;

	if (!p->count)
		return 0;
	ret = amo_send(w, p, NULL, false, &i);
	if (i < LP_AMO_SLOTS)
		p->count = 0;
	return ret;
}

static bool same_window(const struct percs_addr *a, const struct percs_addr *b)
{
	return a->hub == b->hub && a->hfi == b->hfi && a->window == b->window;
}

/*
 * Add a non-fetching ADD/AND/OR/XOR to the packed descriptor, sending the
 * one being filled first if this operation cannot join it, and sending it
 * when full.  Once added, the operation is accepted: a full descriptor
 * that cannot be sent now goes with the next call or the quiet, and
 * another error of sending it is the quiet's.
 */
static int amo_pack(struct percs_window *w, const struct percs_rmr *r,
		    uint64_t addr, unsigned int op, unsigned int width,
		    uint64_t value)
{
	struct lp_amo *a = &w->amo;
	struct percs_atomic_wr *p = &a->pend;
	int ret;

	if (p->count && (p->count == PERCS_ATOMIC_MAX_PACKED || p->op != op ||
			 p->width != width || p->handle != r->handle ||
			 !same_window(&p->dst, &r->win))) {
		ret = lp_amo_flush(w);
		if (ret)
			return ret;
	}
	if (!p->count) {
		memset(p, 0, sizeof(*p));
		p->op = (uint8_t)op;
		p->width = (uint8_t)width;
		p->route = PERCS_ROUTE_DIRECT;
		p->dst = r->win;
		p->handle = r->handle;
	}
	p->ops[p->count++] = (struct percs_atomic_op){
		.addr = addr, .operand = value,
	};
	if (p->count < PERCS_ATOMIC_MAX_PACKED)
		return 0;
	ret = lp_amo_flush(w);
	if (ret && ret != -EAGAIN && !a->first_err)
		a->first_err = ret;
	return 0;
}

/*
 * A blocking single operation with nothing in its way (no packed
 * descriptor waiting, a slot free, the result area mapped), the PGAS
 * latency path: composed in place at the send FIFO's tail (one unit, so
 * never a pad), and its completion entry - in kick mode already in the CQ
 * when the doorbell returns - taken at the head of the CQ.  Its slot is
 * filled in only when the entry is not there: then the common wait takes
 * over and needs it.  Return: as percs_amo(), or 1 when the send FIFO has
 * no free unit (nothing sent: the common path waits for room).
 */
static int amo_blocking(struct percs_window *w, const struct percs_rmr *r,
			uint64_t addr, unsigned int op, unsigned int width,
			uint64_t value, uint64_t cond, void *fetched)
{
	struct lp_amo *a = &w->amo;
	struct lp_sq *q = &w->sq;
	bool cswap = op == PERCS_ATOMIC_CSWAP;
	unsigned int i = (unsigned int)__builtin_ctzll(~a->busy);
	uint32_t gen = (a->gen + 1) & LP_AMO_GEN_MASK;
	uint64_t user_data = (uint64_t)PERCS_AMO_USER_DATA_TAG << 32 |
			     (uint64_t)gen << LP_AMO_IDX_BITS | i;
	struct percs_atomic_ext *e;
	const struct percs_cqe *c;
	struct percs_atomic_op *o;
	struct percs_pkt_hdr *h;
	uint64_t ovf;
	int ret;

	_Static_assert(PERCS_PKT_HDR_SIZE + PERCS_ATOMIC_LEN(1) +
		       sizeof(uint64_t) <= PERCS_FLIT_SIZE, "one unit");
	if (lp_unlikely(q->tail - q->head >= q->units)) {
		q->head = lp_load_acquire(&w->status->send_head);
		if (q->tail - q->head >= q->units)
			return 1;
	}
	h = (struct percs_pkt_hdr *)(q->base +
				     (size_t)(q->tail & q->mask) *
				     PERCS_FLIT_SIZE);
	*h = (struct percs_pkt_hdr) {
		.kind = PERCS_PKT_ATOMIC,
		.route = PERCS_ROUTE_DIRECT,
		.length = (uint16_t)(PERCS_ATOMIC_LEN(1) +
				     (cswap ? sizeof(cond) : 0)),
		.dst = r->win,
		.tag = (uint32_t)user_data,
	};
	e = (struct percs_atomic_ext *)(h + 1);
	*e = (struct percs_atomic_ext) {
		.op = (uint8_t)op,
		.width = (uint8_t)width,
		.count = 1,
		.flags = fetched ? PERCS_ATOMIC_F_FETCH : 0,
		.handle = r->handle,
		.user_data = user_data,
		.result_addr = fetched ? (uint64_t)(uintptr_t)&a->results[i] : 0,
		.result_handle = fetched ? a->results_mr : 0,
	};
	o = (struct percs_atomic_op *)(e + 1);
	*o = (struct percs_atomic_op) { .addr = addr, .operand = value };
	if (cswap)
		memcpy(o + 1, &cond, sizeof(cond));
	q->tail++;
	a->gen = gen;
	/* Before the kick: a kick-mode engine completes it inside. */
	ovf = lp_load_relaxed(&w->status->cq_overflows);
	lp_store_release(&w->db->send_tail, q->tail);
	ret = lp_notify(w, PERCS_KICK_F_SEND);
	if (!ret && lp_load_acquire(&w->status->cq_tail) != w->cq.head) {
		c = &w->cq.ring[w->cq.head & w->cq.mask];
		if (c->user_data == user_data && c->kind == PERCS_PKT_ATOMIC) {
			ret = c->res;
			if (!ret && fetched)
				store_width(fetched, width, a->results[i]);
			w->cq.head++;
			lp_store_release(&w->db->cq_head, w->cq.head);
			return ret;
		}
	}
	a->busy |= 1ULL << i;
	a->outstanding++;
	a->slot[i] = (struct lp_amo_slot) {
		.fetched = ret ? NULL : fetched,
		.gen = gen,
		.width = (uint8_t)width,
		.block = !ret,
		.ovf = ovf,
	};
	if (ret)
		return ret;	/* the HFI has it: its completion frees the slot */
	ret = amo_wait(w, AMO_DONE, i);
	if (a->slot[i].done) {
		ret = a->slot[i].res;
		slot_free(a, i);
		return ret;
	}
	/* Left in flight: its completion frees the slot, stores nothing. */
	a->slot[i].block = false;
	a->slot[i].fetched = NULL;
	return ret;
}

/* ---- the API -------------------------------------------------------------- */

int percs_amo(struct percs_window *w, const struct percs_rmr *r, uint64_t off,
	      unsigned int op, unsigned int width, uint64_t value,
	      uint64_t cond, void *fetched, unsigned int flags)
{
	bool block = flags & PERCS_AMO_F_BLOCK;
	struct percs_atomic_wr wr;
	struct lp_amo_slot *s;
	uint64_t addr, mask;
	unsigned int i;
	int ret;

	if (!w || !r || r->reserved || op > PERCS_ATOMIC_OP_MAX ||
	    (width != 1 && width != 2 && width != 4 && width != 8) ||
	    (flags & ~PERCS_AMO_F_BLOCK))
		return -EINVAL;
	mask = width_mask(width);
	if ((value & ~mask) || (op == PERCS_ATOMIC_CSWAP && (cond & ~mask)))
		return -EINVAL;
	if (off > r->length || width > r->length - off)
		return -ERANGE;
	addr = r->base + off;
	if (addr & (width - 1))
		return -EINVAL;
	if (!fetched && !block && op != PERCS_ATOMIC_CSWAP &&
	    w->amo.packing == PERCS_PACK_AUTO)
		return amo_pack(w, r, addr, op, width, value);
	if (block && !w->amo.pend.count &&
	    w->amo.outstanding < LP_AMO_SLOTS && (!fetched || w->amo.results)) {
		ret = amo_blocking(w, r, addr, op, width, value, cond, fetched);
		if (ret <= 0)
			return ret;
	}

	ret = lp_amo_flush(w);
	if (ret)
		return ret;
	if (fetched) {
		ret = amo_results(w);
		if (ret)
			return ret;
	}
	memset(&wr, 0, sizeof(wr));
	wr.op = (uint8_t)op;
	wr.width = (uint8_t)width;
	wr.count = 1;
	wr.flags = fetched ? PERCS_ATOMIC_F_FETCH : 0;
	wr.route = PERCS_ROUTE_DIRECT;
	wr.dst = r->win;
	wr.handle = r->handle;
	wr.compare = op == PERCS_ATOMIC_CSWAP ? cond : 0;
	wr.ops[0] = (struct percs_atomic_op){ .addr = addr, .operand = value };
	ret = amo_send(w, &wr, fetched, block, &i);
	if (ret || !block)
		return ret;

	ret = amo_wait(w, AMO_DONE, i);
	s = &w->amo.slot[i];
	if (s->done) {
		ret = s->res;
		slot_free(&w->amo, i);
		return ret;
	}
	/* Left in flight: its completion frees the slot, stores nothing. */
	s->block = false;
	s->fetched = NULL;
	return ret;
}

int percs_amo_swap(struct percs_window *w, const struct percs_rmr *r,
		   uint64_t off, unsigned int width, uint64_t value, void *old)
{
	uint64_t expect = 0, seen = 0, got;
	int ret;

	/* Guess 0 first: one round trip when it is right, two otherwise. */
	for (;;) {
		ret = percs_amo(w, r, off, PERCS_ATOMIC_CSWAP, width, value,
				expect, &seen, PERCS_AMO_F_BLOCK);
		if (ret)
			return ret;
		got = load_width(&seen, width);
		if (got == expect)
			break;
		expect = got;
	}
	if (old)
		store_width(old, width, expect);
	return 0;
}

int percs_atomic_quiet(struct percs_window *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	ret = lp_amo_flush(w);
	if (ret)
		return ret;
	if (w->amo.outstanding) {
		ret = amo_wait(w, AMO_IDLE, 0);
		if (ret)
			return ret;
	}
	ret = w->amo.first_err;
	w->amo.first_err = 0;
	return ret;
}

int percs_atomic_set_packing(struct percs_window *w, unsigned int mode)
{
	if (!w || mode > PERCS_PACK_OFF)
		return -EINVAL;
	w->amo.packing = mode;
	return mode == PERCS_PACK_OFF ? lp_amo_flush(w) : 0;
}
