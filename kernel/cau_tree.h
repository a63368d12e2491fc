/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: the collective trees, shared by their set-up (cau.c) and the
 * engine that runs collectives on them (coll.c).
 */
#ifndef _PERCS_CAU_H
#define _PERCS_CAU_H

#include "percs.h"

/* Operations one node keeps in flight: its slots, by number modulo this. */
#define PERCS_CAU_SLOTS		PERCS_CAU_MAX_INFLIGHT

/*
 * Multicast buffers of one pool.  A node has a pool per incoming link and
 * one for its member's own multicasts; a link carries at most this many
 * unacknowledged multicasts (the receiving pool's size).
 */
#define PERCS_CAU_MC_BUFS	4
/* percs_cau_mbuf.in of a multicast the node's own member posted */
#define PERCS_CAU_MC_LOCAL	0xffff

/**
 * struct percs_cau_slot - one operation at one node
 * @seq: its number, 0 when the slot is free
 * @have: children whose input is in (bit = position among the children)
 * @down_acked: children that acknowledged the result
 * @local: the member's own descriptor is in
 * @up_sent: the combined input went to the parent (non-root)
 * @up_acked: the parent acknowledged it
 * @down_in: the result is known here (the root: computed)
 * @delivered: the result reached the member's window (or needs not)
 * @coll: PERCS_COLL_* of the member's descriptor (the first input's
 *	until the member's own comes)
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @count: elements
 * @status: 0, or -EINVAL when the inputs disagree
 * @tag: the member's descriptor's tag
 * @deadline: when an unacknowledged transfer is sent again
 * @acc: the combined value (unordered: as inputs come; ordered: at the
 *	end), then the result
 */
struct percs_cau_slot {
	u64 seq;
	u64 have;
	u64 down_acked;
	bool local;
	bool up_sent;
	bool up_acked;
	bool down_in;
	bool delivered;
	u8 coll;
	u8 op;
	u8 type;
	u8 count;
	s32 status;
	u32 tag;
	u64 deadline;
	u8 acc[PERCS_CAU_PAYLOAD] __aligned(8);
};

/**
 * struct percs_cau_mbuf - a multicast held at one node
 * @list: in the node's @mq, in the order the node took it
 * @stamp: that order: the node's count of multicasts taken
 * @oseq: the origin's n-th multicast on the tree
 * @tag: the origin descriptor's tag
 * @in: the link it came in on, %PERCS_CAU_MC_LOCAL for the member's own
 * @origin: index of the origin member
 * @owe: links that have not acknowledged it yet
 * @type: PERCS_CAU_T_*
 * @count: elements
 * @used: the buffer holds a multicast
 * @deliver: it is still to be written into the member's receive FIFO
 * @data: %PERCS_CAU_PAYLOAD bytes, zero beyond @count
 *
 * A buffer is free again once every link it goes out on has acknowledged
 * it and its member has it.
 */
struct percs_cau_mbuf {
	struct list_head list;
	u64 stamp;
	u64 oseq;
	u32 tag;
	u16 in;
	u16 origin;
	u8 owe;
	u8 type;
	u8 count;
	bool used;
	bool deliver;
	u8 data[PERCS_CAU_PAYLOAD] __aligned(8);
};

/**
 * struct percs_cau_mlink - a node's end of one tree edge, for multicasts
 * @tx_next: the number the next multicast sent on the edge gets (from 1)
 * @tx_acked: every number up to this one was acknowledged
 * @tx_stamp: the stamp of the last multicast given a number here: the
 *	next to send is the first one held after it
 * @deadline: when the unacknowledged ones are sent again
 * @rx_next: the number the next multicast accepted from the other end has
 * @ring: the node's buffer (index in its @mb) of number s, at
 *	s % %PERCS_CAU_MC_BUFS, while s is not acknowledged
 * @refused: a multicast from the other end found no free buffer: tell it
 *	when one frees
 */
struct percs_cau_mlink {
	u64 tx_next;
	u64 tx_acked;
	u64 tx_stamp;
	u64 deadline;
	u64 rx_next;
	u16 ring[PERCS_CAU_MC_BUFS];
	bool refused;
};

/**
 * struct percs_cau_node - one member of a tree, on its hub's CAU
 * @gid: its window's global id
 * @inst: that window's instance (percs_window.inst)
 * @hub: its hub
 * @parent: index of its parent, -1 for the root
 * @joined: its window has joined (the creator at once)
 * @pos: its position among its parent's children
 * @nr_children: how many children it has
 * @first_child: where their indices start in the tree's @kids
 * @posted: the member's reduction descriptors accepted so far
 * @waiting: a descriptor of the member waits for a free slot
 * @done: every operation up to this number is finished here
 * @up: the route to the parent, valid for link-state generation @up_gen
 * @up_gen: see @up
 * @slot: the operations in flight here
 * @in: ordered trees: per slot, (1 + @nr_children) inputs of
 *	%PERCS_CAU_PAYLOAD bytes (the member's own first, then the
 *	children's by position), combined in that order
 * @nlinks: its tree edges: link k < @nr_children goes to the child at
 *	position k, link @nr_children to the parent
 * @mc_posted: the member's multicasts accepted so far
 * @mc_stamp: multicasts the node has taken (from a link or its member)
 * @mq: the multicasts held here, in the order taken
 * @ml: per link, its multicast state
 * @mb: (@nlinks + 1) pools of %PERCS_CAU_MC_BUFS buffers: pool k < @nlinks
 *	for what link k brings, pool @nlinks for the member's own
 */
struct percs_cau_node {
	u32 gid;
	u64 inst;
	u32 hub;
	s32 parent;
	bool joined;
	u16 pos;
	u16 nr_children;
	u32 first_child;
	u64 posted;
	bool waiting;
	u64 done;
	struct fm_route up;
	u32 up_gen;
	struct percs_cau_slot slot[PERCS_CAU_SLOTS];
	u8 (*in)[PERCS_CAU_PAYLOAD];
	u16 nlinks;
	u64 mc_posted;
	u64 mc_stamp;
	struct list_head mq;
	struct percs_cau_mlink *ml;
	struct percs_cau_mbuf *mb;
};

/**
 * struct percs_cau_msg - a transfer between two nodes of a tree
 * @node: in the tree's held list (delayed by the network)
 * @deadline: when a held one arrives
 * @type: enum percs_cau_msg_type
 * @from: sending node
 * @to: receiving node
 * @seq: the operation; for the multicast kinds the edge's number (of a
 *	multicast, or the last acknowledged)
 *
 * The data of an input or a result is read from the sender's slot when
 * the transfer arrives: a receiver reads it only while it has not
 * acknowledged it, so the slot is still the sender's.
 */
struct percs_cau_msg {
	struct list_head node;
	u64 deadline;
	u8 type;
	u16 from;
	u16 to;
	u64 seq;
};

enum percs_cau_msg_type {
	PERCS_CAU_UP,		/* a child's combined input */
	PERCS_CAU_UP_ACK,
	PERCS_CAU_DOWN,		/* the result, to a child */
	PERCS_CAU_DOWN_ACK,
	PERCS_CAU_MC,		/* a multicast, on one edge */
	PERCS_CAU_MC_ACK,	/* every multicast up to seq taken */
	PERCS_CAU_MC_ROOM,	/* a buffer freed: send the refused again */
};

/**
 * struct percs_cau_tree - one collective tree
 * @id: its id, the key in pd->cau.trees
 * @flags: PERCS_CAU_F_*
 * @job_key: the job key of its windows
 * @nr: members
 * @pd: the system
 * @quota: the user who created it, charged for it (quota.c)
 * @lock: everything below and the nodes' operations
 * @dead: the tree ended: nothing more runs on it
 * @ring: transfers to process now (a queue: no recursion down the tree)
 * @ring_size: its entries, a power of two
 * @ring_head: next to process
 * @ring_tail: next free
 * @held: transfers the network delays
 * @work: resends, delayed transfers, deliveries that waited for room
 * @rcu: frees the tree after lock-free lookups are done
 * @kids: the children's indices, by node
 * @mlinks: every node's &percs_cau_node.ml
 * @mbufs: every node's &percs_cau_node.mb
 * @mc_posted: multicasts posted by the members (debugfs percs/cau)
 * @mc_delivered: multicasts written into members' receive FIFOs
 * @mc_resent: multicast transfers sent again (lost, refused, delayed)
 * @mc_refused: multicasts a node refused for want of a free buffer
 * @node: the members, in the creator's order
 */
struct percs_cau_tree {
	u32 id;
	u32 flags;
	u32 job_key;
	u32 nr;
	struct percs_dev *pd;
	struct percs_user *quota;
	spinlock_t lock;
	bool dead;
	struct percs_cau_msg *ring;
	u32 ring_size;
	u32 ring_head;
	u32 ring_tail;
	struct list_head held;
	struct delayed_work work;
	struct rcu_head rcu;
	u16 *kids;
	struct percs_cau_mlink *mlinks;
	struct percs_cau_mbuf *mbufs;
	u64 mc_posted;
	u64 mc_delivered;
	u64 mc_resent;
	u64 mc_refused;
	struct percs_cau_node node[];
};

/* coll.c */
int percs_coll_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		    const u8 *payload);
int percs_coll_tree_init(struct percs_cau_tree *t, u32 *kids);
void percs_coll_tree_fini(struct percs_cau_tree *t);

#endif /* _PERCS_CAU_H */
