// SPDX-License-Identifier: GPL-2.0
/*
 * percs: a window's completion queue.
 */
#include <linux/wait.h>

#include "percs.h"

/**
 * percs_cq_post() - post one completion entry
 * @w: the window; the caller holds w->send_lock and w is not dead
 * @user_data: tag or descriptor user_data
 * @res: 0 or -errno
 * @kind: packet kind
 * @flags: PERCS_CQE_F_*
 *
 * A full queue drops the entry, counts it and sets CQ_OVERFLOW.
 */
void percs_cq_post(struct percs_window *w, u64 user_data, int res, u8 kind,
		   u8 flags)
{
	u64 head = READ_ONCE(w->db->cq_head);
	struct percs_cqe *cqe;

	lockdep_assert_held(&w->send_lock);
	if (res)
		WRITE_ONCE(w->st->send_errors, w->st->send_errors + 1);
	/* A head beyond the tail is user error: treat the queue as full. */
	if (w->cq_tail - head >= PERCS_CQ_ENTRIES) {
		WRITE_ONCE(w->st->cq_overflows, w->st->cq_overflows + 1);
		percs_status_set(w, PERCS_STATUS_CQ_OVERFLOW);
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
	/* poll(2) reads cq_tail under send_lock: no barrier needed. */
	if (waitqueue_active(&w->wq))
		wake_up_interruptible(&w->wq);
}
