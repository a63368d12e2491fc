// SPDX-License-Identifier: GPL-2.0
/*
 * percs: remote completions of FIFO and immediate sends.
 *
 * A send with %PERCS_PKT_F_NOTIFY_REMOTE completes when its packet is in
 * the target's receive FIFO.  Most packets are written there by the
 * sending engine pass itself, which posts the entry at once (engine.c).
 * A packet the network holds back (net.c) lands later, from another
 * window's engine, the flush work or a receiver's credit kick, under the
 * target's recv_lock, where the initiator's CQ cannot be reached.  So the
 * held packet carries a ticket (&struct percs_landed), also queued on the
 * initiator (w->landed, under its send_lock).  Landing the packet, or
 * discarding it with its target, fills in the status and queues a work
 * item that runs the initiator's engine; the engine pass posts the entries
 * of the tickets that are done, as RDMA's tracker does for held segments.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "percs.h"

/**
 * struct percs_landed - the remote completion of one held packet
 * @node: entry in the initiator's w->landed, under its send_lock
 * @ref: one for the initiator's list, one for the held packet
 * @done: set (release) once @res is final
 * @res: 0 when the packet was written, or -ECONNREFUSED when the network
 *	discarded it (its target went away)
 * @tag: the packet's tag, the entry's user_data
 * @kind: the packet's kind
 * @cqe_flags: PERCS_CQE_F_IMM for an immediate send
 * @gid: the initiator's global window id
 * @pd: the system
 * @work: runs the initiator's engine once the packet landed
 */
struct percs_landed {
	struct list_head node;
	refcount_t ref;
	atomic_t done;
	int res;
	u32 tag;
	u8 kind;
	u8 cqe_flags;
	u32 gid;
	struct percs_dev *pd;
	struct work_struct work;
};

static void percs_landed_put(struct percs_landed *l)
{
	if (refcount_dec_and_test(&l->ref))
		kfree(l);
}

static void percs_landed_work(struct work_struct *work)
{
	struct percs_landed *l = container_of(work, struct percs_landed, work);

	percs_engine_wake(l->pd, l->gid);
	percs_landed_put(l);
}

/**
 * percs_landed_new() - a ticket for a packet the network holds
 * @w: the initiating window, send_lock held, not dead
 * @h: the packet's header
 * @cqe_flags: PERCS_CQE_F_IMM for an immediate send, else 0
 *
 * Atomic context.  Return: the ticket, queued on @w, or NULL when out of
 * memory (the caller then delivers the packet now).
 */
struct percs_landed *percs_landed_new(struct percs_window *w,
				      const struct percs_pkt_hdr *h,
				      u8 cqe_flags)
{
	struct percs_landed *l = kmalloc(sizeof(*l), GFP_ATOMIC | __GFP_NOWARN);

	lockdep_assert_held(&w->send_lock);
	if (!l)
		return NULL;
	refcount_set(&l->ref, 2);
	atomic_set(&l->done, 0);
	l->res = 0;
	l->tag = h->tag;
	l->kind = h->kind;
	l->cqe_flags = cqe_flags;
	l->gid = percs_window_gid(w);
	l->pd = w->hfi->pd;
	INIT_WORK(&l->work, percs_landed_work);
	list_add_tail(&l->node, &w->landed);
	return l;
}

/**
 * percs_landed_done() - the held packet was written, or discarded
 * @l: its ticket; the packet's reference goes to the work item
 * @res: 0, or -ECONNREFUSED when discarded
 *
 * Any context (the target's recv_lock is held).
 */
void percs_landed_done(struct percs_landed *l, int res)
{
	l->res = res;
	atomic_set_release(&l->done, 1);
	queue_work(l->pd->nmmu_wq, &l->work);
}

/**
 * percs_landed_progress() - post the entries of the tickets that are done
 * @w: the initiator, send_lock held, not dead
 * @moved: incremented by the entries posted
 *
 * Entries are posted in landing order as the engine finds them.
 */
void percs_landed_progress(struct percs_window *w, int *moved)
{
	struct percs_landed *l, *next;

	list_for_each_entry_safe(l, next, &w->landed, node) {
		if (!atomic_read_acquire(&l->done))
			continue;
		percs_cq_post(w, l->tag, l->res, l->kind, l->cqe_flags);
		list_del(&l->node);
		percs_landed_put(l);
		(*moved)++;
	}
}

/**
 * percs_landed_window_fini() - drop the tickets of a window going away
 * @w: the window, dead: no engine pass touches its list any more
 *
 * Packets still held keep their ticket until they land or are discarded.
 */
void percs_landed_window_fini(struct percs_window *w)
{
	struct percs_landed *l, *next;
	LIST_HEAD(tickets);

	spin_lock(&w->send_lock);
	list_splice_init(&w->landed, &tickets);
	spin_unlock(&w->send_lock);
	list_for_each_entry_safe(l, next, &tickets, node) {
		list_del(&l->node);
		percs_landed_put(l);
	}
}
