/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * percs: emulated IBM PERCS Hub chip network interface - user ABI.
 *
 * One header for every ioctl, the mmap layout of a window and the packet
 * formats of every kind the device carries.  Conventions (iommufd style):
 * every ioctl struct starts with __u32 size so it can grow; unknown flags
 * and non-zero reserved fields are refused with EINVAL (EOPNOTSUPP for a
 * known field with an unsupported value); only fixed-width types.
 *
 * Documentation/uapi.rst gives the meaning of every errno.
 */
#ifndef _UAPI_LINUX_PERCS_H
#define _UAPI_LINUX_PERCS_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PERCS_IOCTL_TYPE	0xB9

/* Device geometry the ABI is built on. */
#define PERCS_FLIT_SIZE		128	/* ISR flit and FIFO unit, bytes */
#define PERCS_MAX_PACKET	2048	/* largest packet, header included */
#define PERCS_PKT_HDR_SIZE	32	/* sizeof(struct percs_pkt_hdr) */
#define PERCS_MAX_PAYLOAD	(PERCS_MAX_PACKET - PERCS_PKT_HDR_SIZE)
#define PERCS_IMM_PAYLOAD	(PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE)
#define PERCS_MAX_PKT_UNITS	(PERCS_MAX_PACKET / PERCS_FLIT_SIZE)

#define PERCS_FIFO_MIN_SIZE	4096		/* bytes, power of two */
#define PERCS_FIFO_MAX_SIZE	(4U << 20)	/* bytes, power of two */
#define PERCS_FIFO_DEF_SIZE	65536
#define PERCS_IMM_SLOTS		32	/* immediate-send slots per window */
#define PERCS_CQ_ENTRIES	256	/* completion queue entries */

/**
 * enum percs_pkt_kind - what a packet (or send descriptor) is
 * @PERCS_PKT_PAD: filler: skip to the end of the FIFO; never sent
 * @PERCS_PKT_FIFO: FIFO send/receive: payload lands in the target's
 *	receive FIFO
 * @PERCS_PKT_IMM: immediate send (ICSWX): one flit, lands in the target's
 *	receive FIFO; only valid in an immediate-send slot
 * @PERCS_PKT_IP: IP datagram through the FIFO (not executed yet)
 * @PERCS_PKT_RDMA: RDMA descriptor, &struct percs_rdma_ext follows the
 *	header
 * @PERCS_PKT_ATOMIC: remote atomic update descriptor, &struct
 *	percs_atomic_ext follows
 * @PERCS_PKT_COLL: CAU collective descriptor or result, &struct
 *	percs_coll_ext follows
 * @PERCS_PKT_KIND_MAX: the highest kind value
 *
 * The kind is a __u8 field in the header; an enum only names the values.
 * Kinds that the module does not execute yet complete with EOPNOTSUPP.
 */
enum percs_pkt_kind {
	PERCS_PKT_PAD = 0,
	PERCS_PKT_FIFO = 1,
	PERCS_PKT_IMM = 2,
	PERCS_PKT_IP = 3,
	PERCS_PKT_RDMA = 4,
	PERCS_PKT_ATOMIC = 5,
	PERCS_PKT_COLL = 6,
	PERCS_PKT_KIND_MAX = PERCS_PKT_COLL
};

/**
 * enum percs_route_mode - how the ISR picks a route for one packet
 * @PERCS_ROUTE_DIRECT: shortest direct route (at most L-D-L), hw_direct
 * @PERCS_ROUTE_DIRECT_STRIPED: hardware round-robin over the available
 *	direct and indirect routes, hw_direct_striped
 * @PERCS_ROUTE_SW_INDIRECT: indirect through the intermediate supernode
 *	named in &percs_pkt_hdr.route_arg (at most L-D-L-D-L), sw_indirect
 * @PERCS_ROUTE_HW_INDIRECT: indirect through a pseudo-randomly chosen
 *	intermediate supernode, hw_indirect
 * @PERCS_ROUTE_MAX: the highest route mode value
 */
enum percs_route_mode {
	PERCS_ROUTE_DIRECT = 0,
	PERCS_ROUTE_DIRECT_STRIPED = 1,
	PERCS_ROUTE_SW_INDIRECT = 2,
	PERCS_ROUTE_HW_INDIRECT = 3,
	PERCS_ROUTE_MAX = PERCS_ROUTE_HW_INDIRECT
};

/**
 * struct percs_addr - network address of one window
 * @hub: hub number, 0 .. number of hubs - 1 (supernode * hubs per
 *	supernode + hub index within the supernode)
 * @hfi: HFI unit within the hub, 0 or 1
 * @reserved: must be zero
 * @window: window index within the HFI
 */
struct percs_addr {
	__u32 hub;
	__u8 hfi;
	__u8 reserved;
	__u16 window;
};

/*
 * percs_pkt_hdr.flags: completions of FIFO and immediate sends.  Without
 * either flag a send posts an entry only when it fails.
 *
 * %PERCS_PKT_F_NOTIFY: an entry once the packet has left the window (the
 * HFI took it from the send FIFO or slot and the network accepted it).
 * The packet may still be in the network then: with the reorder knob, a
 * hold, or a route longer than the direct one, the entry can come before
 * the packet is in the target's receive FIFO.
 *
 * %PERCS_PKT_F_NOTIFY_REMOTE: an entry once the packet is in the target's
 * receive FIFO (res 0), as a verbs RC acknowledgement tells; or res
 * -ECONNREFUSED when the network discarded it because its target went
 * away first.  Entries of packets held in the network come in the order
 * they land.  Both flags: as NOTIFY_REMOTE alone.
 *
 * Other kinds (RDMA, atomics, collectives) complete as their extension
 * headers say; the flags mean nothing to RDMA and atomic descriptors.
 */
#define PERCS_PKT_F_NOTIFY	(1U << 0) /* CQE when the packet has left */
#define PERCS_PKT_F_NOTIFY_REMOTE (1U << 1) /* CQE when it is in the target's FIFO */
#define PERCS_PKT_F_ALL		(PERCS_PKT_F_NOTIFY | PERCS_PKT_F_NOTIFY_REMOTE)

/**
 * struct percs_pkt_hdr - header of every packet and send descriptor
 * @kind: enum percs_pkt_kind
 * @route: enum percs_route_mode
 * @flags: PERCS_PKT_F_*
 * @length: bytes following the header, a kind's extension header
 *	included: at most %PERCS_MAX_PAYLOAD (%PERCS_IMM_PAYLOAD for
 *	immediate sends)
 * @route_arg: intermediate supernode for %PERCS_ROUTE_SW_INDIRECT, else 0
 * @dst: destination window
 * @src: source window; written by the HFI, ignored on send
 * @job_key: job key of the sending window; written by the HFI, ignored on
 *	send (a window cannot forge it)
 * @tag: opaque to the HFI; delivered with the packet and echoed in the
 *	completion entry of the send (for matching in upper layers)
 *
 * In a FIFO a packet occupies DIV_ROUND_UP(32 + @length, 128) consecutive
 * 128-byte units and never wraps: a %PERCS_PKT_PAD entry fills the tail
 * of the FIFO when the next packet does not fit before its end.  A pad's
 * @length is its size in bytes minus the header.
 */
struct percs_pkt_hdr {
	__u8 kind;
	__u8 route;
	__u16 flags;
	__u16 length;
	__u16 route_arg;
	struct percs_addr dst;
	struct percs_addr src;
	__u32 job_key;
	__u32 tag;
};

/**
 * struct percs_rdma_ext - follows the header of a %PERCS_PKT_RDMA descriptor
 * @op: PERCS_RDMA_OP_*
 * @flags: PERCS_RDMA_F_*
 * @reserved: must be zero
 * @handle: registration handle in the target window (&percs_pkt_hdr.dst)
 * @local_handle: registration handle in the initiating window; must be 0
 *	for %PERCS_RDMA_OP_FIFO_WRITE (the payload follows this extension)
 * @reserved2: must be zero
 * @remote_addr: effective address in the target's registration
 * @local_addr: effective address in the initiator's registration; must be
 *	0 for %PERCS_RDMA_OP_FIFO_WRITE
 * @len: bytes to transfer: 1 .. %PERCS_MR_MAX_LENGTH (WRITE, READ), 1 ..
 *	%PERCS_RDMA_FIFO_MAX (FIFO_WRITE, where &percs_pkt_hdr.length is
 *	sizeof(struct percs_rdma_ext) + @len; for the others it is
 *	sizeof(struct percs_rdma_ext))
 * @user_data: echoed in the completion entries of the operation
 *
 * The descriptor is composed in the send FIFO like any packet and read
 * once when the trigger reaches it.  Every operation posts one completion
 * entry on the initiator (&percs_cqe.kind %PERCS_PKT_RDMA) once all of its
 * bytes have landed, or with the error that stopped it; see
 * Documentation/uapi.rst for the statuses.  On the wire a transfer is
 * carried by packets of at most %PERCS_MAX_PACKET bytes, each with
 * %PERCS_RDMA_SEG_DATA data bytes at most.
 */
struct percs_rdma_ext {
	__u8 op;
	__u8 flags;
	__u16 reserved;
	__u32 handle;
	__u32 local_handle;
	__u32 reserved2;
	__u64 remote_addr;
	__u64 local_addr;
	__u64 len;
	__u64 user_data;
};

#define PERCS_RDMA_EXT_SIZE	48	/* sizeof(struct percs_rdma_ext) */
/* Data bytes of one RDMA packet on the wire, and of a FIFO_WRITE. */
#define PERCS_RDMA_SEG_DATA	(PERCS_MAX_PAYLOAD - PERCS_RDMA_EXT_SIZE)
#define PERCS_RDMA_FIFO_MAX	PERCS_RDMA_SEG_DATA

#define PERCS_RDMA_OP_WRITE	0 /* local registration -> remote one */
#define PERCS_RDMA_OP_READ	1 /* remote registration -> local one */
#define PERCS_RDMA_OP_FIFO_WRITE 2 /* payload in the FIFO -> remote one */
#define PERCS_RDMA_OP_MAX	PERCS_RDMA_OP_FIFO_WRITE
#define PERCS_RDMA_F_FENCE	(1U << 0) /* start after all earlier ones complete */
#define PERCS_RDMA_F_NOTIFY_TARGET (1U << 1) /* CQE at the target too, with the initiator's user_data */
#define PERCS_RDMA_F_ALL	(PERCS_RDMA_F_FENCE | PERCS_RDMA_F_NOTIFY_TARGET)

/**
 * struct percs_atomic_ext - follows the header of a %PERCS_PKT_ATOMIC descriptor
 * @op: PERCS_ATOMIC_*
 * @width: operand size in bytes: 1, 2, 4 or 8
 * @count: operations in this descriptor, 1 .. %PERCS_ATOMIC_MAX_PACKED;
 *	more than one is packed mode: ADD, AND, OR or XOR without
 *	%PERCS_ATOMIC_F_FETCH, every operation in the same registration
 * @flags: PERCS_ATOMIC_F_*
 * @handle: registration handle in the target window (&percs_pkt_hdr.dst),
 *	which must grant %PERCS_ACCESS_REMOTE_ATOMIC
 * @user_data: echoed in the completion entry
 * @result_addr: with %PERCS_ATOMIC_F_FETCH, where the value the target
 *	held before the operation is written (@width bytes, host order) in
 *	the initiator's registration @result_handle; else 0
 * @result_handle: with %PERCS_ATOMIC_F_FETCH, a registration of the
 *	initiating window granting %PERCS_ACCESS_LOCAL_WRITE; else 0
 * @reserved: must be zero
 *
 * @count &struct percs_atomic_op follow; a %PERCS_ATOMIC_CSWAP (count 1)
 * is followed by one more __u64, the comparand.  &percs_pkt_hdr.length is
 * exactly %PERCS_ATOMIC_LEN(@count), plus 8 for a CSWAP: a packed
 * descriptor of four operations is one 128-byte cache line with its
 * header.  The initiator's HFI numbers every packet per destination
 * window and retransmits it until the target acknowledges it; the target
 * applies each number once (Documentation/design.rst, "Atomics").
 *
 * Every descriptor posts one completion entry on the initiator
 * (&percs_cqe.kind %PERCS_PKT_ATOMIC) once the target has applied it and
 * the fetched value, if any, is in place, or with the error that stopped
 * it (nothing is applied then: a packed descriptor applies all of its
 * operations or none).  A CSWAP that finds another value completes with
 * 0 too: the fetched value tells.  Documentation/uapi.rst lists the
 * statuses.
 */
struct percs_atomic_ext {
	__u8 op;
	__u8 width;
	__u8 count;
	__u8 flags;
	__u32 handle;
	__u64 user_data;
	__u64 result_addr;
	__u32 result_handle;
	__u32 reserved;
};

/**
 * struct percs_atomic_op - one operation of an atomic descriptor
 * @addr: effective address of the operand in the target's registration,
 *	a multiple of the width
 * @operand: the value added, and-ed, or-ed, xor-ed, or swapped in (CSWAP);
 *	only its low @width bytes are used, the others must be zero
 */
struct percs_atomic_op {
	__u64 addr;
	__u64 operand;
};

#define PERCS_ATOMIC_EXT_SIZE	32	/* sizeof(struct percs_atomic_ext) */
#define PERCS_ATOMIC_OP_SIZE	16	/* sizeof(struct percs_atomic_op) */
#define PERCS_ATOMIC_MAX_PACKED	4
/* &percs_pkt_hdr.length of a descriptor of @n operations (no CSWAP). */
#define PERCS_ATOMIC_LEN(n)	(PERCS_ATOMIC_EXT_SIZE + (n) * PERCS_ATOMIC_OP_SIZE)

#define PERCS_ATOMIC_ADD	0 /* two's complement: signed and unsigned */
#define PERCS_ATOMIC_AND	1
#define PERCS_ATOMIC_OR		2
#define PERCS_ATOMIC_XOR	3
#define PERCS_ATOMIC_CSWAP	4 /* store operand if the value is the comparand */
#define PERCS_ATOMIC_OP_MAX	PERCS_ATOMIC_CSWAP
#define PERCS_ATOMIC_F_FETCH	(1U << 0) /* return the old value */
#define PERCS_ATOMIC_F_ALL	PERCS_ATOMIC_F_FETCH

/*
 * The CAU's arithmetic (section IV.D of the PERCS paper): a reduction
 * combines elements of one type with one op.  Fixed point: NOP, SUM, MIN,
 * MAX, OR, AND, XOR on signed and unsigned 32- and 64-bit integers (SUM
 * wraps, two's complement); floating point: MIN, MAX, SUM, PROD on IEEE
 * 754 single and double (round to nearest even).  NOP combines nothing:
 * its result is all zero bytes (a barrier carries no data).  Floats: a NaN
 * input makes the result a NaN (for SUM and PROD as the x86 FPU gives it:
 * a NaN input's payload, quietened; an invalid operation such as
 * inf - inf, the default NaN; for MIN and MAX the first NaN in
 * combination order, bit for bit);
 * MIN(-0.0, +0.0) is -0.0 and MAX(-0.0, +0.0) is +0.0, whatever the order;
 * infinities follow IEEE 754 (inf + -inf is NaN).
 * Documentation/uapi.rst, "Collectives".
 */
#define PERCS_CAU_OP_NOP	0
#define PERCS_CAU_OP_SUM	1
#define PERCS_CAU_OP_MIN	2
#define PERCS_CAU_OP_MAX	3
#define PERCS_CAU_OP_OR		4 /* fixed point only */
#define PERCS_CAU_OP_AND	5 /* fixed point only */
#define PERCS_CAU_OP_XOR	6 /* fixed point only */
#define PERCS_CAU_OP_PROD	7 /* floating point only */
#define PERCS_CAU_OP_LAST	PERCS_CAU_OP_PROD

#define PERCS_CAU_T_S32		0
#define PERCS_CAU_T_U32		1
#define PERCS_CAU_T_S64		2
#define PERCS_CAU_T_U64		3
#define PERCS_CAU_T_F32		4
#define PERCS_CAU_T_F64		5
#define PERCS_CAU_T_LAST	PERCS_CAU_T_F64

/* Data bytes one CAU packet carries: 16 4-byte or 8 8-byte elements. */
#define PERCS_CAU_PAYLOAD	64

/**
 * struct percs_coll_ext - follows the header of a %PERCS_PKT_COLL packet
 * @tree: CAU tree id (PERCS_IOC_CAU_CREATE)
 * @coll: PERCS_COLL_*
 * @op: PERCS_CAU_OP_* (NOP for a barrier or a multicast)
 * @type: PERCS_CAU_T_* (a multicast's only gives the element size)
 * @count: elements in the payload, 0 .. %PERCS_CAU_PAYLOAD / element size
 *	(0 for a barrier; a multicast may have 0)
 * @seq: in a delivered packet, the operation's number on the tree: a
 *	member's n-th reduction or barrier descriptor on a tree is operation
 *	n (from 1), combined with every other member's n-th; for a
 *	multicast, the origin's n-th multicast on the tree (from 1, numbered
 *	apart from the reductions; one origin's arrive in that order).  0 in
 *	a descriptor
 * @status: in a delivered packet, 0 or the error that stopped the
 *	operation (the payload is then zero); 0 in a descriptor
 * @reserved: must be zero
 *
 * A descriptor (in the send FIFO) is the header, this extension and @count
 * elements: &percs_pkt_hdr.length is sizeof(struct percs_coll_ext) +
 * @count * element size; &percs_pkt_hdr.dst must be zero (the tree says
 * where data goes) and the route mode direct.  The result reaches a
 * member's receive FIFO as a packet of the same kind: the header (src: the
 * tree's root window for a reduction, the origin for a multicast; tag: the
 * member's own descriptor's tag, the origin's for a multicast, which
 * every member but the origin gets), this extension and
 * %PERCS_CAU_PAYLOAD bytes (zero beyond @count), one cache line in all.
 * Documentation/uapi.rst, "Collectives", says who receives what.
 */
struct percs_coll_ext {
	__u32 tree;
	__u8 coll;
	__u8 op;
	__u8 type;
	__u8 count;
	__u64 seq;
	__s32 status;
	__u32 reserved;
};

#define PERCS_COLL_EXT_SIZE	24	/* sizeof(struct percs_coll_ext) */

#define PERCS_COLL_ALLREDUCE	0 /* every member gets the reduction */
#define PERCS_COLL_REDUCE	1 /* the root gets it */
#define PERCS_COLL_BARRIER	2 /* every member, once all have entered */
#define PERCS_COLL_MCAST	3 /* from any member to all the others, in its order */
#define PERCS_COLL_LAST		PERCS_COLL_MCAST

/**
 * struct percs_cqe - completion queue entry
 * @user_data: the packet's tag (FIFO and immediate sends), or the
 *	descriptor's user_data (RDMA, atomics); in a target's
 *	%PERCS_CQE_F_REMOTE entry (%PERCS_RDMA_F_NOTIFY_TARGET), the
 *	initiator's user_data
 * @res: 0 on success, or a negative errno (see Documentation/uapi.rst)
 * @kind: the packet kind that completed
 * @flags: PERCS_CQE_F_*
 * @reserved: zero
 *
 * Successful FIFO and immediate sends post no entry unless the header has
 * %PERCS_PKT_F_NOTIFY or %PERCS_PKT_F_NOTIFY_REMOTE; failed ones always
 * do (with %PERCS_CQE_F_UNASKED when they asked for none).
 *
 * A full queue drops the entry: the HFI counts it in
 * &percs_status.cq_overflows and sets %PERCS_STATUS_CQ_OVERFLOW.  The
 * operation itself is done; only its entry is lost.  A program that sees
 * the count grow cannot tell which entries are gone: it must treat every
 * operation whose entry has not come as complete with an unknown status.
 * Keep the entries asked for at most %PERCS_CQ_ENTRIES (libpercs:
 * percs_cq_limit()), with room for failures of sends that asked for none.
 */
struct percs_cqe {
	__u64 user_data;
	__s32 res;
	__u8 kind;
	__u8 flags;
	__u16 reserved;
};

#define PERCS_CQE_F_IMM		(1U << 0) /* came from an immediate slot */
#define PERCS_CQE_F_REMOTE	(1U << 1) /* RDMA target notification */
#define PERCS_CQE_F_LOCAL	(1U << 2) /* error on the initiator's registration (RDMA, atomic result) */
#define PERCS_CQE_F_UNASKED	(1U << 3) /* a send that asked for no entry failed */

/*
 * The doorbell page: written by the application, read once per use by the
 * HFI.  All positions are free-running 64-bit counts; the slot they name is
 * position modulo the ring size.
 */
struct percs_doorbell {
	/** @send_tail: trigger: units (128 B) composed in the send FIFO */
	__u64 send_tail;
	__u64 pad0[7];
	/** @recv_head: credit: units consumed from the receive FIFO */
	__u64 recv_head;
	__u64 pad1[7];
	/** @imm_tail: immediate-send slots filled */
	__u64 imm_tail;
	__u64 pad2[7];
	/** @cq_head: completion entries consumed */
	__u64 cq_head;
	__u64 pad3[7];
};

/* percs_status.flags */
#define PERCS_STATUS_NEED_WAKEUP (1U << 0) /* polling engine sleeps or stepped aside: kick */
#define PERCS_STATUS_ERROR	(1U << 1) /* see error */
#define PERCS_STATUS_CQ_OVERFLOW (1U << 2) /* entries were dropped */
#define PERCS_STATUS_SEND_BLOCKED (1U << 3) /* send FIFO waits for a target */
#define PERCS_STATUS_SENDERS_WAIT (1U << 4) /* others wait for our credits */

/* Entries of percs_status.mr_inval_ring. */
#define PERCS_MR_INVAL_RING	256

/**
 * struct percs_status - the status page: written by the HFI, read-only
 * @send_head: send FIFO units the HFI has consumed: every packet that
 *	ends at or before it has been read and left the window (delivered,
 *	held in the network, queued as an RDMA or atomic operation, or
 *	failed), and its units may be reused; equal to the trigger, the send
 *	FIFO is drained.  Consumed is not landed: see %PERCS_PKT_F_NOTIFY
 * @pad0: keeps each index on its own cache line
 * @recv_tail: receive FIFO units the HFI has written
 * @pad1: as @pad0
 * @imm_head: immediate-send slots the HFI has consumed
 * @pad2: as @pad0
 * @cq_tail: completion entries posted
 * @pad3: as @pad0
 * @flags: PERCS_STATUS_*
 * @error: last window error (a positive errno): a bad trigger or credit
 * @packets_sent: FIFO and immediate packets that left this window without
 *	error (and collective descriptors taken); failed ones are counted in
 *	@send_errors instead, and RDMA and atomic descriptors in neither
 * @packets_received: packets written into the receive FIFO
 * @send_errors: operations of any kind that completed with an error
 *	(counted whether or not their entry found room in the CQ)
 * @cq_overflows: completion entries dropped because the CQ was full
 * @send_blocked: times a send waited because its target's FIFO was full
 * @poll_beat: the heartbeat of the HFI's polling thread, in poll and auto
 *	mode: it adds one for each pass over the window, so a value that
 *	stops moving while %PERCS_STATUS_NEED_WAKEUP is clear means that the
 *	thread has no CPU (or is parked); 0 in kick mode
 * @sent_polled: send descriptors (FIFO packets, immediate slots, RDMA,
 *	atomic and collective descriptors) the polling thread consumed
 * @sent_kicked: send descriptors consumed by a kick in the caller's
 *	context or by the kernel's own work items
 * @kicks: PERCS_IOC_KICK calls and fsync(2)/fdatasync(2) doorbells made on
 *	the window: the system calls of the send path
 * @mr_invalidated: registrations made with %PERCS_MR_F_INVALIDATE that the
 *	kernel ended because the process's mapping of their range changed;
 *	the handle of the n-th (from 0) is in @mr_inval_ring[n %
 *	%PERCS_MR_INVAL_RING] once this count passed n (load it with acquire).
 *	A reader that fell more than %PERCS_MR_INVAL_RING behind, or that
 *	finds the count moved that far while it read the ring, has lost
 *	handles and must treat every such registration as ended
 * @reserved: zero; room for growth inside the page
 * @mr_inval_ring: the handles of the last %PERCS_MR_INVAL_RING ended
 *	registrations (see @mr_invalidated)
 */
struct percs_status {
	__u64 send_head;
	__u64 pad0[7];
	__u64 recv_tail;
	__u64 pad1[7];
	__u64 imm_head;
	__u64 pad2[7];
	__u64 cq_tail;
	__u64 pad3[7];
	__u32 flags;
	__u32 error;
	__u64 packets_sent;
	__u64 packets_received;
	__u64 send_errors;
	__u64 cq_overflows;
	__u64 send_blocked;
	__u64 poll_beat;
	__u64 sent_polled;
	__u64 sent_kicked;
	__u64 kicks;
	__u64 mr_invalidated;
	__u64 reserved[5];
	__u32 mr_inval_ring[PERCS_MR_INVAL_RING];
};

/* percs_clock.flags */
#define PERCS_CLOCK_F_TSC	(1U << 0) /* the TSC fields are valid: use them */

#define PERCS_CLOCK_VERSION	1	/* percs_clock.version */

/**
 * struct percs_clock - the global clock page: written by the kernel, read-only
 * @seq: sequence count: odd while the kernel rewrites the page.  A reader
 *	loads it (acquire), reads the other fields and the time source,
 *	then loads it again after an acquire fence, and starts over when it
 *	was odd or has changed
 * @version: %PERCS_CLOCK_VERSION; a new version would mean the fields
 *	below changed meaning (new fields come out of @reserved with a flag)
 * @flags: PERCS_CLOCK_F_*
 * @shift: with @mult, the TSC-to-nanosecond scale; at most 32
 * @mult: nanoseconds per TSC cycle, times 2^@shift
 * @tsc_khz: the TSC frequency the kernel calibrated at load, in kHz (for
 *	information; @mult is what readers use)
 * @tsc_base: the TSC value at which the clock read @ns_base
 * @ns_base: the clock at @tsc_base, in nanoseconds
 * @mono_offset: CLOCK_MONOTONIC minus the clock, in nanoseconds: exact
 *	without %PERCS_CLOCK_F_TSC; with it, the kernel steers the clock to
 *	stay within microseconds of CLOCK_MONOTONIC minus this
 * @updates: how many times the kernel has rewritten the page since the
 *	module was loaded (for information)
 * @reserved: zero
 *
 * The clock counts nanoseconds from 0 at module load and is the same for
 * every window of every hub: there is one page, mapped by all of them
 * (%PERCS_REGION_CLOCK).  It never goes backwards and runs at the rate of
 * CLOCK_MONOTONIC.
 *
 * With %PERCS_CLOCK_F_TSC set, the clock at TSC value tsc is
 *	@ns_base + (((tsc - @tsc_base) * @mult) >> @shift)
 * computed without overflow (a 96-bit product), and @ns_base when tsc is
 * below @tsc_base; the TSC is read in order (lfence; rdtsc; lfence).  The
 * kernel sets the flag only while its own clocksource is the TSC and the
 * TSC is stable, and rescales @mult a little from time to time to follow
 * CLOCK_MONOTONIC.
 *
 * Without it, the clock is CLOCK_MONOTONIC minus @mono_offset (the TSC
 * cannot be used: a clock_gettime() call, which may be a system call).
 */
struct percs_clock {
	__u32 seq;
	__u32 version;
	__u32 flags;
	__u32 shift;
	__u32 mult;
	__u32 tsc_khz;
	__u64 tsc_base;
	__u64 ns_base;
	__u64 mono_offset;
	__u64 updates;
	__u64 reserved[9];
};

/**
 * enum percs_region_id - the mmap regions of a window
 * @PERCS_REGION_SEND_FIFO: send FIFO, read/write
 * @PERCS_REGION_RECV_FIFO: receive FIFO, read-only
 * @PERCS_REGION_DOORBELL: &struct percs_doorbell page, read/write
 * @PERCS_REGION_STATUS: &struct percs_status page, read-only
 * @PERCS_REGION_IMM: immediate-send slots, %PERCS_IMM_SLOTS flits, r/w
 * @PERCS_REGION_CQ: completion queue, &struct percs_cqe ring, read-only
 * @PERCS_REGION_CLOCK: the global clock, &struct percs_clock page,
 *	read-only; one page for the whole module: every window maps the same
 * @PERCS_REGION_MAX: size of &percs_window_reserve.regions
 */
enum percs_region_id {
	PERCS_REGION_SEND_FIFO = 0,
	PERCS_REGION_RECV_FIFO = 1,
	PERCS_REGION_DOORBELL = 2,
	PERCS_REGION_STATUS = 3,
	PERCS_REGION_IMM = 4,
	PERCS_REGION_CQ = 5,
	PERCS_REGION_CLOCK = 6,
	PERCS_REGION_MAX = 8
};

#define PERCS_REGION_F_VALID	(1U << 0)
#define PERCS_REGION_F_WRITABLE	(1U << 1)

/**
 * struct percs_region - where one region of a window is mapped
 * @offset: the mmap offset to pass for this region (an opaque key)
 * @length: exact mmap length in bytes, a multiple of the page size
 * @flags: PERCS_REGION_F_*
 */
struct percs_region {
	__u64 offset;
	__u32 length;
	__u32 flags;
};

/**
 * struct percs_hfi_info - PERCS_IOC_HFI_INFO: describe an HFI and the system
 * @size: sizeof(struct percs_hfi_info)
 * @flags: must be zero
 * @hub: this HFI's hub number
 * @supernode: the hub's supernode
 * @unit: HFI unit within the hub (0 or 1)
 * @windows_total: windows of this HFI
 * @windows_in_use: windows currently reserved
 * @nr_supernodes: supernodes in the emulated system
 * @hubs_per_supernode: hubs in each supernode
 * @nr_hubs: hubs in the emulated system
 * @hfis_per_hub: HFIs per hub (2)
 * @max_packet: %PERCS_MAX_PACKET
 * @flit_size: %PERCS_FLIT_SIZE
 * @reserved: zero
 */
struct percs_hfi_info {
	__u32 size;
	__u32 flags;
	__u32 hub;
	__u32 supernode;
	__u32 unit;
	__u32 windows_total;
	__u32 windows_in_use;
	__u32 nr_supernodes;
	__u32 hubs_per_supernode;
	__u32 nr_hubs;
	__u32 hfis_per_hub;
	__u32 max_packet;
	__u32 flit_size;
	__u32 reserved;
};
#define PERCS_IOC_HFI_INFO	_IO(PERCS_IOCTL_TYPE, 0x00)

/* percs_window_reserve.flags */
#define PERCS_WINDOW_F_POLL	(1U << 0) /* engine: HFI polling thread */
#define PERCS_WINDOW_F_AUTO	(1U << 1) /* engine: polling thread while it runs, else the caller */
#define PERCS_WINDOW_F_ALL	(PERCS_WINDOW_F_POLL | PERCS_WINDOW_F_AUTO)
/*
 * Reported by PERCS_IOC_WINDOW_QUERY only, never accepted: the window is
 * a kernel client's (a verbs QP of percs_verbs.ko), in a job of its own.
 */
#define PERCS_WINDOW_F_KERNEL	(1U << 31)
/* A verbs QP's QPN is this plus the index of its (kernel) window. */
#define PERCS_VERBS_QPN_BASE	0x100

#define PERCS_WINDOW_ANY	0xffffffffU

/**
 * struct percs_window_reserve - PERCS_IOC_WINDOW_RESERVE on an HFI fd
 * @size: sizeof(struct percs_window_reserve)
 * @flags: PERCS_WINDOW_F_*; without %PERCS_WINDOW_F_POLL or
 *	%PERCS_WINDOW_F_AUTO the engine runs in the caller's context on
 *	PERCS_IOC_KICK (kick mode).  %PERCS_WINDOW_F_POLL: the HFI's polling
 *	thread runs it (poll mode).  %PERCS_WINDOW_F_AUTO: the polling thread
 *	runs it while the thread has a CPU to itself, and a kick runs it in
 *	the caller's context otherwise (the hybrid, Documentation/design.rst
 *	"Engine modes"); both flags at once are refused with EINVAL
 * @send_fifo_size: send FIFO bytes: a power of two in
 *	[%PERCS_FIFO_MIN_SIZE, %PERCS_FIFO_MAX_SIZE]
 * @recv_fifo_size: receive FIFO bytes, same bounds
 * @job_fd: a job fd (PERCS_IOC_JOB_CREATE): the window joins that job
 * @window: in: %PERCS_WINDOW_ANY or the index wanted; out: the index
 * @fd: in: must be zero (EINVAL); out: the window fd (also the ioctl's
 *	return value)
 * @imm_slots: in: must be zero (EINVAL); out: %PERCS_IMM_SLOTS
 * @cq_entries: in: must be zero (EINVAL); out: %PERCS_CQ_ENTRIES
 * @job_key: in: must be zero (EINVAL); out: the job's key, as packets from
 *	this window carry it
 * @addr: out: this window's network address (not checked on input:
 *	overwritten, its reserved byte with zero)
 * @regions: out: the mmap layout, indexed by enum percs_region_id (not
 *	checked on input: overwritten, entries of regions the window does
 *	not have with zeros)
 *
 * On success returns a new file descriptor (O_CLOEXEC) owning the window:
 * the window is released when the last reference to that file goes (the
 * fd and every mapping of it).
 */
struct percs_window_reserve {
	__u32 size;
	__u32 flags;
	__u32 send_fifo_size;
	__u32 recv_fifo_size;
	__s32 job_fd;
	__u32 window;
	__u32 fd;
	__u32 imm_slots;
	__u32 cq_entries;
	__u32 job_key;
	struct percs_addr addr;
	struct percs_region regions[PERCS_REGION_MAX];
};
#define PERCS_IOC_WINDOW_RESERVE _IO(PERCS_IOCTL_TYPE, 0x01)

/**
 * struct percs_window_query - PERCS_IOC_WINDOW_QUERY on an HFI fd
 * @size: sizeof(struct percs_window_query), or %PERCS_WINDOW_QUERY_SIZE_VER0
 *	(the struct up to @send_blocked, as before the kick counters): the
 *	kernel fills in only the fields that fit
 * @flags: must be zero
 * @window: in: window index
 * @state: out: PERCS_WSTATE_*
 * @job_key: out: the window's job key
 * @pid: out: tgid of the reserving process (in the caller's pid namespace,
 *	0 if not visible there)
 * @uid: out: euid of the reserving process
 * @wflags: out: the reservation flags
 * @send_fifo_size: out
 * @recv_fifo_size: out
 * @packets_sent: out
 * @packets_received: out
 * @send_errors: out
 * @send_blocked: out
 * @sent_polled: out: &percs_status.sent_polled
 * @sent_kicked: out: &percs_status.sent_kicked
 * @kicks: out: &percs_status.kicks
 *
 * Returns ENOENT for a free window (state is then %PERCS_WSTATE_FREE).
 * A window of a job the caller neither reserved nor owns is
 * %PERCS_WSTATE_HIDDEN to a caller without CAP_SYS_ADMIN: only @wflags
 * and the FIFO sizes are filled in; its key, owner and traffic are not
 * shown.
 */
struct percs_window_query {
	__u32 size;
	__u32 flags;
	__u32 window;
	__u32 state;
	__u32 job_key;
	__u32 pid;
	__u32 uid;
	__u32 wflags;
	__u32 send_fifo_size;
	__u32 recv_fifo_size;
	__u64 packets_sent;
	__u64 packets_received;
	__u64 send_errors;
	__u64 send_blocked;
	__u64 sent_polled;
	__u64 sent_kicked;
	__u64 kicks;
};
#define PERCS_WINDOW_QUERY_SIZE_VER0	72 /* up to send_blocked */
#define PERCS_IOC_WINDOW_QUERY	_IO(PERCS_IOCTL_TYPE, 0x02)

#define PERCS_WSTATE_FREE	0
#define PERCS_WSTATE_ACTIVE	1
#define PERCS_WSTATE_HIDDEN	2 /* in use by another user's job */

/**
 * struct percs_job_create - PERCS_IOC_JOB_CREATE on an HFI fd
 * @size: sizeof(struct percs_job_create)
 * @flags: must be zero
 * @fd: out: the job fd (also the ioctl's return value)
 * @job_key: out: the key the kernel allocated for the job
 *
 * A job is the unit of isolation: windows exchange packets, RDMA and
 * atomics, and build CAU trees, only with windows of their own job.  The
 * job fd is the only way to join it (PERCS_WINDOW_RESERVE's @job_fd):
 * pass it by inheritance or SCM_RIGHTS.  The key is never chosen by a
 * user and never reused while the job or any of its windows lives; the
 * job ends when its fd and its last window are gone.  The fd is O_CLOEXEC.
 * Fails with EDQUOT beyond the max_jobs_per_user module parameter.
 */
struct percs_job_create {
	__u32 size;
	__u32 flags;
	__u32 fd;
	__u32 job_key;
};
#define PERCS_IOC_JOB_CREATE	_IO(PERCS_IOCTL_TYPE, 0x03)

/**
 * struct percs_job_query - PERCS_IOC_JOB_QUERY on a job fd
 * @size: sizeof(struct percs_job_query)
 * @flags: must be zero
 * @job_key: out: the job's key
 * @windows: out: windows of the job now reserved
 * @uid: out: the creator's euid (in the caller's user namespace)
 * @reserved: zero
 */
struct percs_job_query {
	__u32 size;
	__u32 flags;
	__u32 job_key;
	__u32 windows;
	__u32 uid;
	__u32 reserved;
};
#define PERCS_IOC_JOB_QUERY	_IO(PERCS_IOCTL_TYPE, 0x04)

/*
 * PERCS_IOC_KICK on a window fd: the doorbell's fast path.  The argument is
 * not a pointer but a PERCS_KICK_F_* mask (no copy-in on the hot path, as
 * io_uring_enter's flags).  Runs the engine for the window in the caller's
 * context (kick mode) or wakes the HFI's polling thread (poll mode).
 * Returns the number of packets the call moved, or -errno.
 */
#define PERCS_KICK_F_SEND	(1U << 0) /* process the send FIFO */
#define PERCS_KICK_F_IMM	(1U << 1) /* process the immediate slots */
#define PERCS_KICK_F_CREDIT	(1U << 2) /* credits returned: retry senders */
#define PERCS_KICK_F_ALL	(PERCS_KICK_F_SEND | PERCS_KICK_F_IMM | \
				 PERCS_KICK_F_CREDIT)
#define PERCS_IOC_KICK		_IO(PERCS_IOCTL_TYPE, 0x10)

/*
 * The doorbell without an ioctl: fsync(2) and fdatasync(2) on a window fd
 * are an entry point of this ABI, the same as PERCS_IOC_KICK with the
 * flags PERCS_KICK_FSYNC ("flush what I composed to the device"): in kick
 * mode the engine runs for the window in the caller's context, in poll
 * mode the HFI's polling engine is woken.  They answer 0, or -1 with the
 * errno PERCS_IOC_KICK would give (EINVAL: a trigger beyond what the FIFO
 * holds; EINTR: a fatal signal before anything moved), never a packet
 * count; fdatasync(2) and fsync(2) are the same.  They skip the ioctl
 * path's security hooks, which double the cost of the system call;
 * libpercs rings them after composing.  Any other fd of percs (an HFI or
 * job fd) answers EINVAL, the VFS's answer for a file without fsync.
 */
#define PERCS_KICK_FSYNC	(PERCS_KICK_F_SEND | PERCS_KICK_F_IMM)

/*
 * Memory registration (the NMMU).  A window registers a range of its
 * process's address space; RDMA and atomic packets name it by the window
 * and the handle, plus an effective address inside the range, as on the
 * hub.  The pages are pinned for as long as the registration exists and
 * count against RLIMIT_MEMLOCK.  Documentation/uapi.rst gives every errno.
 */

/* percs_mr_register.access: what the registration allows */
#define PERCS_ACCESS_LOCAL_WRITE (1U << 0) /* its window's RDMA reads land in it */
#define PERCS_ACCESS_REMOTE_READ (1U << 1) /* other windows read it */
#define PERCS_ACCESS_REMOTE_WRITE (1U << 2) /* other windows write it */
#define PERCS_ACCESS_REMOTE_ATOMIC (1U << 3) /* target of atomic updates */
#define PERCS_ACCESS_ALL	(PERCS_ACCESS_LOCAL_WRITE |		\
				 PERCS_ACCESS_REMOTE_READ |		\
				 PERCS_ACCESS_REMOTE_WRITE |		\
				 PERCS_ACCESS_REMOTE_ATOMIC)

/* percs_mr_register.flags */
#define PERCS_MR_F_INVALIDATE	(1U << 0) /* end it when the range's mapping changes */

/* The largest registration, in bytes. */
#define PERCS_MR_MAX_LENGTH	((__u64)1 << 30)

/**
 * struct percs_mr_register - PERCS_IOC_MR_REGISTER on a window fd
 * @size: sizeof(struct percs_mr_register)
 * @flags: 0 or %PERCS_MR_F_INVALIDATE
 * @access: PERCS_ACCESS_*; 0 registers the range as a local source only
 *	(the initiator side of an RDMA write)
 * @handle: must be zero; out: the registration's handle, non-zero.  The
 *	window's next 65535 registrations get other handles, so a stale
 *	handle finds nothing (ENOENT) rather than someone else's memory
 * @addr: first byte of the range in the caller's address space; any
 *	alignment (the pages covering the range are pinned)
 * @length: bytes, 1 .. %PERCS_MR_MAX_LENGTH
 *
 * Pins the pages covering [@addr, @addr + @length) and charges them to
 * the caller's RLIMIT_MEMLOCK, unless it has CAP_IPC_LOCK.  The pages
 * pinned are the process's own at that moment: a private mapping is pinned
 * for writing even without a write right (copy-on-write is broken now, not
 * by the process's next write, so untouched memory may be registered and
 * written later); a write right (LOCAL_WRITE, REMOTE_WRITE or
 * REMOTE_ATOMIC) needs a writable mapping, and without one a readable
 * one.  The registration belongs to the window: it lasts until
 * PERCS_IOC_MR_DEREGISTER or the window's release, whichever comes first,
 * whoever holds the window fd; unmapping the range, or MADV_DONTNEED on
 * it, does not end it (the pages stay pinned, and what the HFI reads or
 * writes there is no longer what the process sees at that address).
 *
 * With %PERCS_MR_F_INVALIDATE it does: when the registering process's
 * mapping of any page of the range changes (munmap, mremap, a new mapping
 * over it, MADV_DONTNEED, page migration, the process's exit; not
 * mprotect or fork), the kernel ends the registration as a deregistration
 * would (transfers naming the handle fail with ENOENT, the pages are
 * unpinned and uncharged when no transfer in flight uses them) and
 * reports the handle in the status page (&percs_status.mr_invalidated).
 * The kernel may also end one whose pages did not change (a huge page
 * split, a failed migration): a registration cache re-registers then.
 * Deregistering an ended handle fails with ENOENT.
 */
struct percs_mr_register {
	__u32 size;
	__u32 flags;
	__u32 access;
	__u32 handle;
	__u64 addr;
	__u64 length;
};
#define PERCS_IOC_MR_REGISTER	_IO(PERCS_IOCTL_TYPE, 0x11)

/**
 * struct percs_mr_deregister - PERCS_IOC_MR_DEREGISTER on a window fd
 * @size: sizeof(struct percs_mr_deregister)
 * @flags: must be zero
 * @handle: a handle PERCS_IOC_MR_REGISTER returned on this window
 * @reserved: must be zero
 *
 * Removes the handle at once: no packet can name it from then on.  The
 * pages are unpinned and uncharged as soon as no transfer in flight uses
 * them any more.
 */
struct percs_mr_deregister {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};
#define PERCS_IOC_MR_DEREGISTER	_IO(PERCS_IOCTL_TYPE, 0x12)

/*
 * CAU trees (the Collective Acceleration Unit, one per hub).  A tree joins
 * one window on each of its hubs; every hub's CAU has a table of
 * cau_trees entries (module parameter, 64 by default), one per tree that
 * passes through it.  A member creates the tree naming every member and
 * its parent; the others join it from their own window fds; contributions
 * are combined once every member has joined.  The tree ends with
 * PERCS_IOC_CAU_DESTROY from any member or when any member window is
 * released: every member then gets a completion entry (kind
 * %PERCS_PKT_COLL, user_data the tree id, res -ECONNRESET) and its
 * operations in progress end with that status.
 */
#define PERCS_CAU_MAX_MEMBERS	1024	/* one per hub at most */
#define PERCS_CAU_MAX_CHILDREN	64	/* children of one member (its CAU has one more input: its window) */
#define PERCS_CAU_ROOT		0xffffffffU /* percs_cau_member.parent of the root */
/* Operations of one member in flight on one tree (not finished at its node). */
#define PERCS_CAU_MAX_INFLIGHT	16

/**
 * struct percs_cau_member - one member of a tree
 * @win: its window
 * @parent: index of its parent in the member array, %PERCS_CAU_ROOT for
 *	the root (exactly one)
 * @reserved: must be zero
 */
struct percs_cau_member {
	struct percs_addr win;
	__u32 parent;
	__u32 reserved;
};

/* percs_cau_create.flags */
#define PERCS_CAU_F_ORDERED	(1U << 0) /* combine in member order: bit-identical floats */
#define PERCS_CAU_F_ALL		PERCS_CAU_F_ORDERED

/**
 * struct percs_cau_create - PERCS_IOC_CAU_CREATE on a member's window fd
 * @size: sizeof(struct percs_cau_create)
 * @flags: PERCS_CAU_F_*
 * @nr_members: 1 .. %PERCS_CAU_MAX_MEMBERS
 * @tree: must be zero; out: the tree's id, non-zero
 * @members: user pointer to @nr_members &struct percs_cau_member; the
 *	calling window must be one of them (it is joined at once)
 *
 * Checks every member before anything is set up: a window on each of
 * distinct hubs, reserved, with the caller's job key; one root; every
 * parent index valid and no cycle; a free entry in every member hub's
 * CAU.  Documentation/uapi.rst gives the errno of each failure.
 */
struct percs_cau_create {
	__u32 size;
	__u32 flags;
	__u32 nr_members;
	__u32 tree;
	__aligned_u64 members;
};
#define PERCS_IOC_CAU_CREATE	_IO(PERCS_IOCTL_TYPE, 0x13)

/**
 * struct percs_cau_tree_op - PERCS_IOC_CAU_JOIN and PERCS_IOC_CAU_DESTROY
 * @size: sizeof(struct percs_cau_tree_op)
 * @flags: must be zero
 * @tree: the tree id
 * @reserved: must be zero
 *
 * JOIN: the calling window is the tree's member on its hub and takes part
 * from now on.  DESTROY: the caller is a member; the tree ends for all.
 */
struct percs_cau_tree_op {
	__u32 size;
	__u32 flags;
	__u32 tree;
	__u32 reserved;
};
#define PERCS_IOC_CAU_JOIN	_IO(PERCS_IOCTL_TYPE, 0x14)
#define PERCS_IOC_CAU_DESTROY	_IO(PERCS_IOCTL_TYPE, 0x15)

#endif /* _UAPI_LINUX_PERCS_H */
