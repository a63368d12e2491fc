// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the network layer - what every packet crosses between the HFI
 * that sends it and the unit that receives it.
 *
 * Senders (the engine's FIFO path, rdma.c, atomic.c) come here after the
 * ISR has routed the packet and counted it on its links (isr.c, with the
 * firmware model's routes); here the network's faults are drawn, packets
 * are held back, and each packet is handed over through the delivery
 * table (net.h): one handler per kind, registered at init.  Nothing here
 * calls a sender or a receiver by name.
 *
 * Ordering.  The HFI and the ISR give no ordering guarantee, not even
 * between one pair of windows.  Most packets go straight to their target;
 * a packet the network delays is held instead, in a list on its target,
 * and delivered when the packets that overtake it have arrived or its hold
 * time has run out.  The sender has already seen it leave (its send FIFO
 * entry is free, its %PERCS_PKT_F_NOTIFY completion posted): it is in the
 * network.  A sender that asked for %PERCS_PKT_F_NOTIFY_REMOTE gets its
 * entry when the packet is delivered, refused or discarded (landed.c).
 *
 * A packet is held when its route is longer than the direct one (by as
 * many later arrivals as it has extra hops), and when the reorder knob
 * says so (a chance per million, debugfs isr/reorder_ppm: then 1 to
 * isr/reorder_depth more).  It is delivered when that many later packets
 * have arrived at its target, or after isr/hold_us at the latest; a
 * delayed work delivers the ones whose time ran out.  A held packet takes
 * no room in the receive FIFO until it is written; when the FIFO is full
 * it stays held (backpressure, never a loss) until the receiver's credit
 * kick releases it.  Packets held for a target that goes away are freed.
 *
 * RDMA segments are held the same way, on the window whose memory they
 * land in (the target of a write, the initiator of a read): a held
 * segment carries its data, a reference to the registration it is
 * applied to and its transfer's tracker (taken by rdma.c).  It takes no
 * FIFO room, so it is never kept back by a full FIFO; discarded, it is
 * handed over with -ECONNREFUSED (its transfer completes with that).
 * Held packets live on t->flight under t->recv_lock.
 *
 * Loss.  FIFO, immediate and RDMA packets are never lost: the ISR's
 * link-level retry covers them (isr.c counts the replays).  The atomic
 * unit has its own sequence numbers and retransmission, as on the hub, so
 * its datagrams can be put to the test: with debugfs isr/drop_ppm a
 * datagram is lost (on the last link of its route), with isr/dup_ppm it
 * arrives twice, and with isr/reorder_ppm it is held back for up to
 * isr/hold_us.  Held datagrams wait on pd->dgram.held and are delivered
 * by the next engine pass of any window after their deadline, or by the
 * flush work.  The CAU's transfers (coll.c) meet the same knobs through
 * percs_dgram_fate() and are held by their tree.
 */
#include <linux/indirect_call_wrapper.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>

#include "nmmu.h"
#include "net.h"
#include "dgram.h"
#include "firmware-model/packet.h"

/**
 * struct percs_flight_pkt - one packet held in the network
 * @node: entry in the target's flight list
 * @due: the target's packet count at which it may be written
 * @deadline: ktime_get_ns() after which it is written anyway
 * @mr: for an RDMA segment, the registration it lands in (a reference),
 *	NULL for a FIFO packet
 * @addr: where in @mr
 * @len: data bytes of the segment
 * @track: its transfer (a reference), see rdma.c
 * @landed: for a FIFO packet whose sender asked for a remote completion,
 *	its ticket (a reference), see landed.c; else NULL
 * @hdr: the header, stamped (FIFO packets)
 * @payload: hdr.length bytes, or @len for a segment
 */
struct percs_flight_pkt {
	struct list_head node;
	u64 due;
	u64 deadline;
	struct percs_mr *mr;
	u64 addr;
	u32 len;
	struct percs_rdma_track *track;
	struct percs_landed *landed;
	struct percs_pkt_hdr hdr;
	u8 payload[];
};

/* ---- the delivery table ---------------------------------------------- */

/**
 * percs_net_register() - set the handler of one packet kind
 * @pd: the system
 * @kind: the kind
 * @h: its handler, which outlives the system (a static const table)
 *
 * At init, before any window exists; the test build also swaps a
 * handler at run time (selftest.c), hence the WRITE_ONCE.
 */
void percs_net_register(struct percs_dev *pd, enum percs_net_kind kind,
			const struct percs_net_handler *h)
{
	WRITE_ONCE(pd->net.handlers[kind], h);
}

/**
 * percs_net_deliver() - hand one packet to its kind's handler
 * @pd: the system
 * @kind: its kind
 * @pkt: the packet
 *
 * A refusal (any error but -EAGAIN) is counted per kind (debugfs isr/net)
 * and returned for the sender to see.  FIFO packets are the hot path:
 * their handler is called directly when it is the registered one.
 *
 * Return: the handler's answer.
 */
int percs_net_deliver(struct percs_dev *pd, enum percs_net_kind kind,
		      const struct percs_net_pkt *pkt)
{
	const struct percs_net_handler *h = READ_ONCE(pd->net.handlers[kind]);
	int ret;

	ret = INDIRECT_CALL_1(h->deliver, percs_fifo_net_deliver, pd, pkt);
	if (unlikely(ret < 0 && ret != -EAGAIN))
		atomic64_inc(&pd->net.refused[kind]);
	return ret;
}

/**
 * percs_flight_should_hold() - does the network delay this packet?
 * @pd: the system
 *
 * Return: the number of later packets that overtake it, or 0 to deliver
 * it now.
 */
unsigned int percs_flight_should_hold(struct percs_dev *pd)
{
	u32 ppm = READ_ONCE(pd->flight.reorder_ppm);
	u32 depth = READ_ONCE(pd->flight.reorder_depth);

	if (!depth || !percs_chance(ppm))
		return 0;
	return 1 + get_random_u32_below(depth);
}

/**
 * percs_flight_arm() - make sure the flush work runs within hold_us
 * @pd: the system
 */
void percs_flight_arm(struct percs_dev *pd)
{
	unsigned long delay = usecs_to_jiffies(READ_ONCE(pd->flight.hold_us));

	/* A work already pending fires soon enough: the earliest deadline. */
	queue_delayed_work(system_wq, &pd->flight.flush, delay ? delay : 1);
}

/* Put a filled-in held packet on its target's list. */
static void percs_flight_queue(struct percs_window *t,
			       struct percs_flight_pkt *fp,
			       unsigned int overtakers)
{
	struct percs_dev *pd = t->hfi->pd;

	/* Its own arrival is counted after this: it does not overtake itself. */
	fp->due = t->arrivals + 1 + overtakers;
	fp->deadline = ktime_get_ns() +
		       (u64)READ_ONCE(pd->flight.hold_us) * NSEC_PER_USEC;
	list_add_tail(&fp->node, &t->flight);
	WRITE_ONCE(t->nr_flight, t->nr_flight + 1);
	atomic_inc(&pd->flight.live);
	atomic64_inc(&pd->flight.held);
	percs_flight_arm(pd);
}

/**
 * percs_flight_hold() - hold a packet in the network
 * @t: target window, recv_lock held, not dead
 * @h: validated header, with src and job_key already stamped
 * @payload: h->length bytes
 * @overtakers: it is written once this many later packets have arrived
 *	at @t (written or held themselves), >= 1
 * @from: the initiator, send_lock held, when it asked for a remote
 *	completion: the packet then carries a ticket (landed.c); else NULL
 * @cqe_flags: the flags of that completion entry
 *
 * Return: 0, or -ENOMEM (the caller delivers the packet now instead).
 */
int percs_flight_hold(struct percs_window *t, const struct percs_pkt_hdr *h,
		      const void *payload, unsigned int overtakers,
		      struct percs_window *from, u8 cqe_flags)
{
	struct percs_flight_pkt *fp;

	lockdep_assert_held(&t->recv_lock);
	if (t->nr_flight >= PERCS_FLIGHT_MAX)
		return -ENOMEM;
	fp = kmalloc(struct_size(fp, payload, h->length),
		     GFP_ATOMIC | __GFP_NOWARN);
	if (!fp)
		return -ENOMEM;
	fp->landed = from ? percs_landed_new(from, h, cqe_flags) : NULL;
	if (from && !fp->landed) {
		kfree(fp);
		return -ENOMEM;
	}
	fp->mr = NULL;
	fp->hdr = *h;
	percs_copy(fp->payload, payload, h->length);
	percs_flight_queue(t, fp, overtakers);
	return 0;
}

/**
 * percs_flight_hold_seg() - hold an RDMA segment in the network
 * @t: the window whose memory it lands in, recv_lock held, not dead
 * @dst: the registration it lands in
 * @daddr: where
 * @src: the registration its data comes from, or NULL to take @buf
 * @saddr: where in @src
 * @buf: the data when @src is NULL
 * @len: data bytes, at most %PERCS_RDMA_SEG_DATA
 * @track: its transfer
 * @overtakers: as for percs_flight_hold()
 *
 * The data is read now, when the segment leaves its source.  On success
 * the caller takes the held segment's references on @dst and @track
 * (percs_rdma_track_hold()) before it drops @t's recv_lock.
 *
 * Return: 0, or -ENOMEM (the caller lands the segment now instead).
 */
int percs_flight_hold_seg(struct percs_window *t, struct percs_mr *dst,
			  u64 daddr, struct percs_mr *src, u64 saddr,
			  const void *buf, u32 len,
			  struct percs_rdma_track *track,
			  unsigned int overtakers)
{
	struct percs_flight_pkt *fp;

	lockdep_assert_held(&t->recv_lock);
	if (t->nr_flight >= PERCS_FLIGHT_MAX)
		return -ENOMEM;
	fp = kmalloc(struct_size(fp, payload, len), GFP_ATOMIC | __GFP_NOWARN);
	if (!fp)
		return -ENOMEM;
	if (src ? percs_mr_copy_from(src, saddr, fp->payload, len) :
		  (percs_copy(fp->payload, buf, len), 0)) {
		kfree(fp);
		return -ENOMEM;
	}
	fp->landed = NULL;
	fp->mr = dst;
	fp->addr = daddr;
	fp->len = len;
	fp->track = track;
	percs_flight_queue(t, fp, overtakers);
	return 0;
}

/*
 * Hand a held packet to its kind's handler; @err discards a segment.
 * Return: 0, -EAGAIN (it stays held), or the handler's refusal.
 */
static int percs_flight_deliver(struct percs_window *t,
				struct percs_flight_pkt *fp, int err)
{
	struct percs_net_pkt pkt = { .t = t };

	if (!fp->mr) {
		pkt.hdr = &fp->hdr;
		pkt.payload = fp->payload;
		return percs_net_deliver(t->hfi->pd, PERCS_NET_FIFO, &pkt);
	}
	pkt.mr = fp->mr;
	pkt.addr = fp->addr;
	pkt.payload = err ? NULL : fp->payload;
	pkt.len = err ? 0 : fp->len;
	pkt.track = fp->track;
	pkt.err = err;
	return percs_net_deliver(t->hfi->pd, PERCS_NET_RDMA_SEG, &pkt);
}

/**
 * percs_flight_release() - write the held packets of a target that are due
 * @t: target window, recv_lock held, not dead
 * @now: ktime_get_ns() to also write those past their deadline, or 0
 *
 * Stops at the first packet that does not fit; it stays held and the
 * receiver's credit kick calls this again.
 */
void percs_flight_release(struct percs_window *t, u64 now)
{
	struct percs_dev *pd = t->hfi->pd;
	struct percs_flight_pkt *fp, *next;
	bool progress = true;
	int err;

	lockdep_assert_held(&t->recv_lock);
	/* Writing one packet may make others due: go round until idle. */
	while (progress && t->nr_flight) {
		progress = false;
		list_for_each_entry_safe(fp, next, &t->flight, node) {
			if (fp->due > t->arrivals &&
			    (!now || fp->deadline > now))
				continue;
			err = percs_flight_deliver(t, fp, 0);
			if (err == -EAGAIN)
				return;
			if (fp->landed)
				percs_landed_done(fp->landed, err);
			list_del(&fp->node);
			WRITE_ONCE(t->nr_flight, t->nr_flight - 1);
			atomic_dec(&pd->flight.live);
			kfree(fp);
			progress = true;
		}
	}
}

/**
 * percs_net_send() - hand one packet to the network for a target
 * @t: target window, found under rcu_read_lock() which the caller holds
 * @h: validated header, with src and job_key already stamped
 * @payload: h->length bytes
 * @extra_hops: hops its route has beyond the direct route's: that many
 *	later packets overtake it
 * @from: the initiator, send_lock held, when it asked for a remote
 *	completion (%PERCS_PKT_F_NOTIFY_REMOTE), else NULL
 * @cqe_flags: the flags of that completion entry
 *
 * The packet is written into @t's receive FIFO, or held in flight when it
 * took a longer route or the network delays it (flight.c); each arrival
 * may let held packets through.  The FIFO's handler may refuse it
 * (net.h): the refusal is returned, for the sender's completion.
 *
 * Return: 0; %PERCS_FIFO_HELD when it is held with a ticket for @from's
 * remote completion (landed.c); -EAGAIN when the FIFO is full (nothing
 * written: the caller keeps the packet), -ECONNREFUSED when the target is
 * being released, or the handler's refusal.
 */
int percs_net_send(struct percs_window *t, const struct percs_pkt_hdr *h,
		   const void *payload, unsigned int extra_hops,
		   struct percs_window *from, u8 cqe_flags)
{
	unsigned int overtakers = extra_hops +
				  percs_flight_should_hold(t->hfi->pd);
	int ret;

	spin_lock(&t->recv_lock);
	if (t->recv_dead) {
		ret = -ECONNREFUSED;
	} else if (overtakers &&
		   !percs_flight_hold(t, h, payload, overtakers, from,
				      cqe_flags)) {
		ret = from ? PERCS_FIFO_HELD : 0;
	} else {
		struct percs_net_pkt pkt = {
			.t = t, .hdr = h, .payload = payload,
		};

		ret = percs_net_deliver(t->hfi->pd, PERCS_NET_FIFO, &pkt);
	}
	if (ret >= 0) {
		t->arrivals++;
		if (unlikely(t->nr_flight))
			percs_flight_release(t, 0);
	}
	percs_fifo_unlock(t);
	return ret;
}

/**
 * percs_flight_kick() - write what a target can take of its held packets,
 *	whether due or not yet overtaken but past their hold time
 * @t: the target, kept alive by the caller (a file reference, or
 *	rcu_read_lock() around a lookup)
 *
 * Called by the flush work and when the receiver returns credits.
 */
void percs_flight_kick(struct percs_window *t)
{
	spin_lock(&t->recv_lock);
	if (!t->recv_dead)
		percs_flight_release(t, ktime_get_ns());
	percs_fifo_unlock(t);
}

/**
 * percs_flight_discard() - free the packets held for a window going away
 * @t: the window, recv_dead already set
 */
void percs_flight_discard(struct percs_window *t)
{
	struct percs_dev *pd = t->hfi->pd;
	struct percs_flight_pkt *fp, *next;

	spin_lock(&t->recv_lock);
	list_for_each_entry_safe(fp, next, &t->flight, node) {
		list_del(&fp->node);
		if (fp->mr)
			percs_flight_deliver(t, fp, -ECONNREFUSED);
		if (fp->landed)
			percs_landed_done(fp->landed, -ECONNREFUSED);
		atomic_dec(&pd->flight.live);
		atomic64_inc(&pd->flight.discarded);
		kfree(fp);
	}
	t->nr_flight = 0;
	spin_unlock(&t->recv_lock);
}

/* Deliver what has waited long enough, on every window of the system. */
static void percs_flight_flush(struct work_struct *work)
{
	struct percs_dev *pd = container_of(to_delayed_work(work),
					    struct percs_dev, flight.flush);
	struct percs_window *t;
	unsigned int i, j;

	for (i = 0; i < pd->nr_hfis && atomic_read(&pd->flight.live); i++) {
		rcu_read_lock();
		for (j = 0; j < pd->windows_per_hfi; j++) {
			t = rcu_dereference(pd->hfis[i].windows[j]);
			if (t && READ_ONCE(t->nr_flight))
				percs_flight_kick(t);
		}
		rcu_read_unlock();
		cond_resched();
	}
	percs_dgram_release(pd, NULL);
	/* Left: packets whose target's FIFO is full, or held meanwhile. */
	if (atomic_read(&pd->flight.live) || atomic_read(&pd->dgram.nr_held))
		percs_flight_arm(pd);
}

/**
 * percs_flight_init() - set up the network stage, knobs at their defaults
 * @pd: the system
 */
void percs_flight_init(struct percs_dev *pd)
{
	pd->flight.reorder_depth = PERCS_FLIGHT_DEFAULT_DEPTH;
	pd->flight.hold_us = PERCS_FLIGHT_DEFAULT_HOLD_US;
	INIT_DELAYED_WORK(&pd->flight.flush, percs_flight_flush);
}

/**
 * percs_flight_exit() - stop the flush work; every window is gone by now
 * @pd: the system
 */
void percs_flight_exit(struct percs_dev *pd)
{
	cancel_delayed_work_sync(&pd->flight.flush);
	WARN_ON(atomic_read(&pd->flight.live));
}

/* ---- datagrams of the end-to-end reliable protocols ---------------- */

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
	struct percs_net_pkt pkt = {
		.src_gid = src_gid, .dst_gid = dst_gid, .body = body,
		.self = self,
	};

	/* A lost answer is recovered by the initiator's retransmission. */
	percs_net_deliver(pd, type == PERCS_DGRAM_AMO_REQ ?
			  PERCS_NET_AMO_REQ : PERCS_NET_AMO_REPLY, &pkt);
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
 * which may be held here).  The datagram protocols recover from loss on
 * their own, so a refused datagram counts as lost.  Delivery may happen before this returns, and
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
