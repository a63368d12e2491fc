// SPDX-License-Identifier: GPL-2.0
/*
 * percs: packets in flight - the network between the HFIs.
 *
 * The HFI and the ISR give no ordering guarantee, not even between one pair
 * of windows.  Most packets go straight into their target's receive FIFO;
 * a packet the network delays is held here instead, in a list on its
 * target, and written when the packets that overtake it have arrived or
 * its hold time has run out.  The sender has already seen it leave (its
 * send FIFO entry is free, its %PERCS_PKT_F_NOTIFY completion posted): it
 * is in the network.  A sender that asked for %PERCS_PKT_F_NOTIFY_REMOTE
 * gets its entry when the packet is written, or discarded (landed.c).
 *
 * A packet is held when its route is longer than the direct one (by as
 * many later arrivals as it has extra hops), and when the reorder knob
 * says so (a chance per million, debugfs isr/reorder_ppm: then 1 to
 * isr/reorder_depth more).  It is written when that many later packets
 * have arrived at its target, or after isr/hold_us at the latest; a
 * delayed work delivers the ones whose time ran out.  A held packet takes
 * no room in the receive FIFO until it is written; when the FIFO is full
 * it stays held (backpressure, never a loss) until the receiver's credit
 * kick releases it.  Packets held for a target that goes away are freed.
 *
 * RDMA segments (rdma.c) are held the same way, on the window whose
 * memory they land in (the target of a write, the initiator of a read):
 * a held segment carries its data, a reference to the registration it is
 * applied to and its transfer's tracker; written, it is copied into the
 * registration and counted as landed.  It takes no FIFO room, so it is
 * never kept back by a full FIFO; discarded, it lands with -ECONNREFUSED
 * (its transfer completes with that status).
 *
 * Held packets live on t->flight under t->recv_lock.  The flush work also
 * delivers the atomics' datagrams that dgram.c holds back.
 */
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>

#include "nmmu.h"
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
 * @dst: the registration it lands in; the held segment takes its own
 *	reference
 * @daddr: where
 * @src: the registration its data comes from, or NULL to take @buf
 * @saddr: where in @src
 * @buf: the data when @src is NULL
 * @len: data bytes, at most %PERCS_RDMA_SEG_DATA
 * @track: its transfer; the held segment takes a reference and counts
 *	as pending in it (rdma.c)
 * @overtakers: as for percs_flight_hold()
 *
 * The data is read now, when the segment leaves its source.
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
	percs_rdma_track_hold(dst, track);
	percs_flight_queue(t, fp, overtakers);
	return 0;
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

	lockdep_assert_held(&t->recv_lock);
	/* Writing one packet may make others due: go round until idle. */
	while (progress && t->nr_flight) {
		progress = false;
		list_for_each_entry_safe(fp, next, &t->flight, node) {
			if (fp->due > t->arrivals &&
			    (!now || fp->deadline > now))
				continue;
			if (fp->mr)
				percs_rdma_land(fp->mr, fp->addr, fp->payload,
						fp->len, fp->track, 0);
			else if (percs_fifo_put(t, &fp->hdr, fp->payload))
				return;
			if (fp->landed)
				percs_landed_done(fp->landed, 0);
			list_del(&fp->node);
			WRITE_ONCE(t->nr_flight, t->nr_flight - 1);
			atomic_dec(&pd->flight.live);
			kfree(fp);
			progress = true;
		}
	}
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
			percs_rdma_land(fp->mr, fp->addr, NULL, 0, fp->track,
					-ECONNREFUSED);
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
