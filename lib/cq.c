// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: completion queue and error texts.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Entries posted and not consumed, bounded by the ring size. */
static inline uint32_t cq_ready(struct percs_window *w)
{
	uint64_t n = lp_load_acquire(&w->status->cq_tail) - w->cq.head;

	return n > w->cq.entries ? w->cq.entries : (uint32_t)n;
}

bool lp_cq_pending(struct percs_window *w)
{
	return cq_ready(w) != 0;
}

int percs_cq_poll(struct percs_window *w, struct percs_cqe *cqe, int max)
{
	struct lp_cq *q = &w->cq;
	uint32_t n, i;

	if (max < 0 || (max && !cqe))
		return -EINVAL;
	n = cq_ready(w);
	if (n > (uint32_t)max)
		n = (uint32_t)max;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		cqe[i] = q->ring[(q->head + i) & q->mask];
	q->head += n;
	/* Release: our reads of the entries happen before the HFI reuses them. */
	lp_store_release(&w->db->cq_head, q->head);
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
		return "Invalid argument or malformed packet header (bad kind, flags, route or reserved field)";
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
		return "RDMA: no registration with this handle in the window (flag PERCS_CQE_F_LOCAL: the initiator's)";
	case ERANGE:
		return "RDMA: range outside the registration";
	case EPERM:
		return "RDMA: the registration does not grant this access";
	case EPROTO:
		return "Kernel and library disagree on the window layout (ABI mismatch)";
	case EIO:
		return "The HFI published an invalid receive index or entry";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
