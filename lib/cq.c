// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: completion queue and error texts.
 *
 * The PGAS atomics (pgas.c) share the window's CQ with everything else:
 * their entries are recognised by user_data and handed to pgas.c wherever
 * they are met; the others that the library meets while it waits for its
 * own go to a stash, which percs_cq_poll() empties first.
 *
 * Overflow: the HFI drops an entry the ring has no room for and counts it
 * in the status page; percs_cq_poll() says so once (-EOVERFLOW) for every
 * new count it finds there.  percs_cq_limit() keeps a program's own
 * operations from getting there: the operations that ask for an entry
 * (lp_cq_room(), lp_cq_owe()) are refused with -ENOBUFS while the limit
 * of them is owed, and percs_cq_poll() pays one back per entry it returns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Entries posted and not consumed, bounded by the ring size. */
static inline uint32_t cq_ready(struct percs_window *w)
{
	uint64_t n = lp_load_acquire(&w->status->cq_tail) - w->cq.head;

	return n > w->cq.entries ? w->cq.entries : (uint32_t)n;
}

bool lp_cq_ring_pending(struct percs_window *w)
{
	return cq_ready(w) != 0;
}

bool lp_cq_pending(struct percs_window *w)
{
	return w->cq.stash_count || cq_ready(w) != 0;
}

/* Keep @c for percs_cq_poll(), after those kept before it. */
static int stash_push(struct lp_cq *q, const struct percs_cqe *c)
{
	if (q->stash_count == q->stash_cap) {
		uint32_t cap = q->stash_cap ? q->stash_cap * 2 : 64;
		struct percs_cqe *n;

		if (cap < q->stash_cap ||
		    !(n = malloc((size_t)cap * sizeof(*n))))
			return -ENOMEM;
		/* Unroll the old ring at the start of the new one. */
		for (uint32_t i = 0; i < q->stash_count; i++)
			n[i] = q->stash[(q->stash_head + i) & (q->stash_cap - 1)];
		free(q->stash);
		q->stash = n;
		q->stash_cap = cap;
		q->stash_head = 0;
	}
	q->stash[(q->stash_head + q->stash_count) & (q->stash_cap - 1)] = *c;
	q->stash_count++;
	return 0;
}

int lp_cq_drain(struct percs_window *w)
{
	struct lp_cq *q = &w->cq;
	uint32_t n = cq_ready(w), i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		struct percs_cqe c = q->ring[(q->head + i) & q->mask];

		if (lp_cqe_is_amo(&c)) {
			lp_amo_complete(w, &c);
		} else if (stash_push(q, &c)) {
			/* The entry stays in the ring for percs_cq_poll(). */
			ret = -ENOMEM;
			break;
		}
	}
	if (i) {
		q->head += i;
		lp_store_release(&w->db->cq_head, q->head);
	}
	return ret;
}

void lp_cq_release(struct percs_window *w)
{
	free(w->cq.stash);
	w->cq.stash = NULL;
	w->cq.stash_count = w->cq.stash_cap = 0;
}

int percs_cq_limit(struct percs_window *w, unsigned int max)
{
	if (!w || max > w->cq.entries)
		return -EINVAL;
	w->cq.limit = max;
	return 0;
}

/* One entry goes to the caller: an entry it asked for is paid back. */
static inline void cq_give(struct lp_cq *q, struct percs_cqe *to,
			   const struct percs_cqe *c)
{
	*to = *c;
	if (q->owed && !(c->flags & PERCS_CQE_F_UNASKED))
		q->owed--;
}

int percs_cq_poll(struct percs_window *w, struct percs_cqe *cqe, int max)
{
	struct lp_cq *q = &w->cq;
	uint32_t want, n = 0, ready, i;
	uint64_t head, overflows;

	if (max < 0 || (max && !cqe))
		return -EINVAL;
	overflows = lp_load_relaxed(&w->status->cq_overflows);
	if (lp_unlikely(overflows != q->overflows_seen)) {
		q->overflows_seen = overflows;
		return -EOVERFLOW;
	}
	want = (uint32_t)max;
	/* The entries kept while the library waited are the oldest. */
	for (; n < want && q->stash_count; n++, q->stash_count--) {
		cq_give(q, &cqe[n], &q->stash[q->stash_head]);
		q->stash_head = (q->stash_head + 1) & (q->stash_cap - 1);
	}
	head = q->head;
	while (n < want && (ready = cq_ready(w)) != 0) {
		for (i = 0; i < ready && n < want; i++) {
			struct percs_cqe c = q->ring[(q->head + i) & q->mask];

			if (lp_cqe_is_amo(&c))
				lp_amo_complete(w, &c);
			else
				cq_give(q, &cqe[n++], &c);
		}
		q->head += i;
	}
	/* Release: our reads of the entries happen before the HFI reuses them. */
	if (q->head != head)
		lp_store_release(&w->db->cq_head, q->head);
	/* Auto mode, nothing came: the entry may wait on our unsent request. */
	if (!n && max && lp_unlikely(w->au.on)) {
		int k = lp_auto_progress(w);

		if (k)
			return k;
	}
	return (int)n;
}

const char *percs_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "Success";
	case EAGAIN:
		return "Busy: no room now (send FIFO full, every immediate slot held, or nothing received)";
	case EINVAL:
		return "Invalid argument or malformed packet header (bad kind, flags, route or reserved field; an atomic operand address not a multiple of its width)";
	case EMSGSIZE:
		return "Payload too long for this path (FIFO 2016 bytes, immediate 96 bytes)";
	case EOPNOTSUPP:
		return "Packet kind or route mode not executed by this module";
	case EHOSTUNREACH:
		return "Destination hub or HFI outside the emulated system";
	case EADDRNOTAVAIL:
		return "Destination window index beyond the HFI's windows";
	case ECONNREFUSED:
		return "Destination window not reserved (or closing)";
	case EACCES:
		return "Destination window belongs to another job key, or the job key is bound to another user";
	case ENOENT:
		return "No such file, device or registration (an RDMA or atomic completion: no registration with this handle in the window; with PERCS_CQE_F_LOCAL, the initiator's)";
	case ERANGE:
		return "RDMA or atomic: range or operand outside the registration";
	case EPERM:
		return "RDMA or atomic: the registration does not grant this access (remote atomic, local write of the result)";
	case EFAULT:
		return "Bad address: memory the call names is not mapped with the access asked (an ioctl argument, a range to register)";
	case ETIMEDOUT:
		return "Timed out (an atomic completion: no acknowledgement from the target after every retransmission)";
	case EPROTO:
		return "Kernel and library disagree on the window layout (ABI mismatch)";
	case EIO:
		return "The HFI published an invalid receive index or entry";
	case EOVERFLOW:
		return "Completion queue overflow: the HFI dropped entries (see the status page's cq_overflows)";
	case ENOBUFS:
		return "Completion queue limit: as many operations as percs_cq_limit() allows await their entries";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
