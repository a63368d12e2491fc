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
};

/**
 * struct percs_cau_msg - a transfer between two nodes of a tree
 * @node: in the tree's held list (delayed by the network)
 * @deadline: when a held one arrives
 * @type: enum percs_cau_msg_type
 * @from: sending node
 * @to: receiving node
 * @seq: the operation
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
};

/**
 * struct percs_cau_tree - one collective tree
 * @id: its id, the key in pd->cau.trees
 * @flags: PERCS_CAU_F_*
 * @job_key: the job key of its windows
 * @nr: members
 * @pd: the system
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
 * @node: the members, in the creator's order
 */
struct percs_cau_tree {
	u32 id;
	u32 flags;
	u32 job_key;
	u32 nr;
	struct percs_dev *pd;
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
	struct percs_cau_node node[];
};

/* coll.c */
int percs_coll_post(struct percs_window *w, const struct percs_pkt_hdr *h,
		    const u8 *payload);
int percs_coll_tree_init(struct percs_cau_tree *t, u32 *kids);
void percs_coll_tree_fini(struct percs_cau_tree *t);

#endif /* _PERCS_CAU_H */
