// SPDX-License-Identifier: GPL-2.0
/*
 * percs: a window's completion queue.
 */
#include <linux/wait.h>

#include "percs.h"

/**
 * percs_cq_post() - post one completion entry
 * @w: the window; the caller keeps its regions alive: it holds
 *	w->send_lock and w is not dead, or w->recv_lock and w->recv_dead is
 *	false
 * @user_data: tag or descriptor user_data
 * @res: 0 or -errno
 * @kind: packet kind
 * @flags: PERCS_CQE_F_*
 *
 * A full queue drops the entry, counts it and sets CQ_OVERFLOW.  Takes
 * w->cq_lock: the window's own completions and RDMA target notifications
 * from other windows' engines share the ring.
 */
void percs_cq_post(struct percs_window *w, u64 user_data, int res, u8 kind,
		   u8 flags)
{
	struct percs_cqe *cqe;
	u64 head;

	spin_lock(&w->cq_lock);
	head = READ_ONCE(w->db->cq_head);
	if (res)
		WRITE_ONCE(w->st->send_errors, w->st->send_errors + 1);
	/* A head beyond the tail is user error: treat the queue as full. */
	if (w->cq_tail - head >= PERCS_CQ_ENTRIES) {
		WRITE_ONCE(w->st->cq_overflows, w->st->cq_overflows + 1);
		percs_status_set(w, PERCS_STATUS_CQ_OVERFLOW);
		spin_unlock(&w->cq_lock);
		return;
	}
	cqe = &w->cq[w->cq_tail & (PERCS_CQ_ENTRIES - 1)];
	cqe->user_data = user_data;
	cqe->res = res;
	cqe->kind = kind;
	cqe->flags = flags;
	cqe->reserved = 0;
	w->cq_tail++;
	/* The entry before the index that publishes it. */
	smp_store_release(&w->st->cq_tail, w->cq_tail);
	/* poll(2) reads cq_tail under cq_lock: no barrier needed. */
	if (waitqueue_active(&w->wq))
		wake_up_interruptible(&w->wq);
	spin_unlock(&w->cq_lock);
}
