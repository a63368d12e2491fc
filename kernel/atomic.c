// SPDX-License-Identifier: GPL-2.0
/*
 * percs: remote atomics - the initiator's and the target's side of the
 * HFI's atomic unit, with sequence numbers for exactly-once application.
 *
 * Initiator.  A %PERCS_PKT_ATOMIC descriptor read from the send FIFO is
 * checked (fm_atomic_parse(), the result registration, the route, the
 * target window and its job key; an error completes it at once, nothing
 * sent) and becomes an operation in a slot of the window
 * (w->amo.slot[], at most %PERCS_ATOMIC_MAX_OPS; a slot's memory is
 * allocated once and reused).  It gets the next
 * sequence number of its channel - the initiator/target window pair,
 * w->amo.chans - whose unanswered numbers span at most
 * %PERCS_AMO_SEQ_WINDOW; a descriptor that finds no room waits in the
 * send FIFO.  The request goes out through the lossy stage (net.c).
 * When the reply comes back the operation is marked done; the window's
 * next engine pass writes the fetched value into the result registration,
 * posts the completion entry and frees the slot.  An operation not
 * answered by its deadline is sent again (engine passes check, and the
 * window's delayed work is the timer), with a doubling timeout, for
 * %PERCS_AMO_TIMEOUT_MS after the first send: then it completes with
 * -ETIMEDOUT.
 *
 * Target.  Per initiator window it remembers (&struct percs_amo_peer) the
 * lowest sequence number not yet acknowledged to it (@base: the request's
 * @low moves it on) and, for the next %PERCS_AMO_SEQ_WINDOW numbers,
 * whether each was applied and its reply.  A request below @base was
 * answered and is ignored; an applied one gets its stored reply again;
 * a new one is applied - every operation of it checked first, so all or
 * none - and answered.  Each operation is a compare-and-exchange loop of
 * its width on the target's pinned page, so it is atomic with respect to
 * other atomics and the target CPU's own atomic instructions.
 *
 * Window instances tell a window from an earlier one at the same address:
 * a request from an initiator that is gone is ignored, one for a target
 * that is gone is answered -ECONNREFUSED, a reply for a gone initiator is
 * dropped.  An operation that completes with -ETIMEDOUT or -ECONNREFUSED
 * after its request was sent may have been applied (its reply was lost).
 *
 * Locking: post, progress and release run under the window's send_lock;
 * replies arrive in any context and take only w->amo.lock (to find and
 * mark the operation) - never a send_lock, so a request can be answered
 * within the initiator's own engine pass.  The target's rx_lock is
 * dropped before the reply is sent.
 */
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "dgram.h"
#include "net.h"
#include "nmmu.h"

/**
 * struct percs_amo_op - one outstanding atomic descriptor (initiator)
 * @hdr: its header (route mode, destination) for every send
 * @req: the request as sent, @req.low refreshed at each send
 * @chan: its channel
 * @result_mr: fetching ops: the result registration (a reference)
 * @deadline: ktime_get_ns() after which it is sent again
 * @tries: sends so far
 * @give_up: ktime_get_ns() after which it completes with -ETIMEDOUT
 * @dst_gid: the target window's global id
 * @done: the outcome is in (under w->amo.lock)
 * @status: 0 or the error
 * @value: the fetched value
 */
struct percs_amo_op {
	struct percs_pkt_hdr hdr;
	struct percs_amo_req req;
	struct percs_amo_chan *chan;
	struct percs_mr *result_mr;
	u64 deadline;
	u32 tries;
	u64 give_up;
	u32 dst_gid;
	bool done;
	s32 status;
	u64 value;
};

/**
 * struct percs_amo_chan - the sequence numbers from one window to one
 *	target window
 * @next_seq: the number the next request gets
 * @low: the lowest unanswered number (@next_seq when none)
 * @unanswered: bit i set: @low + i is unanswered (bit 0 always, unless
 *	none is)
 */
struct percs_amo_chan {
	u64 next_seq;
	u64 low;
	u64 unanswered;
};

/**
 * struct percs_amo_peer - what a target remembers of one initiator window
 * @inst: the initiator's instance this is about
 * @base: every number below was answered and acknowledged
 * @applied: bit i set: @base + i was applied, its reply is stored
 * @reply: the replies, by sequence number modulo the window
 * @back: the route of the replies to it, valid while @back_gen is the
 *	topology's link-state generation
 * @back_gen: see @back
 * @back_valid: @back was computed
 */
struct percs_amo_peer {
	u64 inst;
	u64 base;
	u64 applied;
	struct fm_route back;
	u32 back_gen;
	bool back_valid;
	struct {
		u64 value;
		s32 status;
	} reply[PERCS_AMO_SEQ_WINDOW];
};

static_assert(PERCS_AMO_SEQ_WINDOW == 64, "the bit masks are u64");

/* ---- the target ------------------------------------------------------ */

/* One operation on the mapped operand; Return: the value found. */
#define PERCS_AMO_RMW(type, p, op, operand, compare)			\
	({								\
		type *q_ = (p);						\
		type old_ = READ_ONCE(*q_), new_;			\
									\
		do {							\
			new_ = (type)fm_atomic_apply(op, sizeof(type),	\
						     old_, operand,	\
						     compare);		\
		} while (new_ != old_ && !try_cmpxchg(q_, &old_, new_)); \
		(u64)old_;						\
	})

/* Inline: once per operation, where a call costs as much as the work. */
static __always_inline u64 percs_amo_rmw(void *p, unsigned int width,
					 unsigned int op, u64 operand,
					 u64 compare)
{
	switch (width) {
	case 1:
		return PERCS_AMO_RMW(u8, p, op, operand, compare);
	case 2:
		return PERCS_AMO_RMW(u16, p, op, operand, compare);
	case 4:
		return PERCS_AMO_RMW(u32, p, op, operand, compare);
	default:
		return PERCS_AMO_RMW(u64, p, op, operand, compare);
	}
}

/* percs_amo_apply() of a descriptor of one operation, the usual kind. */
static int percs_amo_apply_one(struct percs_window *t,
			       const struct fm_atomic_desc *d, u64 *value)
{
	const struct percs_atomic_ext *e = &d->ext;
	u64 addr = d->ops[0].addr;
	struct percs_mr *mr;
	void *p;
	int err;

	err = fm_atomic_check_addr(addr, e->width);
	if (err)
		return err;
	mr = percs_mr_lookup_rcu(t, e->handle, addr, e->width,
				 PERCS_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	p = percs_mr_map_operand(mr, addr, e->width);
	if (IS_ERR(p))
		return PTR_ERR(p);
	*value = percs_amo_rmw(p, e->width, e->op, d->ops[0].operand,
			       d->compare);
	percs_mr_unmap_operand(p);
	return 0;
}

/*
 * Apply every operation of @d in @t's memory, or none: all are checked
 * first.  Under rcu_read_lock(), which keeps @t (looked up in it) and the
 * registration's pages.  Return: 0 with *@value the first one's old
 * value, or the error.
 */
static int percs_amo_apply(struct percs_window *t,
			   const struct fm_atomic_desc *d, u64 *value)
{
	const struct percs_atomic_ext *e = &d->ext;
	void *p[PERCS_ATOMIC_MAX_PACKED];
	struct percs_mr *mr = NULL;
	unsigned int i, mapped;
	int err = 0;
	u64 old;

	if (e->count == 1)
		return percs_amo_apply_one(t, d, value);
	/*
	 * One registration for all: looked up (rights, the first operand's
	 * range) once; every operand checked and mapped before any applies.
	 */
	for (mapped = 0; mapped < e->count; mapped++) {
		err = fm_atomic_check_addr(d->ops[mapped].addr, e->width);
		if (err)
			break;
		if (!mr) {
			mr = percs_mr_lookup_rcu(t, e->handle, d->ops[0].addr,
						 e->width,
						 PERCS_ACCESS_REMOTE_ATOMIC);
			if (IS_ERR(mr)) {
				err = PTR_ERR(mr);
				mr = NULL;
				break;
			}
		}
		p[mapped] = percs_mr_map_operand(mr, d->ops[mapped].addr,
						 e->width);
		if (IS_ERR(p[mapped])) {
			err = PTR_ERR(p[mapped]);
			break;
		}
	}
	for (i = 0; !err && i < mapped; i++) {
		old = percs_amo_rmw(p[i], e->width, e->op, d->ops[i].operand,
				    d->compare);
		if (!i)
			*value = old;	/* only single ops fetch */
	}
	while (mapped--)
		percs_mr_unmap_operand(p[mapped]);
	return err;
}

/* Move @p's window on to @low: what lies below is acknowledged. */
static void percs_amo_peer_advance(struct percs_amo_peer *p, u64 low)
{
	u64 shift = low - p->base;

	if (low <= p->base)
		return;
	p->applied = shift >= PERCS_AMO_SEQ_WINDOW ? 0 : p->applied >> shift;
	p->base = low;
}

static struct percs_amo_peer *percs_amo_peer_get(struct percs_window *t,
						 u32 src_gid, u64 inst,
						 u64 low)
{
	struct percs_amo_peer *p = xa_load(&t->amo.peers, src_gid);

	if (!p) {
		p = kmalloc(sizeof(*p), GFP_ATOMIC | __GFP_NOWARN);
		if (!p)
			return NULL;
		if (xa_err(xa_store(&t->amo.peers, src_gid, p, GFP_ATOMIC))) {
			kfree(p);
			return NULL;
		}
		p->inst = inst + 1;	/* reset below */
		p->back_valid = false;
	}
	if (p->inst != inst) {
		/* A new initiator window at this address: start afresh. */
		p->inst = inst;
		p->base = low;
		p->applied = 0;
	}
	return p;
}

static u32 percs_amo_gid_hub(struct percs_dev *pd, u32 gid)
{
	return gid / pd->windows_per_hfi / PERCS_HFIS_PER_HUB;
}

/*
 * Send @reply from window @t_gid back to @src_gid on the direct route; no
 * route now: nothing is sent and the initiator tries again later.  For
 * the replies no peer record carries a route for (errors, out of line:
 * the route on the stack is zeroed at each call).
 */
static noinline void percs_amo_reply_uncached(struct percs_dev *pd,
					      u32 t_gid, u32 src_gid,
					      const struct percs_amo_reply *reply,
					      struct percs_window *self)
{
	struct fm_route r;

	if (percs_isr_route_hubs(pd, percs_amo_gid_hub(pd, t_gid),
				 percs_amo_gid_hub(pd, src_gid), &r) < 0)
		return;
	percs_dgram_send(pd, PERCS_DGRAM_AMO_REPLY, t_gid, src_gid, reply,
			 sizeof(*reply), &r, self);
}

/* The reply route of @p, computed again after a link changed state. */
static bool percs_amo_peer_route(struct percs_dev *pd, struct percs_amo_peer *p,
				 u32 t_gid, u32 src_gid)
{
	u32 gen = READ_ONCE(pd->topo.generation);

	if (p->back_valid && p->back_gen == gen)
		return true;
	p->back_valid = percs_isr_route_hubs(pd, percs_amo_gid_hub(pd, t_gid),
					     percs_amo_gid_hub(pd, src_gid),
					     &p->back) >= 0;
	p->back_gen = gen;
	return p->back_valid;
}

/*
 * The target side of one request, in @t.  The reply is sent under
 * rx_lock, on the route the peer record keeps: delivering it takes only
 * the initiator's amo.lock (never held around rx_lock) or holds it back.
 */
static void percs_amo_answer(struct percs_dev *pd, struct percs_window *t,
			     u32 src_gid, u32 t_gid,
			     const struct percs_amo_req *req,
			     struct percs_window *self)
{
	struct percs_amo_reply reply = {
		.seq = req->seq, .src_inst = req->src_inst, .slot = req->slot,
	};
	struct percs_amo_peer *p;
	u64 bit, value = 0;
	unsigned int i;

	spin_lock(&t->amo.rx_lock);
	if (t->amo.rx_dead) {
		spin_unlock(&t->amo.rx_lock);
		reply.status = -ECONNREFUSED;
		percs_amo_reply_uncached(pd, t_gid, src_gid, &reply, self);
		return;
	}
	p = percs_amo_peer_get(t, src_gid, req->src_inst, req->low);
	if (!p) {
		/* No memory: as if lost; the initiator sends it again. */
		spin_unlock(&t->amo.rx_lock);
		return;
	}
	percs_amo_peer_advance(p, req->low);
	if (req->seq < p->base || req->seq - p->base >= PERCS_AMO_SEQ_WINDOW) {
		/* Answered and acknowledged long ago: a late copy. */
		spin_unlock(&t->amo.rx_lock);
		atomic64_inc(&pd->amo.stale);
		return;
	}
	bit = BIT_ULL(req->seq - p->base);
	i = req->seq % PERCS_AMO_SEQ_WINDOW;
	if (p->applied & bit) {
		atomic64_inc(&pd->amo.duplicates);
	} else {
		p->reply[i].status = percs_amo_apply(t, &req->desc, &value);
		p->reply[i].value = value;
		p->applied |= bit;
	}
	reply.status = p->reply[i].status;
	reply.value = p->reply[i].value;
	if (percs_amo_peer_route(pd, p, t_gid, src_gid))
		percs_dgram_send(pd, PERCS_DGRAM_AMO_REPLY, t_gid, src_gid,
				 &reply, sizeof(reply), &p->back, self);
	spin_unlock(&t->amo.rx_lock);
}

/**
 * percs_amo_request() - a request arrives at its target
 * @pd: the system
 * @src_gid: the initiating window
 * @dst_gid: the target window
 * @req: the request
 * @self: as for percs_dgram_send()
 */
static void percs_amo_request(struct percs_dev *pd, u32 src_gid,
			      u32 dst_gid, const struct percs_amo_req *req,
			      struct percs_window *self)
{
	struct percs_amo_reply reply = {
		.seq = req->seq, .src_inst = req->src_inst, .slot = req->slot,
	};
	struct percs_window *src, *t;

	rcu_read_lock();
	src = percs_window_lookup_gid_rcu(pd, src_gid);
	if (!src || src->inst != req->src_inst) {
		/* Its initiator is gone: nobody waits for the answer. */
		rcu_read_unlock();
		atomic64_inc(&pd->amo.stale);
		return;
	}
	t = percs_window_lookup_gid_rcu(pd, dst_gid);
	if (t && t->inst == req->dst_inst &&
	    !percs_window_job_allows(t, req->job_key)) {
		percs_amo_answer(pd, t, src_gid, dst_gid, req, self);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();
	reply.status = t && t->inst == req->dst_inst ? -EACCES : -ECONNREFUSED;
	percs_amo_reply_uncached(pd, dst_gid, src_gid, &reply, self);
}

/* ---- the initiator --------------------------------------------------- */

/**
 * percs_amo_reply() - a reply arrives at its initiator
 * @pd: the system
 * @src_gid: the target window that answers
 * @dst_gid: the initiating window
 * @reply: the reply
 * @self: as for percs_dgram_send(): a reply to @self is completed by the
 *	engine pass the caller is in; any other window's work is queued
 *
 * Any context; may be called under the target's rx_lock.
 */
static void percs_amo_reply(struct percs_dev *pd, u32 src_gid, u32 dst_gid,
			    const struct percs_amo_reply *reply,
			    struct percs_window *self)
{
	struct percs_amo_op *op = NULL;
	struct percs_window *w;

	rcu_read_lock();
	w = percs_window_lookup_gid_rcu(pd, dst_gid);
	if (w && w->inst == reply->src_inst &&
	    reply->slot < PERCS_ATOMIC_MAX_OPS) {
		spin_lock(&w->amo.lock);
		op = test_bit(reply->slot, w->amo.busy) ?
		     w->amo.slot[reply->slot] : NULL;
		if (op && !op->done && op->req.seq == reply->seq &&
		    op->dst_gid == src_gid) {
			op->status = reply->status;
			op->value = reply->value;
			WRITE_ONCE(op->done, true);
			if (w != self && !w->amo.dead)
				mod_delayed_work(system_wq, &w->amo.work, 0);
		} else {
			op = NULL;
		}
		spin_unlock(&w->amo.lock);
	}
	rcu_read_unlock();
	if (!op)
		atomic64_inc(&pd->amo.stale);
}

static u64 percs_amo_rto_ns(u32 tries)
{
	u64 us = PERCS_AMO_RTO_MIN_US << min_t(u32, tries, 16);

	return min_t(u64, us, PERCS_AMO_RTO_MAX_US) * NSEC_PER_USEC;
}

/* Send (again) the request of @op; Return: 0 or a routing error. */
static int percs_amo_send(struct percs_window *w, struct percs_amo_op *op,
			  u64 now)
{
	struct percs_dev *pd = w->hfi->pd;
	const struct fm_route *r;
	unsigned int extra;
	int route_class;

	r = percs_isr_route_ref(w, &op->hdr, &extra, &route_class);
	if (!r)
		return route_class;
	op->req.low = op->chan->low;
	op->tries++;
	/* 0: the caller sets it if the answer does not come at once. */
	op->deadline = now ? now + percs_amo_rto_ns(op->tries - 1) : 0;
	percs_dgram_send(pd, PERCS_DGRAM_AMO_REQ, percs_window_gid(w),
			 op->dst_gid, &op->req, sizeof(op->req), r, w);
	return 0;
}

/* The channel's sequence number @seq is answered. */
static void percs_amo_chan_answered(struct percs_amo_chan *c, u64 seq)
{
	c->unanswered &= ~BIT_ULL(seq - c->low);
	if (!c->unanswered) {
		c->low = c->next_seq;
		return;
	}
	seq = __ffs64(c->unanswered);
	c->unanswered >>= seq;
	c->low += seq;
}

/*
 * The low @width bytes of @value at the result address, host order; @mr
 * kept by a reference or by the caller's RCU section.
 */
static inline int percs_amo_store_result(struct percs_mr *mr,
					 const struct percs_atomic_ext *e,
					 u64 value)
{
	void *p;

	/* An aligned result is one store; any other goes byte-wise. */
	if (!IS_ALIGNED(e->result_addr, e->width))
		return percs_mr_copy_to(mr, e->result_addr, &value, e->width);
	p = percs_mr_map_operand(mr, e->result_addr, e->width);
	if (IS_ERR(p))
		return PTR_ERR(p);
	switch (e->width) {
	case 1:
		*(u8 *)p = value;
		break;
	case 2:
		*(u16 *)p = value;
		break;
	case 4:
		*(u32 *)p = value;
		break;
	default:
		*(u64 *)p = value;
	}
	percs_mr_unmap_operand(p);
	return 0;
}

/*
 * The end of every sent descriptor: the fetched value into the result
 * registration (whose reference is dropped), the completion entry.
 */
static void percs_amo_finish(struct percs_window *w,
			     const struct percs_atomic_ext *e,
			     struct percs_mr *result_mr, int res, u8 flags,
			     u64 value)
{
	if (result_mr) {
		if (!res)
			res = percs_amo_store_result(result_mr, e, value);
		percs_mr_put(result_mr);
	}
	percs_cq_post(w, e->user_data, res, PERCS_PKT_ATOMIC, flags);
	this_cpu_inc(w->hfi->stats->amo_completed);
}

/* Write the result, post the completion, free the slot (send_lock). */
static void percs_amo_complete(struct percs_window *w, unsigned int i)
{
	struct percs_amo_op *op = w->amo.slot[i];
	const struct percs_atomic_ext *e = &op->req.desc.ext;
	int res = op->status;
	u8 flags = 0;

	spin_lock(&w->amo.lock);
	__clear_bit(i, w->amo.busy);
	spin_unlock(&w->amo.lock);
	w->amo.nr--;
	percs_amo_chan_answered(op->chan, op->req.seq);
	/* A deregistration while the request was out drops the result. */
	if (op->result_mr && !res && !percs_mr_live(w, op->result_mr)) {
		res = -ENOENT;
		flags = PERCS_CQE_F_LOCAL;
	}
	percs_amo_finish(w, e, op->result_mr, res, flags, op->value);
}

static void percs_amo_fail(struct percs_window *w, unsigned int i, int err)
{
	struct percs_amo_op *op = w->amo.slot[i];

	spin_lock(&w->amo.lock);
	if (!op->done) {
		op->status = err;
		op->done = true;
	}
	spin_unlock(&w->amo.lock);
	percs_amo_complete(w, i);
}

/*
 * The result registration of a new descriptor, referenced (NULL when it
 * does not fetch), under rcu_read_lock().  Return: 0 or the status to
 * complete the descriptor with.
 */
static int percs_amo_result_mr(struct percs_window *w,
			       const struct percs_atomic_ext *e,
			       struct percs_mr **mr)
{
	*mr = NULL;
	if (!(e->flags & PERCS_ATOMIC_F_FETCH))
		return 0;
	*mr = percs_mr_get_rcu(w, e->result_handle, e->result_addr, e->width,
			       PERCS_ACCESS_LOCAL_WRITE);
	if (IS_ERR(*mr)) {
		int err = PTR_ERR(*mr);

		*mr = NULL;
		return err;
	}
	return 0;
}

static struct percs_amo_chan *percs_amo_chan_get(struct percs_window *w,
						 u32 gid)
{
	struct percs_amo_chan *c;

	/* Runs of operations to one target skip the xarray walk. */
	if (w->amo.last_chan && w->amo.last_gid == gid)
		return w->amo.last_chan;
	c = xa_load(&w->amo.chans, gid);
	if (!c) {
		c = kzalloc(sizeof(*c), GFP_ATOMIC | __GFP_NOWARN);
		if (!c)
			return NULL;
		if (xa_err(xa_store(&w->amo.chans, gid, c, GFP_ATOMIC))) {
			kfree(c);
			return NULL;
		}
	}
	w->amo.last_chan = c;
	w->amo.last_gid = gid;
	return c;
}

/*
 * A free slot and its memory; NULL when none is free or the memory cannot
 * be had.  Slots are taken round robin, so a late reply for a slot's last
 * operation meets a different sequence number rather than a reused one
 * as soon as possible.
 */
static struct percs_amo_op *percs_amo_free_slot(struct percs_window *w,
						unsigned int *slot)
{
	unsigned int i;

	i = find_next_zero_bit(w->amo.busy, PERCS_ATOMIC_MAX_OPS,
			       w->amo.next_slot);
	if (i >= PERCS_ATOMIC_MAX_OPS)
		i = find_first_zero_bit(w->amo.busy, PERCS_ATOMIC_MAX_OPS);
	if (i >= PERCS_ATOMIC_MAX_OPS)
		return NULL;
	if (!w->amo.slot[i]) {
		w->amo.slot[i] = kmalloc(sizeof(*w->amo.slot[i]),
					 GFP_ATOMIC | __GFP_NOWARN);
		if (!w->amo.slot[i])
			return NULL;
	}
	w->amo.next_slot = (i + 1) % PERCS_ATOMIC_MAX_OPS;
	*slot = i;
	return w->amo.slot[i];
}

/*
 * Check the target of a new operation; Return: 0 with its gid and
 * instance, or the status to complete the descriptor with.
 */
static int percs_amo_target(struct percs_window *w,
			    const struct percs_pkt_hdr *h, u32 *gid, u64 *inst)
{
	struct percs_window *t;
	int err;

	rcu_read_lock();
	t = percs_window_lookup_rcu(w->hfi->pd, &h->dst, &err);
	if (t)
		err = percs_window_may_send_to(w, t);
	if (!err) {
		*gid = percs_window_gid(t);
		*inst = t->inst;
	}
	rcu_read_unlock();
	return err;
}

/*
 * Can the network lose, duplicate or delay an atomic datagram now?  When
 * it cannot, a request would reach its target and the answer come back
 * within this engine pass, each once: the sequence numbers would have
 * nothing to do, and the descriptor is applied directly (no slot, no
 * number: a channel's numbers count only what went through the protocol).
 */
static bool percs_amo_lossless(struct percs_dev *pd)
{
	return !READ_ONCE(pd->dgram.drop_ppm) && !READ_ONCE(pd->dgram.dup_ppm) &&
	       !READ_ONCE(pd->flight.reorder_ppm);
}

/* Compute the route pair of percs_amo_routes(), out of line (see there). */
static noinline bool percs_amo_routes_find(struct percs_window *w, u32 hub,
					   u32 gen)
{
	struct percs_amo_routes *rt = &w->amo.routes;
	struct percs_dev *pd = w->hfi->pd;
	struct fm_route r;

	rt->hub = hub;
	rt->gen = gen;
	rt->valid = false;
	if (percs_isr_route_hubs(pd, w->hfi->hub, hub, &r) < 0)
		return false;
	percs_isr_ctrs_init(pd, &r, &rt->fwd);
	if (percs_isr_route_hubs(pd, hub, w->hfi->hub, &r) < 0)
		return false;
	percs_isr_ctrs_init(pd, &r, &rt->back);
	rt->valid = true;
	return true;
}

/*
 * The direct routes to hub @hub and back, as the link counters their
 * packets go to, kept for the next operation to the same hub until a link
 * changes state (a route on the stack would be zeroed at every call: the
 * search is out of line).  Return: false when a link down leaves none
 * (not kept: the next operation searches again).
 */
static bool percs_amo_routes(struct percs_window *w, u32 hub)
{
	struct percs_amo_routes *rt = &w->amo.routes;
	u32 gen = READ_ONCE(w->hfi->pd->topo.generation);

	if (rt->valid && rt->hub == hub && rt->gen == gen)
		return true;
	return percs_amo_routes_find(w, hub, gen);
}

/*
 * The lossless network's path: decode, the result registration, route,
 * target checks, apply, count the request and the answer on their links,
 * complete - each check in the order of the protocol's, with its status.
 * One RCU section covers the look-ups and the apply.  The direct route
 * (the library's) comes from the window's route pair; the other modes
 * are routed per packet, the answer coming back direct.
 */
static void percs_amo_direct(struct percs_window *w,
			     const struct percs_pkt_hdr *h, const u8 *payload)
{
	struct fm_atomic_desc *d = &w->amo.direct;
	struct percs_dev *pd = w->hfi->pd;
	struct percs_mr *result_mr = NULL;
	const struct fm_route *r = NULL;
	struct percs_window *t;
	u64 user_data = h->tag;
	unsigned int extra;
	u8 cqe_flags = 0;
	u64 value = 0;
	int err, status;

	err = fm_atomic_parse(h, payload, d);
	/* Copied from the FIFO once, whole or not at all (too short). */
	if (h->length >= sizeof(struct percs_atomic_ext))
		user_data = d->ext.user_data;
	if (err)
		goto out_complete;
	rcu_read_lock();
	if (d->ext.flags & PERCS_ATOMIC_F_FETCH) {
		result_mr = percs_mr_lookup_rcu(w, d->ext.result_handle,
						d->ext.result_addr,
						d->ext.width,
						PERCS_ACCESS_LOCAL_WRITE);
		if (IS_ERR(result_mr)) {
			err = PTR_ERR(result_mr);
			cqe_flags = PERCS_CQE_F_LOCAL;
			goto out_unlock;
		}
	}
	if (h->route != PERCS_ROUTE_DIRECT) {
		r = percs_isr_route_ref(w, h, &extra, &err);
		if (!r)
			goto out_unlock;
	} else if (h->dst.hub >= pd->topo.nr_hubs) {
		err = -EHOSTUNREACH;
		goto out_unlock;
	}
	if (!percs_amo_routes(w, h->dst.hub)) {
		err = -EHOSTUNREACH;	/* links went down */
		goto out_unlock;
	}
	t = percs_window_lookup_rcu(pd, &h->dst, &err);
	if (!t)
		goto out_unlock;
	err = percs_window_may_send_to(w, t);
	if (err)
		goto out_unlock;
	status = percs_amo_apply(t, d, &value);
	if (!status && result_mr)
		status = percs_amo_store_result(result_mr, &d->ext, value);
	rcu_read_unlock();
	if (r)
		percs_isr_count_later(w, r, 1);
	else
		percs_isr_ctrs_count(pd, &w->amo.routes.fwd, 1);
	percs_isr_ctrs_count(pd, &w->amo.routes.back, 1);
	WRITE_ONCE(w->st->packets_sent, w->st->packets_sent + 1);
	this_cpu_inc(w->hfi->stats->amo_issued);
	percs_cq_post(w, user_data, status, PERCS_PKT_ATOMIC, 0);
	this_cpu_inc(w->hfi->stats->amo_completed);
	return;

out_unlock:
	rcu_read_unlock();
out_complete:
	percs_cq_post(w, user_data, err, PERCS_PKT_ATOMIC, cqe_flags);
}

/**
 * percs_amo_post() - start one atomic descriptor read from the send FIFO
 * @w: the window, send_lock held, not dead
 * @h: its header, through fm_pkt_check()
 * @payload: @h->length bytes in the FIFO
 *
 * Return: 0 when the descriptor was consumed (sent, or completed at once
 * with an error); -EBUSY when the window or the channel to its target has
 * no room: it stays in the FIFO until completions make some.
 */
int percs_amo_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		   const u8 *payload)
{
	struct percs_mr *result_mr = NULL;
	struct percs_amo_chan *chan;
	u64 user_data = h->tag, inst = 0;
	struct percs_amo_op *op;
	unsigned int slot = 0;
	u8 cqe_flags = 0;
	u32 gid = 0;
	int err;

	lockdep_assert_held(&w->send_lock);
	if (w->amo.nr >= PERCS_ATOMIC_MAX_OPS)
		return -EBUSY;
	if (percs_amo_lossless(w->hfi->pd)) {
		percs_amo_direct(w, h, payload);
		return 0;
	}
	op = percs_amo_free_slot(w, &slot);
	if (!op) {
		err = -ENOMEM;
		goto out_complete;
	}
	err = fm_atomic_parse(h, payload, &op->req.desc);
	/* Copied from the FIFO once, whole or not at all (too short). */
	if (h->length >= sizeof(struct percs_atomic_ext))
		user_data = op->req.desc.ext.user_data;
	if (err)
		goto out_complete;
	rcu_read_lock();
	err = percs_amo_result_mr(w, &op->req.desc.ext, &result_mr);
	rcu_read_unlock();
	if (err) {
		cqe_flags = PERCS_CQE_F_LOCAL;
		goto out_complete;
	}
	err = percs_amo_target(w, h, &gid, &inst);
	if (err)
		goto out_complete;
	chan = percs_amo_chan_get(w, gid);
	if (!chan) {
		err = -ENOMEM;
		goto out_complete;
	}
	if (chan->next_seq - chan->low >= PERCS_AMO_SEQ_WINDOW) {
		if (result_mr)
			percs_mr_put(result_mr);
		return -EBUSY;
	}

	op->hdr = *h;
	op->chan = chan;
	op->result_mr = result_mr;
	op->tries = 0;
	op->dst_gid = gid;
	op->done = false;
	op->status = 0;
	op->value = 0;
	op->req.seq = chan->next_seq++;
	op->req.src_inst = w->inst;
	op->req.dst_inst = inst;
	op->req.slot = slot;
	op->req.job_key = w->job_key;
	chan->unanswered |= BIT_ULL(op->req.seq - chan->low);
	spin_lock(&w->amo.lock);
	__set_bit(slot, w->amo.busy);
	spin_unlock(&w->amo.lock);
	w->amo.nr++;
	WRITE_ONCE(w->st->packets_sent, w->st->packets_sent + 1);
	this_cpu_inc(w->hfi->stats->amo_issued);

	err = percs_amo_send(w, op, 0);
	if (err)
		percs_amo_fail(w, slot, err);
	else if (READ_ONCE(op->done))
		/* Answered at once, the common case: complete it now. */
		percs_amo_complete(w, slot);
	else {
		op->deadline = ktime_get_ns() + percs_amo_rto_ns(0);
		op->give_up = op->deadline +
			      (u64)PERCS_AMO_TIMEOUT_MS * NSEC_PER_MSEC;
	}
	return 0;

out_complete:
	if (result_mr)
		percs_mr_put(result_mr);
	percs_cq_post(w, user_data, err, PERCS_PKT_ATOMIC, cqe_flags);
	return 0;
}

/**
 * percs_amo_progress() - complete what was answered, resend what is late
 * @w: the window, send_lock held, not dead
 * @moved: incremented per completion
 *
 * Arms the window's timer for the earliest deadline left.
 *
 * Return: true if operations are left outstanding.
 */
bool percs_amo_progress(struct percs_window *w, int *moved)
{
	u64 now = ktime_get_ns(), next = U64_MAX;
	struct percs_amo_op *op;
	unsigned int i;
	int err;

	for_each_set_bit(i, w->amo.busy, PERCS_ATOMIC_MAX_OPS) {
		op = w->amo.slot[i];
		if (!READ_ONCE(op->done) && op->deadline <= now) {
			if (now >= op->give_up) {
				atomic64_inc(&w->hfi->pd->amo.timeouts);
				percs_amo_fail(w, i, -ETIMEDOUT);
				(*moved)++;
				continue;
			}
			atomic64_inc(&w->hfi->pd->amo.retransmits);
			err = percs_amo_send(w, op, now);
			if (err) {
				percs_amo_fail(w, i, err);
				(*moved)++;
				continue;
			}
		}
		if (READ_ONCE(op->done)) {
			percs_amo_complete(w, i);
			(*moved)++;
			continue;
		}
		next = min(next, op->deadline);
	}
	if (next != U64_MAX)
		queue_delayed_work(system_wq, &w->amo.work,
				   max(1UL, nsecs_to_jiffies(next - now)));
	return w->amo.nr;
}

/* Run the engine: a reply arrived from elsewhere, or a deadline passed. */
static void percs_amo_work(struct work_struct *work)
{
	struct percs_window *w = container_of(to_delayed_work(work),
					      struct percs_window, amo.work);
	unsigned int passes = 0;

	while (percs_engine_wake_step(w, PERCS_KICK_F_SEND, &passes))
		cond_resched();
}

/**
 * percs_amo_counts() - the atomics' descriptor counts over the system
 * @pd: the system
 * @issued: out: descriptors sent
 * @completed: out: their completion entries posted
 * @outstanding: out: sent and neither completed nor freed with their
 *	window
 */
void percs_amo_counts(struct percs_dev *pd, u64 *issued, u64 *completed,
		      u64 *outstanding)
{
	u64 abandoned = 0;
	unsigned int i, cpu;

	*issued = 0;
	*completed = 0;
	for (i = 0; i < pd->nr_hfis; i++) {
		for_each_possible_cpu(cpu) {
			const struct percs_hfi_stats *st =
				per_cpu_ptr(pd->hfis[i].stats, cpu);

			*issued += READ_ONCE(st->amo_issued);
			*completed += READ_ONCE(st->amo_completed);
			abandoned += READ_ONCE(st->amo_abandoned);
		}
	}
	*outstanding = *issued - *completed - abandoned;
}

/**
 * percs_amo_window_init() - a new window: no atomics, a new instance
 * @w: the window
 */
void percs_amo_window_init(struct percs_window *w)
{
	spin_lock_init(&w->amo.lock);
	spin_lock_init(&w->amo.rx_lock);
	xa_init(&w->amo.chans);
	xa_init(&w->amo.peers);
	INIT_DELAYED_WORK(&w->amo.work, percs_amo_work);
	w->inst = atomic64_inc_return(&w->hfi->pd->window_inst);
}

/**
 * percs_amo_window_fini() - drop a released window's atomics
 * @w: the window, dead and unpublished
 *
 * Outstanding operations are freed without a completion (the CQ goes
 * away with the window); replies still in the network find no window.
 */
void percs_amo_window_fini(struct percs_window *w)
{
	struct percs_amo_chan *c;
	struct percs_amo_peer *p;
	struct percs_amo_op *op;
	unsigned long index;
	unsigned int i;

	spin_lock(&w->amo.lock);
	w->amo.dead = true;
	spin_unlock(&w->amo.lock);
	cancel_delayed_work_sync(&w->amo.work);
	for_each_set_bit(i, w->amo.busy, PERCS_ATOMIC_MAX_OPS) {
		op = w->amo.slot[i];
		if (op->result_mr)
			percs_mr_put(op->result_mr);
		this_cpu_inc(w->hfi->stats->amo_abandoned);
	}
	/* A reply looks at a slot's memory only while its bit is set. */
	spin_lock(&w->amo.lock);
	bitmap_zero(w->amo.busy, PERCS_ATOMIC_MAX_OPS);
	spin_unlock(&w->amo.lock);
	w->amo.nr = 0;
	for (i = 0; i < PERCS_ATOMIC_MAX_OPS; i++) {
		kfree(w->amo.slot[i]);
		w->amo.slot[i] = NULL;
	}
	w->amo.last_chan = NULL;
	xa_for_each(&w->amo.chans, index, c)
		kfree(c);
	xa_destroy(&w->amo.chans);

	spin_lock(&w->amo.rx_lock);
	w->amo.rx_dead = true;
	spin_unlock(&w->amo.rx_lock);
	xa_for_each(&w->amo.peers, index, p)
		kfree(p);
	xa_destroy(&w->amo.peers);
}

/* The delivery table's ends (net.h); a datagram is never refused. */
static int percs_amo_req_net_deliver(struct percs_dev *pd,
				     const struct percs_net_pkt *pkt)
{
	percs_amo_request(pd, pkt->src_gid, pkt->dst_gid, pkt->body,
			  pkt->self);
	return 0;
}

static int percs_amo_reply_net_deliver(struct percs_dev *pd,
				       const struct percs_net_pkt *pkt)
{
	percs_amo_reply(pd, pkt->src_gid, pkt->dst_gid, pkt->body, pkt->self);
	return 0;
}

const struct percs_net_handler percs_amo_req_net_handler = {
	.name = "amo_req",
	.deliver = percs_amo_req_net_deliver,
};

const struct percs_net_handler percs_amo_reply_net_handler = {
	.name = "amo_reply",
	.deliver = percs_amo_reply_net_deliver,
};
