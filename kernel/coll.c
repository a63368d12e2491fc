// SPDX-License-Identifier: GPL-2.0
/*
 * percs: collectives on the CAU trees - allreduce, reduce and barrier,
 * combined hub by hub up the tree and sent back down, and multicast from
 * any member along the tree's edges both ways, with sequence numbers and
 * retransmission.
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
 * A multicast goes from its origin's node to every neighbour in the tree
 * (children and parent), and from every node on to every neighbour but
 * the one it came from; each node other than the origin's writes it into
 * its member's receive FIFO.  Each edge, each way, numbers the multicasts
 * it carries; the receiver takes them in that order only (go-back-N) and
 * acknowledges cumulatively; the sender keeps at most
 * %PERCS_CAU_MC_BUFS unacknowledged and sends them again from the work.
 * A node holds a multicast in a buffer of the pool of the link it came
 * in on (its member's own: the local pool) until every link it goes out
 * on acknowledged it and its member has it; a node with no free buffer in
 * that pool does not acknowledge (the sender resends; a freed buffer
 * makes the node tell it at once).  A multicast thus only ever waits for
 * buffers further from its origin: in a tree that chain ends at the
 * leaves, so two multicasts crossing an edge never wait for each other.
 * Each edge keeps the order in which its sending node took the
 * multicasts, and each node delivers in the order it took them, so the
 * multicasts of one origin, which all come one way along the same path,
 * reach every member in the origin's order.
 *
 * Everything of a tree runs under t->lock, taken in the member's engine
 * pass (send_lock held) or in the tree's work.  Transfers go through a
 * queue in the tree, processed until it is empty, so nothing recurses
 * down a deep tree.  Results are written into receive FIFOs under the
 * target's recv_lock (taken inside t->lock); a full FIFO makes the node
 * try again from the work.
 */
#include <linux/ktime.h>
#include <linux/slab.h>
#include <asm/fpu/api.h>

#include "cau_tree.h"
#include "firmware-model/cau.h"	/* the ALU */

static struct percs_cau_slot *percs_coll_slot(struct percs_cau_node *n,
					      u64 seq)
{
	return &n->slot[seq % PERCS_CAU_SLOTS];
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
		percs_coll_arm(t, PERCS_CAU_RTO_NS);
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
 * Put a transfer between two neighbours on the network: counted on its
 * links (the route from the child up; the other way uses the same links),
 * then lost,
 * delayed, duplicated or delivered by the knobs.
 */
static void percs_coll_xmit(struct percs_cau_tree *t, u8 type, u16 from,
			    u16 to, u64 seq)
{
	struct percs_dev *pd = t->pd;
	struct percs_cau_msg m = {
		.type = type, .from = from, .to = to, .seq = seq,
	};
	struct percs_cau_node *child = t->node[from].parent == to ?
				       &t->node[from] : &t->node[to];
	const struct fm_route *r = percs_coll_route(t, child);
	struct percs_cau_msg *held;
	struct percs_fate f;
	unsigned int i;

	if (!r) {
		/* No route now: it is sent again later. */
		percs_coll_arm(t, PERCS_CAU_RTO_NS);
		return;
	}
	percs_dgram_fate(pd, r, &f);
	if (!f.copies) {
		percs_coll_arm(t, PERCS_CAU_RTO_NS);	/* lost: resent */
		return;
	}
	for (i = 0; i < f.copies; i++) {
		held = f.hold_ns[i] ? kmemdup(&m, sizeof(m),
					      GFP_ATOMIC | __GFP_NOWARN) : NULL;
		if (held) {
			held->deadline = ktime_get_ns() + f.hold_ns[i];
			list_add_tail(&held->node, &t->held);
			atomic64_inc(&pd->dgram.delayed);
			percs_coll_arm(t, f.hold_ns[i]);
			continue;
		}
		percs_coll_enqueue(t, &m);
	}
}

/* Combine @in into slot @s (FPU for float sums and products). */
static void percs_coll_slot_combine(struct percs_cau_slot *s, const void *in)
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
		percs_coll_slot_combine(s, data);
	}
}

/* One bit per child of @n, as a slot's @have records their inputs. */
static u64 percs_coll_kids_mask(const struct percs_cau_node *n)
{
	BUILD_BUG_ON(PERCS_CAU_MAX_CHILDREN > 64);
	return n->nr_children == 64 ? ~0ULL : BIT_ULL(n->nr_children) - 1;
}

static bool percs_coll_all_in(const struct percs_cau_node *n,
			      const struct percs_cau_slot *s)
{
	return s->local && s->have == percs_coll_kids_mask(n);
}

/* Ordered: combine the kept inputs in member, then child order. */
static void percs_coll_slot_combine_ordered(struct percs_cau_tree *t,
					    struct percs_cau_node *n,
					    struct percs_cau_slot *s)
{
	u8 (*in)[PERCS_CAU_PAYLOAD] = n->in + (s->seq % PERCS_CAU_SLOTS) *
				      (1 + n->nr_children);
	unsigned int i;

	memcpy(s->acc, in[0], PERCS_CAU_PAYLOAD);
	for (i = 1; !s->status && i <= n->nr_children; i++)
		percs_coll_slot_combine(s, in[i]);
}

/* What a member's receive FIFO gets from its tree. */
struct percs_coll_pkt {
	struct percs_pkt_hdr h;
	struct percs_coll_ext e;
	u8 data[PERCS_CAU_PAYLOAD];
};

/* A packet of @t, from member @src's window: the header and extension. */
static void percs_coll_pkt_init(struct percs_cau_tree *t,
				const struct percs_cau_node *src,
				struct percs_coll_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->h.kind = PERCS_PKT_COLL;
	pkt->h.length = sizeof(pkt->e) + sizeof(pkt->data);
	pkt->h.src.hub = src->hub;
	pkt->h.src.hfi = src->gid / t->pd->windows_per_hfi % PERCS_HFIS_PER_HUB;
	pkt->h.src.window = src->gid % t->pd->windows_per_hfi;
	pkt->h.job_key = t->job_key;
	pkt->e.tree = t->id;
}

/* Write @pkt into member @n's receive FIFO; false: no room. */
static bool percs_coll_put(struct percs_cau_tree *t, struct percs_cau_node *n,
			   const struct percs_coll_pkt *pkt)
{
	struct percs_window *w;
	bool ok = true;

	rcu_read_lock();
	w = percs_window_lookup_gid_rcu(t->pd, n->gid);
	if (w && w->inst == n->inst) {
		spin_lock(&w->recv_lock);
		if (!w->recv_dead && percs_fifo_put(w, &pkt->h, &pkt->e))
			ok = false;
		percs_fifo_unlock(w);
	}
	rcu_read_unlock();
	return ok;
}

/* Write the result of @s into member @n's receive FIFO; false: no room. */
static bool percs_coll_deliver(struct percs_cau_tree *t,
			       struct percs_cau_node *n,
			       struct percs_cau_slot *s)
{
	struct percs_cau_node *root = n;
	struct percs_coll_pkt pkt;

	while (root->parent >= 0)
		root = &t->node[root->parent];
	percs_coll_pkt_init(t, root, &pkt);
	pkt.h.tag = s->tag;
	pkt.e.coll = s->coll;
	pkt.e.op = s->op;
	pkt.e.type = s->type;
	pkt.e.count = s->count;
	pkt.e.seq = s->seq;
	pkt.e.status = s->status;
	if (!s->status && s->coll != PERCS_COLL_BARRIER)
		memcpy(pkt.data, s->acc, PERCS_CAU_PAYLOAD);
	return percs_coll_put(t, n, &pkt);
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
	s->deadline = now + PERCS_CAU_RTO_NS;
}

/* Free @n's slots that are done, in order: the member may post again. */
static bool percs_coll_retire(struct percs_cau_tree *t,
			      struct percs_cau_node *n)
{
	u64 kids = percs_coll_kids_mask(n);
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
		percs_coll_slot_combine_ordered(t, n, s);
	/* A lone input was never combined: NOP's result is zero all the same. */
	if (s->op == PERCS_CAU_OP_NOP)
		memset(s->acc, 0, PERCS_CAU_PAYLOAD);
	if (n->parent < 0) {
		percs_coll_result(t, idx, s, now);
		return;
	}
	s->up_sent = true;
	s->deadline = now + PERCS_CAU_RTO_NS;
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

/* ---- multicast ---------------------------------------------------------- */

/* The node at the other end of @n's link @k. */
static u16 percs_mc_peer(const struct percs_cau_tree *t,
			 const struct percs_cau_node *n, unsigned int k)
{
	return k < n->nr_children ? t->kids[n->first_child + k] : n->parent;
}

/* @n's link to its neighbour @peer. */
static unsigned int percs_mc_link(const struct percs_cau_tree *t,
				  const struct percs_cau_node *n, u16 peer)
{
	return n->parent == peer ? n->nr_children : t->node[peer].pos;
}

static void percs_mc_count(u64 *counter)
{
	WRITE_ONCE(*counter, *counter + 1);	/* read by debugfs unlocked */
}

/* A free buffer of @n's pool @pool, or NULL. */
static struct percs_cau_mbuf *percs_mc_get(struct percs_cau_node *n,
					   unsigned int pool)
{
	struct percs_cau_mbuf *b = n->mb + pool * PERCS_CAU_MC_BUFS;
	unsigned int i;

	for (i = 0; i < PERCS_CAU_MC_BUFS; i++, b++)
		if (!b->used)
			return b;
	return NULL;
}

/* Hold @b at @n, after everything it holds already. */
static void percs_mc_hold(struct percs_cau_node *n, struct percs_cau_mbuf *b)
{
	b->used = true;
	b->stamp = ++n->mc_stamp;
	list_add_tail(&b->list, &n->mq);
}

/*
 * Send on link @k what it has not carried yet, in the order the node took
 * it, while fewer than %PERCS_CAU_MC_BUFS wait for their acknowledgement.
 */
static void percs_mc_pump(struct percs_cau_tree *t, u16 idx, unsigned int k,
			  u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	struct percs_cau_mlink *l = &n->ml[k];
	struct percs_cau_mbuf *b;

	list_for_each_entry(b, &n->mq, list) {
		if (l->tx_next - l->tx_acked > PERCS_CAU_MC_BUFS)
			return;
		if (b->stamp <= l->tx_stamp || b->in == k)
			continue;
		if (l->tx_next == l->tx_acked + 1)
			l->deadline = now + PERCS_CAU_RTO_NS;
		l->ring[l->tx_next % PERCS_CAU_MC_BUFS] = b - n->mb;
		l->tx_stamp = b->stamp;
		percs_coll_xmit(t, PERCS_CAU_MC, idx, percs_mc_peer(t, n, k),
				l->tx_next++);
	}
}

/* Send link @k's unacknowledged multicasts again (go-back-N). */
static void percs_mc_resend(struct percs_cau_tree *t, u16 idx, unsigned int k,
			    u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	struct percs_cau_mlink *l = &n->ml[k];
	u64 seq;

	l->deadline = now + PERCS_CAU_RTO_NS;
	for (seq = l->tx_acked + 1; seq < l->tx_next; seq++) {
		percs_mc_count(&t->mc_resent);
		percs_coll_xmit(t, PERCS_CAU_MC, idx, percs_mc_peer(t, n, k),
				seq);
	}
}

/*
 * Free @b if every link acknowledged it and its member has it: the member
 * may post again (local pool), or the neighbour whose multicast found no
 * buffer in this pool hears of the room.
 */
static void percs_mc_done(struct percs_cau_tree *t, u16 idx,
			  struct percs_cau_mbuf *b)
{
	struct percs_cau_node *n = &t->node[idx];
	struct percs_cau_mlink *l;

	if (b->owe || b->deliver)
		return;
	list_del(&b->list);
	b->used = false;
	if (b->in == PERCS_CAU_MC_LOCAL) {
		percs_coll_wake(t, n);
		return;
	}
	l = &n->ml[b->in];
	if (l->refused) {
		l->refused = false;
		percs_coll_xmit(t, PERCS_CAU_MC_ROOM, idx,
				percs_mc_peer(t, n, b->in), 0);
	}
}

/*
 * Write what @n holds for its member into its receive FIFO, in the order
 * taken; a full FIFO stops it (the work tries again).
 */
static void percs_mc_deliver(struct percs_cau_tree *t, u16 idx)
{
	struct percs_cau_node *n = &t->node[idx];
	struct percs_cau_mbuf *b, *next;
	struct percs_coll_pkt pkt;

	list_for_each_entry_safe(b, next, &n->mq, list) {
		if (!b->deliver)
			continue;
		percs_coll_pkt_init(t, &t->node[b->origin], &pkt);
		pkt.h.tag = b->tag;
		pkt.e.coll = PERCS_COLL_MCAST;
		pkt.e.op = PERCS_CAU_OP_NOP;
		pkt.e.type = b->type;
		pkt.e.count = b->count;
		pkt.e.seq = b->oseq;
		memcpy(pkt.data, b->data, PERCS_CAU_PAYLOAD);
		if (!percs_coll_put(t, n, &pkt)) {
			percs_coll_arm(t, 0);
			return;
		}
		percs_mc_count(&t->mc_delivered);
		b->deliver = false;
		percs_mc_done(t, idx, b);
	}
}

/* @b was taken at @n (from link @in, or the member): pass it on. */
static void percs_mc_spread(struct percs_cau_tree *t, u16 idx,
			    struct percs_cau_mbuf *b, u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	unsigned int k, in = b->in;

	for (k = 0; k < n->nlinks; k++)
		if (k != in)
			percs_mc_pump(t, idx, k, now);
	if (in != PERCS_CAU_MC_LOCAL)
		percs_mc_deliver(t, idx);	/* may free @b */
	else
		percs_mc_done(t, idx, b);	/* a lone member's */
}

/*
 * Multicast @seq of the edge from @from arrives at @idx: taken if it is
 * the next one and its link's pool has room.  Return: false for no room.
 */
static bool percs_mc_accept(struct percs_cau_tree *t, u16 idx, u16 from,
			    unsigned int k, u64 seq, u64 now)
{
	struct percs_cau_node *n = &t->node[idx], *f = &t->node[from];
	struct percs_cau_mlink *fl = &f->ml[percs_mc_link(t, f, idx)];
	struct percs_cau_mbuf *b = percs_mc_get(n, k), *src;

	if (!b)
		return false;
	/* Not acknowledged yet: the sender still holds it. */
	src = &f->mb[fl->ring[seq % PERCS_CAU_MC_BUFS]];
	b->oseq = src->oseq;
	b->tag = src->tag;
	b->origin = src->origin;
	b->type = src->type;
	b->count = src->count;
	memcpy(b->data, src->data, PERCS_CAU_PAYLOAD);
	b->in = k;
	b->owe = n->nlinks - 1;
	b->deliver = true;	/* never back at its origin: a tree */
	percs_mc_hold(n, b);
	n->ml[k].rx_next++;
	percs_mc_spread(t, idx, b, now);
	return true;
}

/* A multicast transfer arrived at @m->to. */
static void percs_mc_handle(struct percs_cau_tree *t,
			    const struct percs_cau_msg *m, u64 now)
{
	struct percs_cau_node *n = &t->node[m->to];
	unsigned int k = percs_mc_link(t, n, m->from);
	struct percs_cau_mlink *l = &n->ml[k];
	struct percs_cau_mbuf *b;

	switch (m->type) {
	case PERCS_CAU_MC:
		if (m->seq == l->rx_next &&
		    !percs_mc_accept(t, m->to, m->from, k, m->seq, now)) {
			/* No room: no acknowledgement, the sender resends. */
			l->refused = true;
			percs_mc_count(&t->mc_refused);
			return;
		}
		/* Taken now or before; one after a gap waits for a resend. */
		if (m->seq < l->rx_next)
			percs_coll_xmit(t, PERCS_CAU_MC_ACK, m->to, m->from,
					l->rx_next - 1);
		return;
	case PERCS_CAU_MC_ACK:
		if (m->seq <= l->tx_acked || m->seq >= l->tx_next)
			return;	/* old, duplicated or reordered */
		while (l->tx_acked < m->seq) {
			l->tx_acked++;
			b = &n->mb[l->ring[l->tx_acked % PERCS_CAU_MC_BUFS]];
			b->owe--;
			percs_mc_done(t, m->to, b);
		}
		l->deadline = now + PERCS_CAU_RTO_NS;
		percs_mc_pump(t, m->to, k, now);
		return;
	case PERCS_CAU_MC_ROOM:
		if (l->tx_acked + 1 < l->tx_next)
			percs_mc_resend(t, m->to, k, now);
		return;
	}
}

/*
 * The member of @idx multicasts: @e and @data from its descriptor.
 * Return: 0, or -EBUSY when its pool has no free buffer.
 */
static int percs_mc_post(struct percs_cau_tree *t, u16 idx, u32 tag,
			 const struct percs_coll_ext *e, const u8 *data,
			 u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	struct percs_cau_mbuf *b = percs_mc_get(n, n->nlinks);

	if (!b)
		return -EBUSY;
	b->oseq = ++n->mc_posted;
	b->tag = tag;
	b->origin = idx;
	b->type = e->type;
	b->count = e->count;
	memcpy(b->data, data, PERCS_CAU_PAYLOAD);
	b->in = PERCS_CAU_MC_LOCAL;
	b->owe = n->nlinks;
	b->deliver = false;
	percs_mc_hold(n, b);
	percs_mc_count(&t->mc_posted);
	percs_mc_spread(t, idx, b, now);
	return 0;
}

/* The work's part: deliveries that found a full FIFO, resends.  Pending? */
static bool percs_mc_work(struct percs_cau_tree *t, u16 idx, u64 now)
{
	struct percs_cau_node *n = &t->node[idx];
	bool pending = !list_empty(&n->mq);
	struct percs_cau_mlink *l;
	unsigned int k;

	if (pending)
		percs_mc_deliver(t, idx);
	for (k = 0; k < n->nlinks; k++) {
		l = &n->ml[k];
		if (l->tx_acked + 1 == l->tx_next)
			continue;
		pending = true;
		if (l->deadline <= now)
			percs_mc_resend(t, idx, k, now);
	}
	return pending;
}

/* Process one transfer that arrived. */
static void percs_coll_handle(struct percs_cau_tree *t,
			      const struct percs_cau_msg *m, u64 now)
{
	struct percs_cau_node *n = &t->node[m->to], *from = &t->node[m->from];
	struct percs_cau_slot *s, *fs;

	switch (m->type) {
	case PERCS_CAU_MC:
	case PERCS_CAU_MC_ACK:
	case PERCS_CAU_MC_ROOM:
		percs_mc_handle(t, m, now);
		return;
	case PERCS_CAU_UP:
		if (m->seq <= n->done) {
			percs_coll_xmit(t, PERCS_CAU_UP_ACK, m->to, m->from,
					m->seq);
			return;
		}
		s = percs_coll_take(n, m->seq);
		if (!s) {
			/* No room yet: the child sends it again. */
			percs_coll_arm(t, PERCS_CAU_RTO_NS);
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
 * busy with an earlier operation, or (a multicast) its node has no free
 * buffer for its member's multicasts: it stays in the FIFO.
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
	size = fm_cau_elem_size(e.type);
	if (h->length < sizeof(e) || e.seq || e.status || e.reserved ||
	    e.coll > PERCS_COLL_LAST || h->dst.hub || h->dst.hfi ||
	    h->dst.window || h->route != PERCS_ROUTE_DIRECT ||
	    fm_cau_check(e.op, e.type, e.count) ||
	    (e.coll == PERCS_COLL_BARRIER && (e.count || e.op)) ||
	    (e.coll == PERCS_COLL_MCAST && e.op) ||
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
	if (e.coll == PERCS_COLL_MCAST) {
		err = percs_mc_post(t, n - t->node, h->tag, &e, data,
				    ktime_get_ns());
		if (err == -EBUSY)
			n->waiting = true;
		else
			percs_coll_run(t);
		goto out_tree;
	}
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
	if (err || (h->flags & PERCS_PKT_F_ALL))
		percs_cq_post(w, h->tag, err, PERCS_PKT_COLL, 0);
	return 0;
}

/*
 * The tree's work: delayed transfers that are due, resends of what was not
 * acknowledged, deliveries that found a full FIFO (results and multicasts).
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
		if (percs_mc_work(t, i, now))
			pending = true;
		for (j = 0; j < PERCS_CAU_SLOTS; j++) {
			s = &n->slot[j];
			if (!s->seq || s->seq <= n->done)
				continue;
			pending = true;
			if (s->down_in && !s->delivered)
				s->delivered = percs_coll_deliver(t, n, s);
			if (s->deadline > now)
				continue;
			s->deadline = now + PERCS_CAU_RTO_NS;
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
		percs_coll_arm(t, PERCS_CAU_RTO_NS);
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
	unsigned int i, j, off = 0;
	struct percs_cau_node *n;
	u32 *fill;

	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->held);
	INIT_DELAYED_WORK(&t->work, percs_coll_work);
	/*
	 * Per operation at most 2 transfers per edge either way, x2 dup; per
	 * multicast the same, but a link may carry %PERCS_CAU_MC_BUFS at once.
	 */
	t->ring_size = roundup_pow_of_two((8 + 2 * PERCS_CAU_MC_BUFS) * t->nr +
					  16);
	t->ring = kvcalloc(t->ring_size, sizeof(*t->ring), GFP_KERNEL_ACCOUNT);
	t->kids = kvcalloc(t->nr, sizeof(*t->kids), GFP_KERNEL_ACCOUNT);
	/*
	 * A tree of nr members has 2 (nr - 1) links and 3 nr - 2 pools; node
	 * i's start after at most (children before it) + i links and
	 * (children before it) + 2 i pools.
	 */
	t->mlinks = kvcalloc(2 * t->nr, sizeof(*t->mlinks), GFP_KERNEL_ACCOUNT);
	t->mbufs = kvcalloc(3 * t->nr * PERCS_CAU_MC_BUFS, sizeof(*t->mbufs),
			    GFP_KERNEL_ACCOUNT);
	fill = kcalloc(t->nr, sizeof(*fill), GFP_KERNEL_ACCOUNT);
	if (!t->ring || !t->kids || !t->mlinks || !t->mbufs || !fill)
		goto nomem;
	for (i = 0; i < t->nr; i++) {
		n = &t->node[i];
		n->nr_children = kids[i];
		n->first_child = off;
		n->nlinks = kids[i] + (n->parent >= 0);
		n->ml = t->mlinks + off + i;
		n->mb = t->mbufs + (off + i + i) * PERCS_CAU_MC_BUFS;
		INIT_LIST_HEAD(&n->mq);
		for (j = 0; j < n->nlinks; j++) {
			n->ml[j].tx_next = 1;
			n->ml[j].rx_next = 1;
		}
		off += kids[i];
		if (ordered) {
			n->in = kvcalloc(PERCS_CAU_SLOTS * (1 + kids[i]),
					 PERCS_CAU_PAYLOAD, GFP_KERNEL_ACCOUNT);
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
	/* The multicasts held at the nodes go with their buffers. */
	kvfree(t->mlinks);
	kvfree(t->mbufs);
	kvfree(t->ring);
	kvfree(t->kids);
	t->mlinks = NULL;
	t->mbufs = NULL;
	t->ring = NULL;
	t->kids = NULL;
}
