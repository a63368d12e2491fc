// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the lossy stage - how the network treats the datagrams of the
 * end-to-end reliable protocols (atomic requests and replies).
 *
 * FIFO, immediate and RDMA packets are never lost: the ISR's link-level
 * retry covers them (isr.c counts the replays).  The atomic unit has its
 * own sequence numbers and retransmission, as on the hub, so its packets
 * can be put to the test: with debugfs isr/drop_ppm a datagram is lost
 * (on the last link of its route), with isr/dup_ppm it arrives twice, and
 * with isr/reorder_ppm it is held back for up to isr/hold_us and so
 * arrives after later ones.  Held datagrams wait on pd->dgram.held; they
 * are delivered by the next engine pass of any window after their
 * deadline, or by the flight flush work.  Nothing here knows what a
 * datagram means: delivery calls atomic.c.  The CAU's transfers (coll.c)
 * meet the same knobs through percs_dgram_fate() and are held by their
 * tree.
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "dgram.h"

/**
 * percs_dgram_fate() - roll what the network does with one datagram
 * @pd: the system
 * @r: its route: each copy is counted on its links, a lost one as a drop
 * @f: out: how many copies arrive and how long each is held back
 *
 * The knobs isr/drop_ppm, isr/dup_ppm, isr/reorder_ppm and isr/hold_us,
 * for every protocol that recovers on its own (atomics, the CAU).  The
 * dropped and duplicated counts are kept here; the caller counts a copy
 * as delayed when it could hold it.  Any context.
 */
void percs_dgram_fate(struct percs_dev *pd, const struct fm_route *r,
		      struct percs_fate *f)
{
	unsigned int i;

	f->copies = 0;
	if (unlikely(percs_chance(READ_ONCE(pd->dgram.drop_ppm)))) {
		percs_isr_count_drop(pd, r);
		atomic64_inc(&pd->dgram.dropped);
		return;
	}
	f->copies = 1;
	if (unlikely(percs_chance(READ_ONCE(pd->dgram.dup_ppm)))) {
		atomic64_inc(&pd->dgram.duplicated);
		f->copies = 2;
	}
	for (i = 0; i < f->copies; i++) {
		percs_isr_count(pd, r, 1);
		f->hold_ns[i] = 0;
		if (unlikely(percs_chance(READ_ONCE(pd->flight.reorder_ppm))))
			f->hold_ns[i] = NSEC_PER_USEC *
				(1 + (u64)get_random_u32_below(
					READ_ONCE(pd->flight.hold_us)));
	}
}

static void percs_dgram_deliver(struct percs_dev *pd, unsigned int type,
				u32 src_gid, u32 dst_gid, const void *body,
				struct percs_window *self)
{
	if (type == PERCS_DGRAM_AMO_REQ)
		percs_amo_request(pd, src_gid, dst_gid, body, self);
	else
		percs_amo_reply(pd, src_gid, dst_gid, body, self);
}

/* Hold a copy for @hold_ns; false if it cannot. */
static bool percs_dgram_hold(struct percs_dev *pd, unsigned int type,
			     u32 src_gid, u32 dst_gid, const void *body,
			     u32 len, u64 hold_ns)
{
	struct percs_dgram *held;

	if (atomic_read(&pd->dgram.nr_held) >= PERCS_DGRAM_MAX_HELD)
		return false;
	held = kmalloc(struct_size(held, body, len), GFP_ATOMIC | __GFP_NOWARN);
	if (!held)
		return false;
	held->type = type;
	held->src_gid = src_gid;
	held->dst_gid = dst_gid;
	held->len = len;
	memcpy(held->body, body, len);
	held->deadline = ktime_get_ns() + hold_ns;
	spin_lock(&pd->dgram.lock);
	list_add_tail(&held->node, &pd->dgram.held);
	atomic_inc(&pd->dgram.nr_held);
	spin_unlock(&pd->dgram.lock);
	atomic64_inc(&pd->dgram.delayed);
	percs_flight_arm(pd);
	return true;
}

/**
 * percs_dgram_send() - put one datagram on the network
 * @pd: the system
 * @type: enum percs_dgram_type
 * @src_gid: the sending window
 * @dst_gid: the receiving window
 * @body: what it carries (copied only if the network holds it back)
 * @len: its bytes
 * @r: its route: counted on the links it crosses
 * @self: the window whose send_lock the caller holds, or NULL: a reply
 *	to it is left for the caller's engine pass instead of waking it
 *
 * Any context; the receiving end takes its own locks (atomic.c says
 * which may be held here).  Delivery may happen before this returns, and
 * may send a datagram back.
 */
void percs_dgram_send(struct percs_dev *pd, unsigned int type, u32 src_gid,
		      u32 dst_gid, const void *body, u32 len,
		      const struct fm_route *r, struct percs_window *self)
{
	struct percs_fate f;
	unsigned int i;

	percs_dgram_fate(pd, r, &f);
	for (i = 0; i < f.copies; i++) {
		if (f.hold_ns[i] &&
		    percs_dgram_hold(pd, type, src_gid, dst_gid, body, len,
				     f.hold_ns[i]))
			continue;
		percs_dgram_deliver(pd, type, src_gid, dst_gid, body, self);
	}
}

/**
 * percs_dgram_release() - deliver the held datagrams that are due
 * @pd: the system
 * @self: as for percs_dgram_send()
 *
 * Called by engine passes (cheap when nothing is held) and the flight
 * flush work.  The due ones are taken off the list first and delivered
 * without the lock: delivery may hold new ones.
 */
void percs_dgram_release(struct percs_dev *pd, struct percs_window *self)
{
	struct percs_dgram *dg, *next;
	LIST_HEAD(due);
	u64 now;

	if (likely(!atomic_read(&pd->dgram.nr_held)))
		return;
	now = ktime_get_ns();
	spin_lock(&pd->dgram.lock);
	list_for_each_entry_safe(dg, next, &pd->dgram.held, node) {
		if (dg->deadline > now)
			continue;
		list_move_tail(&dg->node, &due);
		atomic_dec(&pd->dgram.nr_held);
	}
	spin_unlock(&pd->dgram.lock);
	list_for_each_entry_safe(dg, next, &due, node) {
		percs_dgram_deliver(pd, dg->type, dg->src_gid, dg->dst_gid,
				    dg->body, self);
		kfree(dg);
	}
}

/**
 * percs_dgram_init() - the lossy stage, no fault injected
 * @pd: the system
 */
void percs_dgram_init(struct percs_dev *pd)
{
	spin_lock_init(&pd->dgram.lock);
	INIT_LIST_HEAD(&pd->dgram.held);
}

/**
 * percs_dgram_exit() - free what is still held (every window is gone and
 *	the flush work stopped: nobody would receive it)
 * @pd: the system
 */
void percs_dgram_exit(struct percs_dev *pd)
{
	struct percs_dgram *dg, *next;

	list_for_each_entry_safe(dg, next, &pd->dgram.held, node) {
		list_del(&dg->node);
		atomic_dec(&pd->dgram.nr_held);
		kfree(dg);
	}
}
