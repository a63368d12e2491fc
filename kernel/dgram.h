/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: the datagrams of the end-to-end reliable protocols - what an
 * atomic request and its reply carry between two HFIs (net.c moves
 * them, atomic.c makes and consumes them).
 */
#ifndef _PERCS_DGRAM_H
#define _PERCS_DGRAM_H

#include "percs.h"
#include "firmware-model/atomic.h"

enum percs_dgram_type {
	PERCS_DGRAM_AMO_REQ = 1,
	PERCS_DGRAM_AMO_REPLY,
};

/**
 * struct percs_amo_req - an atomic request on the wire
 * @seq: its sequence number from the initiator to this target
 * @low: the initiator's lowest unanswered sequence number to this
 *	target: every number below is answered, the target may forget it
 * @src_inst: the initiator window's instance
 * @dst_inst: the target window's instance when the operation was posted
 * @slot: the initiator's slot of the operation, echoed in the reply
 * @job_key: the initiator's job key
 * @desc: the descriptor
 */
struct percs_amo_req {
	u64 seq;
	u64 low;
	u64 src_inst;
	u64 dst_inst;
	u32 slot;
	u32 job_key;
	struct fm_atomic_desc desc;
};

/**
 * struct percs_amo_reply - the target's answer
 * @seq: the request's sequence number
 * @src_inst: the initiator window's instance, from the request
 * @value: the value the first operation found (fetching ops)
 * @slot: from the request
 * @status: 0, or the error that stopped the request (nothing applied)
 */
struct percs_amo_reply {
	u64 seq;
	u64 src_inst;
	u64 value;
	u32 slot;
	s32 status;
};

/**
 * struct percs_dgram - a datagram the network holds back
 * @node: entry in pd->dgram.held
 * @deadline: ktime_get_ns() at which it arrives
 * @type: enum percs_dgram_type
 * @src_gid: the sending window's global id
 * @dst_gid: the receiving window's global id
 * @len: bytes of @body
 * @body: a &struct percs_amo_req or &struct percs_amo_reply
 *
 * Datagrams that go straight through are never built: the sender's
 * request or reply is handed on by pointer.
 */
struct percs_dgram {
	struct list_head node;
	u64 deadline;
	u32 type;
	u32 src_gid;
	u32 dst_gid;
	u32 len;
	u8 body[];
};

void percs_dgram_send(struct percs_dev *pd, unsigned int type, u32 src_gid,
		      u32 dst_gid, const void *body, u32 len,
		      const struct fm_route *r, struct percs_window *self);

#endif /* _PERCS_DGRAM_H */
