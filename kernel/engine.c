// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the engine's send side - consuming a window's immediate slots and
 * send FIFO, routing each packet and handing it to the target.
 *
 * Every header is copied once into kernel memory and validated there; the
 * payload is copied straight from the (user-writable) FIFO to the target,
 * so a racing writer can only garble its own data.  A packet whose target
 * FIFO is full stays where it is and the window waits on pd->blocked.
 * RDMA descriptors are queued as operations (rdma.c) that each pass moves
 * on after the FIFO and immediate slots; atomic descriptors are sent at
 * once (atomic.c), and each pass completes the answered ones and resends
 * the late ones.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "percs.h"
#include "firmware-model/packet.h"
#include "dgram.h"
#include "cau_tree.h"

/**
 * struct percs_pass - what one engine pass over a window found
 * @moved: packets consumed (delivered or completed with an error)
 * @blocked: a target's receive FIFO was full
 * @blocked_on: that target's global window id
 * @bad_index: the doorbell held an invalid trigger
 * @more: the budget ran out with packets left
 * @rdma_full: an RDMA descriptor waits for the window's operations to
 *	drop below %PERCS_RDMA_MAX_OPS
 * @amo_full: an atomic descriptor waits for room among the window's
 *	outstanding atomics (atomic.c)
 * @sent: send descriptors consumed (immediate slots, FIFO entries
 *	other than pads), for &percs_status.sent_polled and sent_kicked
 */
struct percs_pass {
	int moved;
	unsigned int sent;
	bool blocked;
	u32 blocked_on;
	bool bad_index;
	bool more;
	bool rdma_full;
	bool amo_full;
};

/*
 * Route and deliver one validated packet; stamps src and job key.
 * Return: 0, %PERCS_FIFO_HELD when the network holds it and its remote
 * completion will be posted when it lands, or -errno.
 */
static int percs_engine_send_one(struct percs_window *w,
				 struct percs_pkt_hdr *h, const void *payload,
				 u8 cqe_flags, struct percs_pass *p)
{
	struct percs_dev *pd = w->hfi->pd;
	const struct fm_route *route;
	unsigned int extra_hops;
	struct percs_window *t;
	int route_class, ret;

	/* No route struct on the stack: the kernel would zero it per packet. */
	route = percs_isr_route_ref(w, h, &extra_hops, &route_class);
	if (!route)
		return route_class;

	h->src.hub = w->hfi->hub;
	h->src.hfi = w->hfi->unit;
	h->src.reserved = 0;
	h->src.window = w->index;
	h->job_key = w->job_key;

	rcu_read_lock();
	t = percs_window_lookup_rcu(pd, &h->dst, &ret);
	if (t)
		ret = percs_window_may_send_to(w, t);
	if (!ret) {
		ret = percs_net_send(t, h, payload, extra_hops,
				     h->flags & PERCS_PKT_F_NOTIFY_REMOTE ?
				     w : NULL, cqe_flags);
		if (ret == -EAGAIN) {
			p->blocked = true;
			p->blocked_on = percs_window_gid(t);
		}
	}
	rcu_read_unlock();
	if (ret >= 0) {
		percs_isr_count_later(w, route, fm_pkt_units(h->length));
		this_cpu_inc(w->hfi->stats->packets[route_class]);
	}
	return ret;
}

/*
 * Complete one packet: count it, and post a CQE on error or when asked
 * (a held packet's remote completion comes when it lands: landed.c).
 */
static void percs_engine_complete(struct percs_window *w,
				  const struct percs_pkt_hdr *h, int res,
				  u8 cqe_flags, struct percs_pass *p)
{
	bool asked = h->flags & (PERCS_PKT_F_NOTIFY | PERCS_PKT_F_NOTIFY_REMOTE);

	p->moved++;
	p->sent++;
	if (res >= 0) {
		WRITE_ONCE(w->st->packets_sent, w->st->packets_sent + 1);
		if (res == PERCS_FIFO_HELD || !asked)
			return;
	} else if (!asked) {
		cqe_flags |= PERCS_CQE_F_UNASKED;
	}
	percs_cq_post(w, h->tag, res, h->kind, cqe_flags);
}

static void percs_engine_run_imm(struct percs_window *w, struct percs_pass *p)
{
	u64 tail = READ_ONCE(w->db->imm_tail);
	u64 start = w->imm_head;
	struct percs_pkt_hdr h;
	const u8 *line;
	int res;

	/* Behind the head or more than the ring ahead: ignore and report. */
	if (tail - w->imm_head > PERCS_IMM_SLOTS) {
		percs_window_error(w, -EINVAL);
		p->bad_index = true;
		return;
	}
	while (w->imm_head != tail) {
		/* The header once into kernel memory; the payload as is. */
		line = percs_ring_unit(&w->imm, w->imm_head);
		percs_copy(&h, line, sizeof(h));
		res = fm_pkt_check(&h, true);
		if (!res) {
			res = percs_engine_send_one(w, &h, line + sizeof(h),
						    PERCS_CQE_F_IMM, p);
			if (res == -EAGAIN)
				break;
		}
		percs_engine_complete(w, &h, res, PERCS_CQE_F_IMM, p);
		w->imm_head++;
	}
	if (w->imm_head != start)
		/* The slots were read before user space may reuse them. */
		smp_store_release(&w->st->imm_head, w->imm_head);
}

/*
 * The trigger may only move forward and never past send_head + ring size;
 * a bad value is ignored (the last good one stays) and reported.
 */
static void percs_engine_read_trigger(struct percs_window *w,
				      struct percs_pass *p)
{
	u64 tail = READ_ONCE(w->db->send_tail);
	u64 room = (u64)w->send.units - (w->send_tail - w->send_head);

	if (tail - w->send_tail > room) {
		percs_window_error(w, -EINVAL);
		p->bad_index = true;
		return;
	}
	w->send_tail = tail;
}

/* Consume the packets between send_head and the trigger. */
static void percs_engine_run_fifo(struct percs_window *w, struct percs_pass *p)
{
	struct percs_ring *ring = &w->send;
	unsigned int budget = PERCS_ENGINE_BUDGET;
	u64 start = w->send_head;
	struct percs_pkt_hdr h;

	percs_engine_read_trigger(w, p);
	while (w->send_head != w->send_tail) {
		u64 avail = w->send_tail - w->send_head;
		u32 contig = ring->units - (w->send_head & (ring->units - 1));
		const u8 *unit = percs_ring_unit(ring, w->send_head);
		u32 units;
		int res;

		if (!budget--) {
			p->more = true;
			break;
		}
		percs_copy(&h, unit, sizeof(h));
		if (h.kind == PERCS_PKT_PAD) {
			/* A pad fills exactly the rest of the ring. */
			if (h.length == fm_pkt_pad_length(contig) &&
			    contig <= avail) {
				w->send_head += contig;
				continue;
			}
			res = -EINVAL;
			units = avail;
		} else {
			units = fm_pkt_units(h.length);
			res = fm_pkt_check(&h, false);
			if (units > avail || units > contig) {
				/* Past the trigger: nothing after it is sane. */
				res = -EINVAL;
				units = avail;
			} else if (res == -EINVAL) {
				units = avail;
			}
		}
		if (!res && h.kind == PERCS_PKT_RDMA) {
			/* Queued, or completed at once with its status. */
			if (percs_rdma_post(w, &h, unit + sizeof(h))) {
				p->rdma_full = true;
				break;
			}
			p->moved++;
			p->sent++;
			w->send_head += units;
			continue;
		}
		if (!res && h.kind == PERCS_PKT_COLL) {
			/*
			 * Its input taken, or completed; a busy slot waits
			 * here until the tree frees it and wakes us.
			 */
			if (percs_coll_post(w, &h, unit + sizeof(h)))
				break;
			p->moved++;
			p->sent++;
			w->send_head += units;
			continue;
		}
		if (!res && h.kind == PERCS_PKT_ATOMIC) {
			/* Sent (and usually answered), or completed. */
			if (percs_amo_post(w, &h, unit + sizeof(h))) {
				p->amo_full = true;
				break;
			}
			p->moved++;
			p->sent++;
			w->send_head += units;
			continue;
		}
		if (!res) {
			res = percs_engine_send_one(w, &h, unit + sizeof(h), 0,
						    p);
			if (res == -EAGAIN)
				break;
		}
		percs_engine_complete(w, &h, res, 0, p);
		w->send_head += units;
	}
	if (w->send_head != start)
		/* The FIFO was read before user space may reuse it. */
		smp_store_release(&w->st->send_head, w->send_head);
}

/* Called with w->send_lock held: enter, move on or leave pd->blocked. */
static void percs_engine_update_blocked(struct percs_window *w,
					const struct percs_pass *p)
{
	struct percs_dev *pd = w->hfi->pd;
	bool listed = !list_empty(&w->blocked_node);

	if (p->blocked) {
		if (!listed || w->blocked_on != p->blocked_on) {
			spin_lock(&pd->blocked_lock);
			w->blocked_on = p->blocked_on;
			if (!listed)
				list_add_tail(&w->blocked_node, &pd->blocked);
			spin_unlock(&pd->blocked_lock);
		}
		if (!listed) {
			percs_status_set(w, PERCS_STATUS_SEND_BLOCKED);
			WRITE_ONCE(w->st->send_blocked,
				   w->st->send_blocked + 1);
		}
	} else if (listed) {
		spin_lock(&pd->blocked_lock);
		list_del_init(&w->blocked_node);
		spin_unlock(&pd->blocked_lock);
		percs_status_clear(w, PERCS_STATUS_SEND_BLOCKED);
	}
}

/*
 * The polling thread's part of a pass, under send_lock: beat, and clear
 * NEED_WAKEUP (an awake pass); count the descriptors by who consumed them.
 */
static void percs_engine_account(struct percs_window *w,
				 unsigned int kick_flags,
				 const struct percs_pass *p)
{
	if (kick_flags & PERCS_ENGINE_F_POLLER) {
		w->poll_beat++;
		WRITE_ONCE(w->st->poll_beat, w->poll_beat);
		if (!(kick_flags & PERCS_ENGINE_F_SLEEPING) &&
		    (READ_ONCE(w->st->flags) & PERCS_STATUS_NEED_WAKEUP))
			percs_status_clear(w, PERCS_STATUS_NEED_WAKEUP);
		if (p->sent) {
			w->sent_polled += p->sent;
			WRITE_ONCE(w->st->sent_polled, w->sent_polled);
		}
	} else if (p->sent) {
		w->sent_kicked += p->sent;
		WRITE_ONCE(w->st->sent_kicked, w->sent_kicked);
	}
}

/* Count a kick system call; under send_lock, the window not dead. */
static void percs_engine_count_kick_locked(struct percs_window *w)
{
	w->kicks++;
	WRITE_ONCE(w->st->kicks, w->kicks);
}

/**
 * percs_engine_count_kick() - count a kick system call on the window
 *	that runs no engine pass (percs_engine_kick() counts its own)
 * @w: the window
 */
void percs_engine_count_kick(struct percs_window *w)
{
	spin_lock(&w->send_lock);
	if (!w->dead)
		percs_engine_count_kick_locked(w);
	spin_unlock(&w->send_lock);
}

/* One pass under the send lock; Return: as percs_engine_run(). */
static int percs_engine_pass(struct percs_window *w, unsigned int kick_flags,
			     bool *more)
{
	struct percs_pass p = { 0 };
	bool wake;

	spin_lock(&w->send_lock);
	if (w->dead) {
		spin_unlock(&w->send_lock);
		return -ENODEV;
	}
	if (kick_flags & PERCS_ENGINE_F_KICK)
		percs_engine_count_kick_locked(w);
	/* Datagrams the network held back that are due now. */
	percs_dgram_release(w->hfi->pd, w);
	if (kick_flags & PERCS_KICK_F_IMM)
		percs_engine_run_imm(w, &p);
	if ((kick_flags & PERCS_KICK_F_SEND) && !p.blocked &&
	    !(kick_flags & PERCS_ENGINE_F_DRAIN))
		percs_engine_run_fifo(w, &p);
	if ((kick_flags & PERCS_KICK_F_SEND) && !list_empty(&w->rdma_ops)) {
		if (percs_rdma_progress(w, &p.moved))
			p.more = true;
		/* Completions made room: read the descriptors left. */
		else if (p.rdma_full && w->nr_rdma < PERCS_RDMA_MAX_OPS)
			p.more = true;
	}
	if ((kick_flags & PERCS_KICK_F_SEND) && w->amo.nr) {
		unsigned int before = w->amo.nr;

		percs_amo_progress(w, &p.moved);
		/* Completions made room: read the descriptor that waits. */
		if (p.amo_full && w->amo.nr < before)
			p.more = true;
	}
	/* Remote completions of held packets that have landed. */
	if (!list_empty(&w->landed))
		percs_landed_progress(w, &p.moved);
	/* The pass's packets on the cached route, on its links at once. */
	percs_isr_flush(w->hfi->pd, &w->route);
	percs_engine_update_blocked(w, &p);
	percs_engine_account(w, kick_flags, &p);
	/*
	 * Send space was freed: wake poll(POLLOUT) waiters.  poll(2) reads
	 * send_head under send_lock, so no barrier is needed.
	 */
	wake = p.moved && waitqueue_active(&w->wq);
	spin_unlock(&w->send_lock);
	if (wake)
		wake_up_interruptible(&w->wq);
	*more = p.more;
	return p.bad_index ? -EINVAL : p.moved;
}

/**
 * percs_engine_run() - run the send side of a window, in atomic context
 * @w: the window
 * @kick_flags: PERCS_KICK_F_SEND and/or PERCS_KICK_F_IMM, with
 *	PERCS_ENGINE_F_POLLER (and PERCS_ENGINE_F_SLEEPING) from the polling
 *	thread
 *
 * One pass of at most %PERCS_ENGINE_BUDGET FIFO packets.
 *
 * Return: packets moved (delivered or completed with an error), -EINVAL
 * after a bad trigger, -ENODEV if the window is being released.
 */
int percs_engine_run(struct percs_window *w, unsigned int kick_flags)
{
	bool more;

	return percs_engine_pass(w, kick_flags, &more);
}

/*
 * The flags of a kick's pass after @passes passes.  After
 * %PERCS_KICK_MAX_PASSES passes a kick reads no more descriptors
 * (send FIFO, immediate slots), which a process sharing the mapping can
 * refill as fast as the engine reads them: it only moves on the
 * transfers already posted (RDMA data, atomics), which are bounded.
 */
static unsigned int percs_engine_next_flags(unsigned int kick_flags,
					    unsigned int passes)
{
	BUILD_BUG_ON((PERCS_ENGINE_F_DRAIN | PERCS_ENGINE_F_POLLER |
		      PERCS_ENGINE_F_SLEEPING | PERCS_ENGINE_F_KICK) &
		     PERCS_KICK_F_ALL);
	if (passes < PERCS_KICK_MAX_PASSES)
		return kick_flags;
	return (kick_flags & ~PERCS_KICK_F_IMM) | PERCS_ENGINE_F_DRAIN;
}

/**
 * percs_engine_kick() - run the send side until it is idle or blocked,
 *	within bounds
 * @w: the window
 * @kick_flags: PERCS_KICK_F_SEND and/or PERCS_KICK_F_IMM
 *
 * Process context: reschedules between passes.  The first pass counts the
 * kick in &percs_status.kicks (one lock round trip for both).  Descriptors
 * are read for %PERCS_KICK_MAX_PASSES passes at most
 * (percs_engine_next_flags()), and
 * nothing runs after a fatal signal: the caller neither stays in the
 * kernel for ever because another process keeps the FIFO full, nor
 * outlives SIGKILL.  What is left waits for the next kick.
 *
 * Return: as percs_engine_run(), summed over the passes (at most INT_MAX),
 * or -EINTR when a fatal signal stopped the kick before anything moved.
 */
int percs_engine_kick(struct percs_window *w, unsigned int kick_flags)
{
	unsigned int passes = 0;
	long total = 0;
	bool more;
	int ret;

	for (;;) {
		ret = percs_engine_pass(w, percs_engine_next_flags(kick_flags,
								   passes) |
					   (passes ? 0 : PERCS_ENGINE_F_KICK),
					&more);
		if (ret < 0)
			return ret;
		total += ret;
		passes++;
		if (!more)
			break;
		if (fatal_signal_pending(current))
			return total ? min_t(long, total, INT_MAX) : -EINTR;
		cond_resched();
	}
	return min_t(long, total, INT_MAX);
}

/**
 * percs_engine_wake_step() - have a window's send side run, one bounded
 *	step of a wake from below the engine
 * @w: the window, kept alive by the caller (RCU or its own work item)
 * @kick_flags: PERCS_KICK_F_SEND and/or PERCS_KICK_F_IMM
 * @passes: the wake's passes so far (start at 0); advanced here
 *
 * Every wake that does not come from the window's own kick (a remote
 * completion, an atomic's deadline, a receiver's credit) goes through
 * here: a poll-mode window's polling thread is woken; a kick-mode window
 * gets one engine pass here, with the flags a kick's pass @passes would
 * have (percs_engine_next_flags()), so that a wake is bounded as a kick
 * is.  Atomic context; the caller reschedules between steps.
 *
 * Return: true if another step is needed.
 */
bool percs_engine_wake_step(struct percs_window *w, unsigned int kick_flags,
			    unsigned int *passes)
{
	bool more = false;

	if (w->flags & PERCS_WINDOW_F_POLL) {
		percs_poll_kick(w->hfi);
		return false;
	}
	if (percs_engine_pass(w, percs_engine_next_flags(kick_flags,
							 (*passes)++),
			      &more) < 0)
		return false;
	return more;
}

/**
 * percs_engine_wake() - run a window's send side from a work item
 * @pd: the system
 * @gid: the window's global id (a window that reuses it only gets a
 *	spurious pass)
 *
 * Process context: percs_engine_wake_step() until the window is idle or
 * blocked, looking the window up again for each step.
 */
void percs_engine_wake(struct percs_dev *pd, u32 gid)
{
	struct percs_window *w;
	unsigned int passes = 0;
	bool more;

	do {
		rcu_read_lock();
		w = percs_window_lookup_gid_rcu(pd, gid);
		more = w && percs_engine_wake_step(w, PERCS_KICK_F_SEND,
						   &passes);
		rcu_read_unlock();
		if (more)
			cond_resched();
	} while (more);
}

/*
 * Retry the senders blocked on window @gid: kick-mode ones here, in the
 * caller's context; poll-mode ones by waking their HFI's polling engine.
 * Senders are taken in batches, each marked with this call's generation so
 * that one that blocks again is not taken twice: every sender waiting at
 * the start is retried exactly once, however many there are; each retry is
 * one engine pass (%PERCS_ENGINE_BUDGET packets).  Process context (a kick
 * with PERCS_KICK_F_CREDIT, a window's release): it reschedules between
 * senders, since the work is other windows' and may be long.
 */
static void percs_engine_retry_senders(struct percs_dev *pd, u32 gid)
{
	u64 gen = atomic64_inc_return(&pd->retry_gen);
	u32 gids[PERCS_CREDIT_BATCH];
	struct percs_window *s;
	unsigned int n, i;

	do {
		n = 0;
		spin_lock(&pd->blocked_lock);
		list_for_each_entry(s, &pd->blocked, blocked_node) {
			if (s->blocked_on != gid || s->retry_gen == gen)
				continue;
			s->retry_gen = gen;
			gids[n++] = percs_window_gid(s);
			if (n == ARRAY_SIZE(gids))
				break;
		}
		spin_unlock(&pd->blocked_lock);

		for (i = 0; i < n; i++) {
			rcu_read_lock();
			s = percs_window_lookup_gid_rcu(pd, gids[i]);
			if (s) {
				unsigned int passes = 0;

				percs_engine_wake_step(s, PERCS_KICK_F_SEND |
						       PERCS_KICK_F_IMM,
						       &passes);
			}
			rcu_read_unlock();
			cond_resched();
		}
	} while (n == ARRAY_SIZE(gids));
}

/**
 * percs_engine_credit() - a receiver returned credits: retry its senders
 * @w: the receiving window
 */
void percs_engine_credit(struct percs_window *w)
{
	percs_status_clear(w, PERCS_STATUS_SENDERS_WAIT);
	/* Packets the network holds for us first: they left earlier. */
	if (READ_ONCE(w->nr_flight))
		percs_flight_kick(w);
	percs_engine_retry_senders(w->hfi->pd, percs_window_gid(w));
}

/**
 * percs_engine_unblock() - a window is being released: take it off the
 *	blocked list and let the senders waiting for it fail fast
 * @w: the window, already dead and unpublished
 */
void percs_engine_unblock(struct percs_window *w)
{
	struct percs_dev *pd = w->hfi->pd;

	spin_lock(&pd->blocked_lock);
	list_del_init(&w->blocked_node);
	spin_unlock(&pd->blocked_lock);
	percs_engine_retry_senders(pd, percs_window_gid(w));
}
