// SPDX-License-Identifier: GPL-2.0
/*
 * percs: RDMA - write, read and FIFO-to-memory transfers between the
 * registered memory of two windows, with completions and fences.
 *
 * Posting: a %PERCS_PKT_RDMA descriptor in the send FIFO (header plus
 * &struct percs_rdma_ext, plus the payload for FIFO_WRITE).  The FIFO
 * reader validates it and queues an operation on the window (w->rdma_ops,
 * under send_lock); its FIFO entry is free at once.  Each engine pass then
 * moves the operations on, in posting order:
 *
 *   queued   waits for the operation before it to have sent all its data
 *            and, with %PERCS_RDMA_F_FENCE, for every earlier operation to
 *            have completed; then it is started: the initiator's
 *            registration, the route, the target window, its job key and
 *            its registration are checked, the whole range at once, before
 *            any byte moves (an error completes it with that status)
 *   running  its data is carried in packets of at most
 *            %PERCS_RDMA_SEG_DATA bytes (%PERCS_MAX_PACKET on the wire), at
 *            most %PERCS_RDMA_PASS_SEGS per pass; each pass checks again
 *            that the target window and both registrations are still there
 *   sent     waits for the packets the network holds back to land
 *
 * and an operation completes (one CQE on the initiator, one on the target
 * with %PERCS_RDMA_F_NOTIFY_TARGET) when every byte has landed.
 *
 * The wire is modelled packet by packet, but the common path is bulk: with
 * the direct and software-indirect route modes every packet of a transfer
 * takes the same route, so a pass routes once, copies page by page between
 * the pinned pages (percs_mr_copy_mr()) and counts its N packets on the
 * route's links in one update (percs_isr_count_n()).  Packets are taken one
 * at a time only when the network may hold some back: with the reorder
 * knob on, or with the hardware route modes (a route per packet; those
 * with extra hops are overtaken by later ones).  A held packet is an RDMA
 * segment in net.c, on the window whose memory it lands in, carrying
 * its data, a reference to the registration and one to its transfer's
 * tracker.
 *
 * A tracker (&struct percs_rdma_track) counts what of a transfer has not
 * landed: one for the engine until all data left, one per held segment.
 * It outlives the operation if the window goes away first.  When a held
 * segment is the last to land, a work item runs the initiator's engine
 * so the completion is posted without waiting for a kick.
 *
 * Registrations: an operation holds a reference on both registrations
 * (percs_mr_get()), a held segment one on the registration it lands in, so
 * the pages stay pinned while data may still move; deregistration and the
 * window's release then free them from the nmmu work queue.
 */
#include <linux/err.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "nmmu.h"
#include "net.h"
#include "firmware-model/packet.h"

enum percs_rdma_state {
	PERCS_RDMA_QUEUED,
	PERCS_RDMA_RUNNING,
	PERCS_RDMA_SENT,
};

/**
 * struct percs_rdma_track - what of one transfer has not landed yet
 * @ref: the operation's reference, one per held segment, one for a
 *	queued work item
 * @pending: 1 until the engine has sent all data, plus held segments
 * @err: the first error of a held segment, or 0
 * @gid: the initiating window's global id
 * @pd: the system
 * @work: runs the initiator's engine when a held segment landed last
 */
struct percs_rdma_track {
	refcount_t ref;
	atomic_t pending;
	atomic_t err;
	u32 gid;
	struct percs_dev *pd;
	struct work_struct work;
};

/**
 * struct percs_rdma_op - one posted RDMA operation
 * @node: entry in w->rdma_ops
 * @hdr: the descriptor's header, src and job key stamped
 * @ext: the descriptor's extension
 * @state: enum percs_rdma_state
 * @cqe_flags: PERCS_CQE_F_LOCAL when the error is the initiator's side
 * @done: bytes sent so far
 * @lmr: the initiator's registration (NULL for FIFO_WRITE)
 * @rmr: the target's registration
 * @track: its tracker (one reference)
 * @data: FIFO_WRITE: the payload, copied out of the send FIFO
 */
struct percs_rdma_op {
	struct list_head node;
	struct percs_pkt_hdr hdr;
	struct percs_rdma_ext ext;
	u8 state;
	u8 cqe_flags;
	u64 done;
	struct percs_mr *lmr;
	struct percs_mr *rmr;
	struct percs_rdma_track *track;
	u8 data[];
};

#define PERCS_RDMA_SEG_UNITS	(PERCS_MAX_PACKET / PERCS_FLIT_SIZE)

static void percs_rdma_track_put(struct percs_rdma_track *track)
{
	if (refcount_dec_and_test(&track->ref))
		kfree(track);
}

/* The last held segment landed: post the completion from the engine. */
static void percs_rdma_track_work(struct work_struct *work)
{
	struct percs_rdma_track *track =
		container_of(work, struct percs_rdma_track, work);

	percs_engine_wake(track->pd, track->gid);
	percs_rdma_track_put(track);
}

/**
 * percs_rdma_track_hold() - a segment of @track is held in flight
 * @dst: the registration it lands in: one more reference
 * @track: its transfer: one more reference and one more pending
 */
void percs_rdma_track_hold(struct percs_mr *dst,
			   struct percs_rdma_track *track)
{
	percs_mr_hold(dst);
	refcount_inc(&track->ref);
	atomic_inc(&track->pending);
}

/*
 * percs_rdma_land() - a held segment lands (or is discarded)
 * @dst: the registration it lands in; its reference is dropped
 * @daddr: where
 * @buf: its data
 * @len: bytes
 * @track: its transfer; the segment's reference is dropped
 * @err: 0 to write the data, or the error it completes its transfer with
 *	(nothing written)
 *
 * Any context (called under the landing window's recv_lock).
 */
static void percs_rdma_land(struct percs_mr *dst, u64 daddr,
			    const void *buf, u32 len,
			    struct percs_rdma_track *track, int err)
{
	/* The range was validated when the transfer started. */
	if (!err)
		err = percs_mr_copy_to(dst, daddr, buf, len);
	percs_mr_put(dst);
	if (err)
		atomic_cmpxchg(&track->err, 0, err);
	/* Fully ordered: the data before the count the engine reads. */
	if (atomic_dec_and_test(&track->pending)) {
		/* The segment's reference goes to the work item. */
		queue_work(track->pd->nmmu_wq, &track->work);
		return;
	}
	percs_rdma_track_put(track);
}

/* The delivery table's RDMA end (net.h): a segment is never refused. */
static int percs_rdma_net_deliver(struct percs_dev *pd,
				  const struct percs_net_pkt *pkt)
{
	percs_rdma_land(pkt->mr, pkt->addr, pkt->payload, pkt->len,
			pkt->track, pkt->err);
	return 0;
}

const struct percs_net_handler percs_rdma_net_handler = {
	.name = "rdma_seg",
	.deliver = percs_rdma_net_deliver,
};

static void percs_rdma_free(struct percs_rdma_op *op)
{
	if (op->lmr)
		percs_mr_put(op->lmr);
	if (op->rmr)
		percs_mr_put(op->rmr);
	percs_rdma_track_put(op->track);
	kfree(op);
}

/* Check a descriptor's extension against its header. */
static int percs_rdma_check(const struct percs_pkt_hdr *h,
			    const struct percs_rdma_ext *e)
{
	if (e->op > PERCS_RDMA_OP_MAX || e->flags & ~PERCS_RDMA_F_ALL ||
	    e->reserved || e->reserved2 || !e->len)
		return -EINVAL;
	if (e->op == PERCS_RDMA_OP_FIFO_WRITE) {
		if (e->local_handle || e->local_addr)
			return -EINVAL;
		if (e->len > PERCS_RDMA_FIFO_MAX)
			return -EMSGSIZE;
		if (h->length != sizeof(*e) + e->len)
			return -EINVAL;
		return 0;
	}
	if (h->length != sizeof(*e))
		return -EINVAL;
	if (e->len > PERCS_MR_MAX_LENGTH)
		return -EMSGSIZE;
	return 0;
}

/**
 * percs_rdma_post() - queue the RDMA operation a send FIFO descriptor posts
 * @w: the initiating window, send_lock held, not dead
 * @h: the descriptor's header, checked by fm_pkt_check()
 * @payload: the @h->length bytes after the header, in the send FIFO
 *
 * A bad descriptor completes at once with its status (EINVAL, EMSGSIZE,
 * ENOMEM).
 *
 * Return: 0 when the descriptor was consumed, -EBUSY when the window has
 * %PERCS_RDMA_MAX_OPS operations outstanding (it stays in the FIFO).
 */
int percs_rdma_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		    const u8 *payload)
{
	struct percs_rdma_track *track;
	struct percs_rdma_ext ext;
	struct percs_rdma_op *op;
	size_t extra;
	int err;

	lockdep_assert_held(&w->send_lock);
	if (h->length < sizeof(ext)) {
		percs_cq_post(w, h->tag, -EINVAL, PERCS_PKT_RDMA, 0);
		return 0;
	}
	/* Once into kernel memory: the FIFO is user-writable. */
	percs_copy(&ext, payload, sizeof(ext));
	err = percs_rdma_check(h, &ext);
	if (err)
		goto fail;
	if (w->nr_rdma >= PERCS_RDMA_MAX_OPS)
		return -EBUSY;
	extra = ext.op == PERCS_RDMA_OP_FIFO_WRITE ? ext.len : 0;
	op = kmalloc(struct_size(op, data, extra), GFP_ATOMIC | __GFP_NOWARN);
	track = kmalloc(sizeof(*track), GFP_ATOMIC | __GFP_NOWARN);
	if (!op || !track) {
		kfree(op);
		kfree(track);
		err = -ENOMEM;
		goto fail;
	}
	refcount_set(&track->ref, 1);
	atomic_set(&track->pending, 1);
	atomic_set(&track->err, 0);
	track->gid = percs_window_gid(w);
	track->pd = w->hfi->pd;
	INIT_WORK(&track->work, percs_rdma_track_work);

	op->hdr = *h;
	op->hdr.src.hub = w->hfi->hub;
	op->hdr.src.hfi = w->hfi->unit;
	op->hdr.src.reserved = 0;
	op->hdr.src.window = w->index;
	op->hdr.job_key = w->job_key;
	op->ext = ext;
	op->state = PERCS_RDMA_QUEUED;
	op->cqe_flags = 0;
	op->done = 0;
	op->lmr = NULL;
	op->rmr = NULL;
	op->track = track;
	if (extra)
		percs_copy(op->data, payload + sizeof(ext), extra);
	list_add_tail(&op->node, &w->rdma_ops);
	w->nr_rdma++;
	WRITE_ONCE(w->st->packets_sent, w->st->packets_sent + 1);
	return 0;

fail:
	percs_cq_post(w, ext.user_data, err, PERCS_PKT_RDMA, 0);
	return 0;
}

/* The route of a transfer's data: initiator to target, or back for a read. */
static int percs_rdma_route(struct percs_window *w,
			    const struct percs_rdma_op *op,
			    struct fm_route *route, unsigned int *extra_hops)
{
	struct percs_dev *pd = w->hfi->pd;
	struct fm_route direct;
	unsigned int seq;
	int ret;

	if (op->ext.op != PERCS_RDMA_OP_READ)
		return percs_isr_route(w, &op->hdr, route, extra_hops);
	do {
		seq = read_seqbegin(&pd->isr.lock);
		ret = fm_route(&pd->topo, op->hdr.dst.hub, w->hfi->hub,
			       op->hdr.route, op->hdr.route_arg, &w->cursor,
			       route);
		*extra_hops = 0;
		if (!ret && op->hdr.route != PERCS_ROUTE_DIRECT &&
		    !fm_route_direct(&pd->topo, op->hdr.dst.hub, w->hfi->hub,
				     &direct) &&
		    route->nr_hops > direct.nr_hops)
			*extra_hops = route->nr_hops - direct.nr_hops;
	} while (read_seqretry(&pd->isr.lock, seq));
	return ret ? ret : route->route_class;
}

/*
 * Start an operation: validate both sides over the whole range before any
 * byte moves.  Return: 0, or the completion status (*@cqe_flags tells
 * whether it is about the initiator's registration).
 */
static int percs_rdma_start(struct percs_window *w, struct percs_rdma_op *op)
{
	bool rd = op->ext.op == PERCS_RDMA_OP_READ;
	struct percs_dev *pd = w->hfi->pd;
	unsigned int extra_hops;
	struct percs_window *t;
	struct fm_route route;
	struct percs_mr *mr;
	int cls, err = 0;

	if (op->ext.op != PERCS_RDMA_OP_FIFO_WRITE) {
		mr = percs_mr_get(w, op->ext.local_handle, op->ext.local_addr,
				  op->ext.len,
				  rd ? PERCS_ACCESS_LOCAL_WRITE : 0);
		if (IS_ERR(mr)) {
			op->cqe_flags = PERCS_CQE_F_LOCAL;
			return PTR_ERR(mr);
		}
		op->lmr = mr;
	}
	/* The request (a read) or the first data packet's route. */
	cls = percs_isr_route(w, &op->hdr, &route, &extra_hops);
	if (cls < 0)
		return cls;
	rcu_read_lock();
	t = percs_window_lookup_rcu(pd, &op->hdr.dst, &err);
	if (t)
		err = percs_window_may_send_to(w, t);
	if (!err) {
		mr = percs_mr_get(t, op->ext.handle, op->ext.remote_addr,
				  op->ext.len,
				  rd ? PERCS_ACCESS_REMOTE_READ :
				       PERCS_ACCESS_REMOTE_WRITE);
		if (IS_ERR(mr))
			err = PTR_ERR(mr);
		else
			op->rmr = mr;
	}
	rcu_read_unlock();
	if (err)
		return err;
	if (rd) {
		/* The read request: one packet to the target. */
		percs_isr_count(pd, &route, fm_pkt_units(sizeof(op->ext)));
		this_cpu_inc(w->hfi->stats->packets[cls]);
	}
	op->state = PERCS_RDMA_RUNNING;
	return 0;
}

/* Flits of the packets carrying @n bytes from a segment boundary. */
static u64 percs_rdma_flits(u64 n)
{
	u64 rem = n % PERCS_RDMA_SEG_DATA;

	return n / PERCS_RDMA_SEG_DATA * PERCS_RDMA_SEG_UNITS +
	       (rem ? fm_pkt_units(PERCS_RDMA_EXT_SIZE + rem) : 0);
}

/**
 * struct percs_rdma_xfer - one pass of a running transfer
 * @w: the initiator (send_lock held)
 * @op: the operation
 * @land: the window whose memory the data lands in
 * @sender: the HFI the data leaves from (its route-class counters)
 * @dst: the registration written
 * @daddr: where its next byte goes
 * @src: the registration read, or NULL for @buf
 * @saddr: where its next byte comes from
 * @buf: FIFO_WRITE payload, next byte
 */
struct percs_rdma_xfer {
	struct percs_window *w;
	struct percs_rdma_op *op;
	struct percs_window *land;
	struct percs_hfi *sender;
	struct percs_mr *dst;
	u64 daddr;
	struct percs_mr *src;
	u64 saddr;
	const u8 *buf;
};

static int percs_rdma_copy(const struct percs_rdma_xfer *x, u64 off, u64 n)
{
	if (x->src)
		return percs_mr_copy_mr(x->dst, x->daddr + off, x->src,
					x->saddr + off, n);
	return percs_mr_copy_to(x->dst, x->daddr + off, x->buf + off, n);
}

/* Packets that arrived at @land may let packets held there through. */
static void percs_rdma_arrived(struct percs_window *land, u32 packets)
{
	if (likely(!READ_ONCE(land->nr_flight)))
		return;
	spin_lock(&land->recv_lock);
	if (!land->recv_dead) {
		land->arrivals += packets;
		percs_flight_release(land, 0);
	}
	percs_fifo_unlock(land);
}

/* Bulk: one route, one copy, one count for up to @budget packets. */
static int percs_rdma_bulk(struct percs_rdma_xfer *x, u32 *budget,
			   int *moved)
{
	struct percs_rdma_op *op = x->op;
	struct percs_dev *pd = x->w->hfi->pd;
	u64 n = min_t(u64, op->ext.len - op->done,
		      (u64)*budget * PERCS_RDMA_SEG_DATA);
	unsigned int extra_hops;
	struct fm_route route;
	u32 packets;
	int cls, err;

	cls = percs_rdma_route(x->w, op, &route, &extra_hops);
	if (cls < 0)
		return cls;
	err = percs_rdma_copy(x, op->done, n);
	if (err)
		return err;
	packets = DIV_ROUND_UP(n, PERCS_RDMA_SEG_DATA);
	percs_isr_count_n(pd, &route, packets, percs_rdma_flits(n));
	this_cpu_add(x->sender->stats->packets[cls], packets);
	percs_rdma_arrived(x->land, packets);
	op->done += n;
	*budget -= packets;
	*moved += packets;
	return 0;
}

/* One packet, which the network may hold back. */
static int percs_rdma_one(struct percs_rdma_xfer *x, int *moved)
{
	struct percs_rdma_op *op = x->op;
	struct percs_dev *pd = x->w->hfi->pd;
	struct percs_window *land = x->land;
	u32 n = min_t(u64, op->ext.len - op->done, PERCS_RDMA_SEG_DATA);
	unsigned int extra_hops, overtakers;
	struct fm_route route;
	int cls, err = 0;

	cls = percs_rdma_route(x->w, op, &route, &extra_hops);
	if (cls < 0)
		return cls;
	/* A route shared by the whole transfer delays all of it alike. */
	if (op->hdr.route == PERCS_ROUTE_DIRECT ||
	    op->hdr.route == PERCS_ROUTE_SW_INDIRECT)
		extra_hops = 0;
	overtakers = extra_hops + percs_flight_should_hold(pd);

	spin_lock(&land->recv_lock);
	if (land->recv_dead) {
		spin_unlock(&land->recv_lock);
		return -ECONNREFUSED;
	}
	if (!overtakers ||
	    percs_flight_hold_seg(land, x->dst, x->daddr + op->done, x->src,
				  x->saddr + op->done,
				  x->buf ? x->buf + op->done : NULL, n,
				  op->track, overtakers))
		err = percs_rdma_copy(x, op->done, n);
	else
		/* Held: it is released under the lock we still hold. */
		percs_rdma_track_hold(x->dst, op->track);
	if (!err) {
		land->arrivals++;
		if (land->nr_flight)
			percs_flight_release(land, 0);
	}
	percs_fifo_unlock(land);
	if (err)
		return err;
	percs_isr_count(pd, &route, fm_pkt_units(PERCS_RDMA_EXT_SIZE + n));
	this_cpu_inc(x->sender->stats->packets[cls]);
	op->done += n;
	(*moved)++;
	return 0;
}

/*
 * One pass of a running transfer, within the RCU read section the target
 * lookup needs.  Return: 0 (possibly with data left), or the error that
 * stops it (*@cqe_flags set for the initiator's side).
 */
static int percs_rdma_run_rcu(struct percs_window *w, struct percs_rdma_op *op,
			      u32 *budget, int *moved)
{
	bool rd = op->ext.op == PERCS_RDMA_OP_READ;
	struct percs_rdma_xfer x = { .w = w, .op = op };
	bool bulk;
	int err = 0;

	x.land = percs_window_lookup_rcu(w->hfi->pd, &op->hdr.dst, &err);
	if (!x.land)
		return err;
	err = percs_window_may_send_to(w, x.land);
	if (err)
		return err;
	if (!percs_mr_live(x.land, op->rmr))
		return -ENOENT;
	if (op->lmr && !percs_mr_live(w, op->lmr)) {
		op->cqe_flags = PERCS_CQE_F_LOCAL;
		return -ENOENT;
	}
	if (rd) {
		x.sender = x.land->hfi;
		x.land = w;
		x.dst = op->lmr;
		x.daddr = op->ext.local_addr;
		x.src = op->rmr;
		x.saddr = op->ext.remote_addr;
	} else {
		x.sender = w->hfi;
		x.dst = op->rmr;
		x.daddr = op->ext.remote_addr;
		x.src = op->lmr;
		x.saddr = op->ext.local_addr;
		if (!x.src)
			x.buf = op->data;
	}
	bulk = (op->hdr.route == PERCS_ROUTE_DIRECT ||
		op->hdr.route == PERCS_ROUTE_SW_INDIRECT) &&
	       !READ_ONCE(w->hfi->pd->flight.reorder_ppm);
	while (!err && *budget && op->done < op->ext.len) {
		if (bulk) {
			err = percs_rdma_bulk(&x, budget, moved);
		} else {
			err = percs_rdma_one(&x, moved);
			(*budget)--;
		}
	}
	return err;
}

/* Post an operation's completion(s) and free it. */
static void percs_rdma_complete(struct percs_window *w,
				struct percs_rdma_op *op, int res)
{
	struct percs_window *t;
	int err;

	if (!res && (op->ext.flags & PERCS_RDMA_F_NOTIFY_TARGET)) {
		rcu_read_lock();
		t = percs_window_lookup_rcu(w->hfi->pd, &op->hdr.dst, &err);
		if (t) {
			spin_lock(&t->recv_lock);
			if (!t->recv_dead && !percs_window_may_send_to(w, t))
				percs_cq_post(t, op->ext.user_data, 0,
					      PERCS_PKT_RDMA,
					      PERCS_CQE_F_REMOTE);
			spin_unlock(&t->recv_lock);
		}
		rcu_read_unlock();
	}
	percs_cq_post(w, op->ext.user_data, res, PERCS_PKT_RDMA,
		      res ? op->cqe_flags : 0);
	list_del(&op->node);
	w->nr_rdma--;
	percs_rdma_free(op);
}

/* All data of @op left (or it stopped with @err): wait for the rest. */
static void percs_rdma_sent(struct percs_window *w, struct percs_rdma_op *op,
			    int err)
{
	if (err)
		atomic_cmpxchg(&op->track->err, 0, err);
	op->state = PERCS_RDMA_SENT;
	/* The engine's own count; held segments may still be out. */
	atomic_dec(&op->track->pending);
}

/**
 * percs_rdma_progress() - move a window's RDMA operations on
 * @w: the window, send_lock held, not dead
 * @moved: incremented by the data packets sent and the completions posted
 *
 * Return: true when the pass budget ran out with data left to send.
 */
bool percs_rdma_progress(struct percs_window *w, int *moved)
{
	u32 budget = PERCS_RDMA_PASS_SEGS;
	struct percs_rdma_op *op, *next;
	bool earlier = false;
	int err;

	lockdep_assert_held(&w->send_lock);
	list_for_each_entry_safe(op, next, &w->rdma_ops, node) {
		if (op->state == PERCS_RDMA_QUEUED) {
			/* A fence waits for every earlier one to complete. */
			if (earlier && (op->ext.flags & PERCS_RDMA_F_FENCE))
				break;
			err = percs_rdma_start(w, op);
			if (err) {
				percs_rdma_complete(w, op, err);
				(*moved)++;
				continue;
			}
		}
		if (op->state == PERCS_RDMA_RUNNING) {
			if (!budget)
				return true;
			rcu_read_lock();
			err = percs_rdma_run_rcu(w, op, &budget, moved);
			rcu_read_unlock();
			if (!err && op->done < op->ext.len)
				return true;
			percs_rdma_sent(w, op, err);
		}
		/* Acquire: the landed data before the completion. */
		if (!atomic_read_acquire(&op->track->pending)) {
			percs_rdma_complete(w, op,
					    atomic_read(&op->track->err));
			(*moved)++;
			continue;
		}
		earlier = true;
	}
	return false;
}

/**
 * percs_rdma_window_init() - a new window has no RDMA operations
 * @w: the window
 */
void percs_rdma_window_init(struct percs_window *w)
{
	INIT_LIST_HEAD(&w->rdma_ops);
	w->nr_rdma = 0;
}

/**
 * percs_rdma_window_fini() - drop the operations of a window going away
 * @w: the window, dead: no engine pass touches its list any more
 *
 * Operations not completed are dropped without a completion (nobody can
 * read it); their segments still in flight land or are discarded on
 * their own, and free the tracker last.
 */
void percs_rdma_window_fini(struct percs_window *w)
{
	struct percs_rdma_op *op, *next;
	LIST_HEAD(ops);

	spin_lock(&w->send_lock);
	list_splice_init(&w->rdma_ops, &ops);
	w->nr_rdma = 0;
	spin_unlock(&w->send_lock);
	list_for_each_entry_safe(op, next, &ops, node) {
		list_del(&op->node);
		percs_rdma_free(op);
	}
}

/**
 * percs_rdma_exit() - wait for the completion work items at unload
 * @pd: the system, every window released
 */
void percs_rdma_exit(struct percs_dev *pd)
{
	flush_workqueue(pd->nmmu_wq);
}
