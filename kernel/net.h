/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: the network layer's delivery table - how a packet that has
 * crossed the network (route, link counts, fault injection: net.c) is
 * handed to the unit that gives it a meaning.
 *
 * Each packet kind has one handler, registered at init by the file that
 * owns the kind.  The network calls handlers only through this table, so
 * nothing below the engine calls back up into a sender: engine -> network
 * -> handler.
 */
#ifndef _PERCS_NET_H
#define _PERCS_NET_H

#include "percs.h"

/**
 * enum percs_net_kind - what a packet is, for its delivery
 * @PERCS_NET_FIFO: a FIFO or immediate packet, into a receive FIFO
 *	(fifo.c)
 * @PERCS_NET_RDMA_SEG: an RDMA segment held in flight, into a
 *	registration (rdma.c)
 * @PERCS_NET_AMO_REQ: an atomic request, at its target (atomic.c)
 * @PERCS_NET_AMO_REPLY: an atomic answer, at its initiator (atomic.c)
 * @PERCS_NET_NR_KINDS: how many
 */
enum percs_net_kind {
	PERCS_NET_FIFO,
	PERCS_NET_RDMA_SEG,
	PERCS_NET_AMO_REQ,
	PERCS_NET_AMO_REPLY,
	PERCS_NET_NR_KINDS,
};
static_assert(PERCS_NET_NR_KINDS == PERCS_NET_KINDS);

struct percs_mr;
struct percs_rdma_track;

/**
 * struct percs_net_pkt - one packet handed to its handler
 * @t: the window it arrives at, recv_lock held (FIFO, RDMA segment)
 * @hdr: its header, src and job key stamped (FIFO)
 * @payload: hdr->length bytes (FIFO), @len bytes (RDMA segment)
 * @mr: the registration it lands in (RDMA segment; its reference is the
 *	handler's to drop)
 * @addr: where in @mr
 * @len: data bytes (RDMA segment), or bytes of @body (datagram)
 * @track: its transfer (RDMA segment; its reference is the handler's)
 * @err: 0, or the error it is discarded with (RDMA segment whose window
 *	goes away: the handler completes it with @err, writes nothing)
 * @src_gid: the sending window (datagram)
 * @dst_gid: the receiving window (datagram)
 * @body: a &struct percs_amo_req or &struct percs_amo_reply (datagram)
 * @self: the window whose send_lock the caller holds, or NULL (datagram)
 */
struct percs_net_pkt {
	struct percs_window *t;
	const struct percs_pkt_hdr *hdr;
	const void *payload;
	struct percs_mr *mr;
	u64 addr;
	u32 len;
	struct percs_rdma_track *track;
	int err;
	u32 src_gid;
	u32 dst_gid;
	const void *body;
	struct percs_window *self;
};

/**
 * struct percs_net_handler - the receiving end of one packet kind
 * @name: for debugfs (isr/net)
 * @deliver: take one packet; any context (may be called under the
 *	target's recv_lock, see &struct percs_net_pkt).  Return 0, -EAGAIN
 *	when it has no room now (the network keeps the packet and retries:
 *	backpressure, not a refusal), or another -errno to refuse it: the
 *	network counts it and the sender sees that error where it can (the
 *	completion of a FIFO packet or of a held packet's remote completion).
 */
struct percs_net_handler {
	const char *name;
	int (*deliver)(struct percs_dev *pd, const struct percs_net_pkt *pkt);
};

/* net.c: the delivery table */
void percs_net_register(struct percs_dev *pd, enum percs_net_kind kind,
			const struct percs_net_handler *h);
int percs_net_deliver(struct percs_dev *pd, enum percs_net_kind kind,
		      const struct percs_net_pkt *pkt);

/* The handlers, registered by main.c at init */
int percs_fifo_net_deliver(struct percs_dev *pd,
			   const struct percs_net_pkt *pkt);
extern const struct percs_net_handler percs_fifo_net_handler;
extern const struct percs_net_handler percs_rdma_net_handler;
extern const struct percs_net_handler percs_amo_req_net_handler;
extern const struct percs_net_handler percs_amo_reply_net_handler;

#endif /* _PERCS_NET_H */
