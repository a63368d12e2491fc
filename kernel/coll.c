// SPDX-License-Identifier: GPL-2.0
/*
 * percs: collectives on the CAU trees - allreduce, reduce and barrier,
 * combined hub by hub up the tree and sent back down, with sequence
 * numbers and retransmission.
 *
 * A member's n-th reduction descriptor on a tree is operation n; it is
 * combined with every other member's n-th.  Each node (a member, on its
 * hub's CAU) keeps an operation in slot n % %PERCS_CAU_SLOTS: the node
 * fires when its member's input and every child's are in, and sends the
 * combined value up; the root's result goes down to every node, which
 * hands it to its member's window (every member for an allreduce or a
 * barrier, the root for a reduce; an error to everyone).  Transfers
 * between nodes (up, down, and their acknowledgements) cross the network
 * as the atomics' datagrams do: counted on the route's links, lost,
 * duplicated or delayed by the isr/ knobs.  An unacknowledged transfer is
 * sent again from the tree's work until it is; a receiver that has the
 * transfer already, or finished the operation, only acknowledges it.  A
 * slot is free again once its node is done with the operation: input
 * sent up and acknowledged, result delivered and acknowledged by every
 * child.  A member whose slot is still busy waits in its send FIFO.
 *
 * Ordered trees keep every input of an operation and combine them in a
 * fixed order (the member's own, then the children by position) at each
 * node, so a floating-point sum is the same whatever the arrival order;
 * other trees combine as inputs arrive.
 *
 * Everything of a tree runs under t->lock, taken in the member's engine
 * pass (send_lock held) or in the tree's work.  Transfers go through a
 * queue in the tree, processed until it is empty, so nothing recurses
 * down a deep tree.  Results are written into receive FIFOs under the
 * target's recv_lock (taken inside t->lock); a full FIFO makes the node
 * try again from the work.
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <asm/fpu/api.h>

#include "cau_tree.h"
#include "cau.h"	/* firmware-model: the ALU */

#define PERCS_COLL_RTO_NS	(100 * NSEC_PER_USEC)

static struct percs_cau_slot *percs_coll_slot(struct percs_cau_node *n,
					      u64 seq)
{
	return &n->slot[seq % PERCS_CAU_SLOTS];
}

static bool percs_coll_chance(u32 ppm)
{
	return ppm && get_random_u32_below(1000000) < ppm;
}

/* Make the tree's work run within @ns: resends, delayed transfers. */
static void percs_coll_arm(struct percs_cau_tree *t, u64 ns)
{
	mod_delayed_work(system_wq, &t->work, max(1UL, nsecs_to_jiffies(ns)));
}

/*
 * Queue a transfer for processing now.  The ring holds every transfer of
 * a few operations at once; one that does not fit is lost, and sent again
 * like one the network lost.
 */
static void percs_coll_enqueue(struct percs_cau_tree *t,
			       const struct percs_cau_msg *m)
{
	if (t->ring_tail - t->ring_head >= t->ring_size) {
		percs_coll_arm(t, PERCS_COLL_RTO_NS);
		return;
	}
	t->ring[t->ring_tail++ & (t->ring_size - 1)] = *m;
}

/* The route between a node and its parent, either way, for counting. */
static const struct fm_route *percs_coll_route(struct percs_cau_tree *t,
					       struct percs_cau_node *child)
{
	struct percs_dev *pd = t->pd;
	u32 gen = READ_ONCE(pd->topo.generation);

	if (child->up_gen != gen + 1) {
		if (percs_isr_route_hubs(pd, child->hub,
					 t->node[child->parent].hub,
					 &child->up) < 0)
			return NULL;
		child->up_gen = gen + 1;	/* 0 never matches */
	}
	return &child->up;
}

/*
 * Put a transfer on the network: counted on its links (the route from the
 * child up; down and acknowledgements use the same links), then lost,
 * delayed, duplicated or delivered by the knobs.
 */
static void percs_coll_xmit(struct percs_cau_tree *t, u8 type, u16 from,
			    u16 to, u64 seq)
{
	struct percs_dev *pd = t->pd;
	struct percs_cau_msg m = {
		.type = type, .from = from, .to = to, .seq = seq,
	};
	struct percs_cau_node *child = type == PERCS_CAU_UP ||
				       type == PERCS_CAU_DOWN_ACK ?
				       &t->node[from] : &t->node[to];
	const struct fm_route *r = percs_coll_route(t, child);
	struct percs_cau_msg *held;
	unsigned int copies = 1;

	if (!r) {
		/* No route now: it is sent again later. */
		percs_coll_arm(t, PERCS_COLL_RTO_NS);
		return;
	}
	if (percs_coll_chance(READ_ONCE(pd->dgram.drop_ppm))) {
		percs_isr_count_drop(pd, r);
		atomic64_inc(&pd->dgram.dropped);
		percs_coll_arm(t, PERCS_COLL_RTO_NS);
		return;
	}
	if (percs_coll_chance(READ_ONCE(pd->dgram.dup_ppm))) {
		atomic64_inc(&pd->dgram.duplicated);
		copies = 2;
	}
	while (copies--) {
		percs_isr_count(pd, r, 1);
		if (percs_coll_chance(READ_ONCE(pd->flight.reorder_ppm))) {
			held = kmemdup(&m, sizeof(m), GFP_ATOMIC | __GFP_NOWARN);
			if (held) {
				held->deadline = ktime_get_ns() + NSEC_PER_USEC *
					(1 + get_random_u32_below(
						READ_ONCE(pd->flight.hold_us)));
				list_add_tail(&held->node, &t->held);
				atomic64_inc(&pd->dgram.delayed);
				percs_coll_arm(t, (u64)NSEC_PER_USEC *
					       READ_ONCE(pd->flight.hold_us));
				continue;
			}
		}
		percs_coll_enqueue(t, &m);
	}
}

/* Combine @in into slot @s (FPU for float sums and products). */
static void percs_coll_combine(struct percs_cau_slot *s, const void *in)
{
	bool fpu = fm_cau_needs_fpu(s->op, s->type);

	if (fpu)
		kernel_fpu_begin();
	fm_cau_combine(s->op, s->type, s->count, s->acc, in);
	if (fpu)
		kernel_fpu_end();
}

/*
 * An input arrives at node @n for slot @s: as it is (unordered) or kept
 * for the end (ordered, at @idx: 0 the member, 1 + position a child).
 * The first input decides the op; one that disagrees makes it -EINVAL.
 */
static void percs_coll_input(struct percs_cau_tree *t,
			     struct percs_cau_node *n,
			     struct percs_cau_slot *s, unsigned int idx,
			     u8 coll, u8 op, u8 type, u8 count,
			     const void *data)
{
	bool first = !s->local && !s->have;

	if (first) {
		s->coll = coll;
		s->op = op;
		s->type = type;
		s->count = count;
		s->status = 0;
	} else if (s->op != op || s->type != type || s->count != count ||
		   s->coll != coll) {
		s->status = -EINVAL;
	}
	if (t->flags & PERCS_CAU_F_ORDERED) {
		memcpy(n->in[(s->seq % PERCS_CAU_SLOTS) *
			     (1 + n->nr_children) + idx], data,
		       PERCS_CAU_PAYLOAD);
	} else if (first) {
		memcpy(s->acc, data, PERCS_CAU_PAYLOAD);
	} else if (!s->status) {
		percs_coll_combine(s, data);
	}
}

static bool percs_coll_all_in(const struct percs_cau_node *n,
			      const struct percs_cau_slot *s)
{
	u64 all = n->nr_children == 64 ? ~0ULL : BIT_ULL(n->nr_children) - 1;

	return s->local && s->have == all;
}

/* Ordered: combine the kept inputs in member, then child order. */
static void percs_coll_combine_ordered(struct percs_cau_tree *t,
				       struct percs_cau_node *n,
				       struct percs_cau_slot *s)
{
	u8 (*in)[PERCS_CAU_PAYLOAD] = n->in + (s->seq % PERCS_CAU_SLOTS) *
				      (1 + n->nr_children);
	unsigned int i;

	memcpy(s->acc, in[0], PERCS_CAU_PAYLOAD);
	for (i = 1; !s->status && i <= n->nr_children; i++)
		percs_coll_combine(s, in[i]);
}

/* Write the result of @s into member @n's receive FIFO; false: no room. */
static bool percs_coll_deliver(struct percs_cau_tree *t,
			       struct percs_cau_node *n,
			       struct percs_cau_slot *s)
{
	struct percs_cau_node *root = n;
	struct {
		struct percs_pkt_hdr h;
		struct percs_coll_ext e;
		u8 data[PERCS_CAU_PAYLOAD];
	} pkt;
	struct percs_window *w;
	bool ok = true;

	while (root->parent >= 0)
		root = &t->node[root->parent];
	memset(&pkt, 0, sizeof(pkt));
	pkt.h.kind = PERCS_PKT_COLL;
	pkt.h.length = sizeof(pkt.e) + sizeof(pkt.data);
	pkt.h.src.hub = root->hub;
	pkt.h.src.hfi = root->gid / t->pd->windows_per_hfi % PERCS_HFIS_PER_HUB;
	pkt.h.src.window = root->gid % t->pd->windows_per_hfi;
	pkt.h.job_key = t->job_key;
	pkt.h.tag = s->tag;
	pkt.e.tree = t->id;
	pkt.e.coll = s->coll;
	pkt.e.op = s->op;
	pkt.e.type = s->type;
	pkt.e.count = s->count;
	pkt.e.seq = s->seq;
	pkt.e.status = s->status;
	if (!s->status && s->coll != PERCS_COLL_BARRIER)
		memcpy(pkt.data, s->acc, PERCS_CAU_PAYLOAD);

	rcu_read_lock();
	w = percs_window_lookup_gid_rcu(t->pd, n->gid);
	if (w && w->inst == n->inst) {
		spin_lock(&w->recv_lock);
		if (!w->recv_dead && percs_fifo_put(w, &pkt.h, &pkt.e))
			ok = false;
		percs_fifo_unlock(w);
	}
	rcu_read_unlock();
	return ok;
}

/* Does member @n get a result packet for @s? */
static bool percs_coll_wants_result(const struct percs_cau_node *n,
				    const struct percs_cau_slot *s)
{
	return s->status || s->coll != PERCS_COLL_REDUCE || n->parent < 0;
}

/* The result is known at @n: deliver it and send it to the children. */
static void percs_coll_result(struct percs_cau_tree *t, u16 idx,
			      struct percs_cau_slot *s, u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	unsigned int i;

	s->down_in = true;
	s->delivered = !s->local || !percs_coll_wants_result(n, s) ||
		       percs_coll_deliver(t, n, s);
	if (!s->delivered)
		percs_coll_arm(t, 0);	/* the FIFO is full: try again */
	for (i = 0; i < n->nr_children; i++)
		percs_coll_xmit(t, PERCS_CAU_DOWN, idx,
				t->kids[n->first_child + i], s->seq);
	s->deadline = now + PERCS_COLL_RTO_NS;
}

/* Free @n's slots that are done, in order: the member may post again. */
static bool percs_coll_retire(struct percs_cau_tree *t,
			      struct percs_cau_node *n)
{
	u64 kids = n->nr_children == 64 ? ~0ULL :
		   BIT_ULL(n->nr_children) - 1;
	struct percs_cau_slot *s;
	bool freed = false;

	for (;;) {
		s = percs_coll_slot(n, n->done + 1);
		if (s->seq != n->done + 1 || !s->local || !s->down_in ||
		    !s->delivered || s->down_acked != kids ||
		    (n->parent >= 0 && !s->up_acked))
			return freed;
		memset(s, 0, offsetof(struct percs_cau_slot, acc));
		n->done++;
		freed = true;
	}
}

/* Wake the member's engine if a descriptor waits for a free slot. */
static void percs_coll_wake(struct percs_cau_tree *t, struct percs_cau_node *n)
{
	struct percs_window *w;

	if (!n->waiting)
		return;
	n->waiting = false;
	rcu_read_lock();
	w = percs_window_lookup_gid_rcu(t->pd, n->gid);
	if (w && w->inst == n->inst) {
		spin_lock(&w->amo.lock);
		if (!w->amo.dead)
			mod_delayed_work(system_wq, &w->amo.work, 0);
		spin_unlock(&w->amo.lock);
	}
	rcu_read_unlock();
}

/* @n has every input of @s: combine, then up or (the root) down. */
static void percs_coll_fire(struct percs_cau_tree *t, u16 idx,
			    struct percs_cau_slot *s, u64 now)
{
	struct percs_cau_node *n = &t->node[idx];

	if (t->flags & PERCS_CAU_F_ORDERED)
		percs_coll_combine_ordered(t, n, s);
	/* A lone input was never combined: NOP's result is zero all the same. */
	if (s->op == PERCS_CAU_OP_NOP)
		memset(s->acc, 0, PERCS_CAU_PAYLOAD);
	if (n->parent < 0) {
		percs_coll_result(t, idx, s, now);
		return;
	}
	s->up_sent = true;
	s->deadline = now + PERCS_COLL_RTO_NS;
	percs_coll_xmit(t, PERCS_CAU_UP, idx, n->parent, s->seq);
}

/* A slot for operation @seq at @n, or NULL when it is not usable now. */
static struct percs_cau_slot *percs_coll_take(struct percs_cau_node *n,
					      u64 seq)
{
	struct percs_cau_slot *s = percs_coll_slot(n, seq);

	if (s->seq == seq)
		return s;
	if (s->seq || seq > n->done + PERCS_CAU_SLOTS)
		return NULL;	/* still busy with an earlier one */
	s->seq = seq;
	return s;
}

/* Process one transfer that arrived. */
static void percs_coll_handle(struct percs_cau_tree *t,
			      const struct percs_cau_msg *m, u64 now)
{
	struct percs_cau_node *n = &t->node[m->to], *from = &t->node[m->from];
	struct percs_cau_slot *s, *fs;

	switch (m->type) {
	case PERCS_CAU_UP:
		if (m->seq <= n->done) {
			percs_coll_xmit(t, PERCS_CAU_UP_ACK, m->to, m->from,
					m->seq);
			return;
		}
		s = percs_coll_take(n, m->seq);
		if (!s) {
			/* No room yet: the child sends it again. */
			percs_coll_arm(t, PERCS_COLL_RTO_NS);
			return;
		}
		if (!(s->have & BIT_ULL(from->pos))) {
			fs = percs_coll_slot(from, m->seq);
			percs_coll_input(t, n, s, 1 + from->pos, fs->coll,
					 fs->op, fs->type, fs->count, fs->acc);
			if (fs->status)
				s->status = fs->status;
			s->have |= BIT_ULL(from->pos);
			if (percs_coll_all_in(n, s))
				percs_coll_fire(t, m->to, s, now);
		}
		percs_coll_xmit(t, PERCS_CAU_UP_ACK, m->to, m->from, m->seq);
		return;
	case PERCS_CAU_UP_ACK:
		s = percs_coll_slot(n, m->seq);
		if (s->seq == m->seq)
			s->up_acked = true;
		break;
	case PERCS_CAU_DOWN:
		s = percs_coll_slot(n, m->seq);
		if (m->seq > n->done && s->seq == m->seq && !s->down_in) {
			fs = percs_coll_slot(from, m->seq);
			memcpy(s->acc, fs->acc, PERCS_CAU_PAYLOAD);
			s->status = fs->status;
			s->up_acked = true;	/* the result answers it */
			percs_coll_result(t, m->to, s, now);
		}
		if (m->seq <= n->done || (s->seq == m->seq && s->down_in))
			percs_coll_xmit(t, PERCS_CAU_DOWN_ACK, m->to, m->from,
					m->seq);
		break;
	case PERCS_CAU_DOWN_ACK:
		s = percs_coll_slot(n, m->seq);
		if (s->seq == m->seq)
			s->down_acked |= BIT_ULL(from->pos);
		break;
	}
	if (percs_coll_retire(t, n))
		percs_coll_wake(t, n);
}

static void percs_coll_run(struct percs_cau_tree *t)
{
	u64 now = ktime_get_ns();
	struct percs_cau_msg m;

	lockdep_assert_held(&t->lock);
	while (t->ring_head != t->ring_tail) {
		m = t->ring[t->ring_head++ & (t->ring_size - 1)];
		percs_coll_handle(t, &m, now);
	}
}

/**
 * percs_coll_post() - a member's collective descriptor from its send FIFO
 * @w: the window, send_lock held, not dead
 * @h: its header, through fm_pkt_check()
 * @payload: @h->length bytes in the FIFO
 *
 * Return: 0 when the descriptor was consumed (its input taken, or
 * completed with an error); -EBUSY when the member's slot for it is still
 * busy with an earlier operation: it stays in the FIFO.
 */
int percs_coll_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		    const u8 *payload)
{
	u8 data[PERCS_CAU_PAYLOAD] __aligned(8) = { 0 };
	struct percs_coll_ext e = { 0 };
	struct percs_cau_tree *t;
	struct percs_cau_slot *s;
	struct percs_cau_node *n;
	unsigned int size;
	int err = -EINVAL, i;

	if (h->length >= sizeof(e))
		memcpy(&e, payload, sizeof(e));
	if (e.coll == PERCS_COLL_MCAST) {
		err = -EOPNOTSUPP;	/* not executed yet */
		goto out;
	}
	size = fm_cau_elem_size(e.type);
	if (h->length < sizeof(e) || e.seq || e.status || e.reserved ||
	    e.coll > PERCS_COLL_BARRIER || h->dst.hub || h->dst.hfi ||
	    h->dst.window || h->route != PERCS_ROUTE_DIRECT ||
	    fm_cau_check(e.op, e.type, e.count) ||
	    (e.coll == PERCS_COLL_BARRIER && (e.count || e.op)) ||
	    h->length != sizeof(e) + e.count * size)
		goto out;
	memcpy(data, payload + sizeof(e), e.count * size);

	rcu_read_lock();
	t = xa_load(&w->hfi->pd->cau.trees, e.tree);
	err = -ENOENT;
	if (!t)
		goto out_unlock;
	spin_lock(&t->lock);
	if (t->dead)
		goto out_tree;
	for (i = 0, n = NULL; i < t->nr; i++)
		if (t->node[i].gid == percs_window_gid(w) &&
		    t->node[i].inst == w->inst)
			n = &t->node[i];
	err = -EPERM;
	if (!n || !n->joined)
		goto out_tree;
	s = percs_coll_take(n, n->posted + 1);
	if (!s) {
		n->waiting = true;
		err = -EBUSY;
		goto out_tree;
	}
	n->posted++;
	percs_coll_input(t, n, s, 0, e.coll, e.op, e.type, e.count, data);
	/* The member's own descriptor names what it is to receive. */
	s->coll = e.coll;
	s->tag = h->tag;
	s->local = true;
	if (percs_coll_all_in(n, s))
		percs_coll_fire(t, n - t->node, s, ktime_get_ns());
	percs_coll_run(t);
	percs_coll_retire(t, n);
	err = 0;
out_tree:
	spin_unlock(&t->lock);
out_unlock:
	rcu_read_unlock();
out:
	if (err == -EBUSY)
		return err;
	WRITE_ONCE(w->st->packets_sent, w->st->packets_sent + 1);
	if (err || (h->flags & PERCS_PKT_F_NOTIFY))
		percs_cq_post(w, h->tag, err, PERCS_PKT_COLL, 0);
	return 0;
}

/*
 * The tree's work: delayed transfers that are due, resends of what was not
 * acknowledged, deliveries that found a full FIFO.
 */
static void percs_coll_work(struct work_struct *work)
{
	struct percs_cau_tree *t = container_of(to_delayed_work(work),
						struct percs_cau_tree, work);
	struct percs_cau_msg *m, *next;
	u64 now = ktime_get_ns();
	bool pending = false;
	struct percs_cau_slot *s;
	struct percs_cau_node *n;
	unsigned int i, j, k;

	spin_lock(&t->lock);
	if (t->dead)
		goto out;
	list_for_each_entry_safe(m, next, &t->held, node) {
		if (m->deadline > now) {
			pending = true;
			continue;
		}
		list_del(&m->node);
		percs_coll_enqueue(t, m);
		kfree(m);
	}
	percs_coll_run(t);
	for (i = 0; i < t->nr; i++) {
		n = &t->node[i];
		for (j = 0; j < PERCS_CAU_SLOTS; j++) {
			s = &n->slot[j];
			if (!s->seq || s->seq <= n->done)
				continue;
			pending = true;
			if (s->down_in && !s->delivered)
				s->delivered = percs_coll_deliver(t, n, s);
			if (s->deadline > now)
				continue;
			s->deadline = now + PERCS_COLL_RTO_NS;
			if (s->up_sent && !s->up_acked)
				percs_coll_xmit(t, PERCS_CAU_UP, i, n->parent,
						s->seq);
			for (k = 0; s->down_in && k < n->nr_children; k++)
				if (!(s->down_acked & BIT_ULL(k)))
					percs_coll_xmit(t, PERCS_CAU_DOWN, i,
						t->kids[n->first_child + k],
						s->seq);
		}
	}
	percs_coll_run(t);
	for (i = 0; i < t->nr; i++)
		if (percs_coll_retire(t, &t->node[i]))
			percs_coll_wake(t, &t->node[i]);
	if (pending)
		percs_coll_arm(t, PERCS_COLL_RTO_NS);
out:
	spin_unlock(&t->lock);
}

/**
 * percs_coll_tree_init() - the collective state of a new tree
 * @t: the tree, its nodes' parents and hubs filled in
 * @kids: per node, its number of children (checked)
 *
 * Process context.  Return: 0 or -ENOMEM.
 */
int percs_coll_tree_init(struct percs_cau_tree *t, u32 *kids)
{
	bool ordered = t->flags & PERCS_CAU_F_ORDERED;
	unsigned int i, off = 0;
	struct percs_cau_node *n;
	u32 *fill;

	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->held);
	INIT_DELAYED_WORK(&t->work, percs_coll_work);
	/* Per operation at most 2 transfers per edge either way, x2 dup. */
	t->ring_size = roundup_pow_of_two(8 * t->nr + 16);
	t->ring = kvcalloc(t->ring_size, sizeof(*t->ring), GFP_KERNEL);
	t->kids = kvcalloc(t->nr, sizeof(*t->kids), GFP_KERNEL);
	fill = kcalloc(t->nr, sizeof(*fill), GFP_KERNEL);
	if (!t->ring || !t->kids || !fill)
		goto nomem;
	for (i = 0; i < t->nr; i++) {
		n = &t->node[i];
		n->nr_children = kids[i];
		n->first_child = off;
		off += kids[i];
		if (ordered) {
			n->in = kvcalloc(PERCS_CAU_SLOTS * (1 + kids[i]),
					 PERCS_CAU_PAYLOAD, GFP_KERNEL);
			if (!n->in)
				goto nomem;
		}
	}
	for (i = 0; i < t->nr; i++) {
		n = &t->node[i];
		if (n->parent < 0)
			continue;
		n->pos = fill[n->parent]++;
		t->kids[t->node[n->parent].first_child + n->pos] = i;
	}
	kfree(fill);
	return 0;
nomem:
	kfree(fill);
	percs_coll_tree_fini(t);
	return -ENOMEM;
}

/**
 * percs_coll_tree_fini() - stop a tree's collectives and free their state
 * @t: the tree, dead or never published
 *
 * Process context, the tree already out of pd->cau.trees.  Operations in
 * flight end with the tree (the members were told by their completion
 * entries).
 */
void percs_coll_tree_fini(struct percs_cau_tree *t)
{
	struct percs_cau_msg *m, *next;
	unsigned int i;

	spin_lock(&t->lock);
	t->dead = true;
	/*
	 * A member whose descriptor waits for a slot runs its engine again:
	 * the tree is gone from the table, so the descriptor completes with
	 * -ENOENT instead of waiting for a slot that never frees.
	 */
	for (i = 0; t->ring && i < t->nr; i++)
		percs_coll_wake(t, &t->node[i]);
	spin_unlock(&t->lock);
	cancel_delayed_work_sync(&t->work);
	list_for_each_entry_safe(m, next, &t->held, node) {
		list_del(&m->node);
		kfree(m);
	}
	for (i = 0; i < t->nr; i++) {
		kvfree(t->node[i].in);
		t->node[i].in = NULL;
	}
	kvfree(t->ring);
	kvfree(t->kids);
	t->ring = NULL;
	t->kids = NULL;
}
