/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-msg internals: wire format, endpoint, requests.
 * Internal names start with pm_.
 */
#ifndef LIBPERCS_MSG_INTERNAL_H
#define LIBPERCS_MSG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "percs_msg.h"

/* FIFO tag of every packet of the messaging layer ("MSG"). */
#define PM_PKT_TAG	0x4d534700U

/* Packet types (struct pm_hdr.type). */
enum pm_type {
	PM_EAGER = 1,	/* ordered: the data follows the header */
	PM_RTS,		/* ordered: rendezvous request, struct pm_rts follows */
	PM_FIN,		/* rendezvous over (pm_hdr.status: how): buffer free */
	PM_CREDIT,	/* eager credit returned: @len bytes */
};

/**
 * struct pm_hdr - first bytes of every packet's payload
 * @type: enum pm_type
 * @reserved: zero
 * @src: sending rank
 * @seq: per (sender, receiver) sequence number of ordered packets
 * @tag: the message's tag
 * @ctx: the message's context
 * @status: PM_FIN: 0 when the receiver read the data (or took a
 *	zero-length or truncated part of it), else the positive errno its
 *	read failed with or could not start with; zero in other packets
 * @len: the message's length (PM_CREDIT: bytes of credit)
 * @cookie: PM_RTS: the sender's request id, echoed in PM_FIN
 */
struct pm_hdr {
	uint8_t type;
	uint8_t reserved[3];
	uint32_t src;
	uint32_t seq;
	int32_t tag;
	uint32_t ctx;
	uint32_t status;
	uint64_t len;
	uint64_t cookie;
};

/** struct pm_rts - the sender's registered buffer, after a PM_RTS header */
struct pm_rts {
	uint32_t handle;
	uint32_t reserved;
	uint64_t addr;
};

/* Bytes of data an immediate send carries beside the header. */
#define PM_IMM_DATA	(PERCS_IMM_PAYLOAD - sizeof(struct pm_hdr))
/* Bytes of data a FIFO packet carries beside the header. */
#define PM_FIFO_DATA	(PERCS_MAX_PAYLOAD - sizeof(struct pm_hdr))
/* What an unexpected eager message costs its receiver beyond its data. */
#define PM_UNEXP_COST(len)	((len) + 64)
/* Waiting: spin this long, then yield the CPU until PM_YIELD_NS, then sleep. */
#define PM_SPIN_NS	200000
#define PM_YIELD_NS	5000000
/*
 * percs_msg_recv_spin(): looks at the receive FIFO's head between two
 * progress rounds (a look costs about what the raw ping-pong's does, a
 * round about five looks: at 64 a packet rarely lands during a round,
 * which would take it the slower way, through the unexpected list).
 */
#define PM_SPIN_PEEKS	64
/* How long closing waits for freed requests and queued packets to finish. */
#define PM_CLOSE_NS	30000000000ULL
/* Freed requests an endpoint keeps for reuse (no malloc per message). */
#define PM_REQ_CACHE	64
/* RDMA reads in flight per endpoint (they need CQ entries). */
#define PM_MAX_READS	64

/* Intrusive doubly linked list. */
struct pm_link {
	struct pm_link *prev, *next;
};

static inline void pm_list_init(struct pm_link *h)
{
	h->prev = h->next = h;
}

static inline bool pm_list_empty(const struct pm_link *h)
{
	return h->next == h;
}

static inline void pm_list_add_tail(struct pm_link *h, struct pm_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void pm_list_del(struct pm_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

#define pm_container(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/**
 * struct pm_inmsg - an arrived ordered packet not matched yet
 * @link: in the peer's out-of-order list or the endpoint's unexpected list
 * @hdr: its header
 * @rts: PM_RTS: the sender's buffer
 * @data: PM_EAGER: @hdr.len bytes
 */
struct pm_inmsg {
	struct pm_link link;
	struct pm_hdr hdr;
	struct pm_rts rts;
	unsigned char data[];
};

/**
 * struct pm_peer - what an endpoint keeps per peer it has talked to
 * (allocated on first use, so memory grows with the peers used)
 * @send_seq: sequence number of the next ordered packet to the peer
 * @recv_seq: sequence number of the next ordered packet expected from it
 * @credit: bytes this endpoint may still send eagerly to the peer
 * @owed: eager bytes of the peer's consumed here and not yet given back
 * @ooo: packets from the peer that came ahead of @recv_seq, by seq
 */
struct pm_peer {
	uint32_t send_seq;
	uint32_t recv_seq;
	uint64_t credit;
	uint64_t owed;
	struct pm_link ooo;
};

enum pm_req_kind { PM_REQ_SEND = 1, PM_REQ_RECV };

enum pm_req_state {
	PM_ST_POSTED = 1,	/* recv: in the posted list; send: RTS out */
	PM_ST_QUEUED,		/* recv: matched an RTS, waits for a read slot */
	PM_ST_READING,		/* recv: RDMA read in flight */
	PM_ST_DONE,
};

/**
 * struct percs_msg_req - a send or receive in progress
 * @link: posted receives, queued reads, or rendezvous sends
 * @m: its endpoint
 * @kind: enum pm_req_kind
 * @state: enum pm_req_state
 * @freed: the owner freed it before completion: free it when done
 * @buf: user buffer
 * @len: send: bytes; recv: capacity
 * @peer: send: destination; recv: source or PERCS_MSG_ANY_SOURCE
 * @tag: tag or PERCS_MSG_ANY_TAG
 * @ctx: context
 * @id: rendezvous send: the cookie the receiver echoes
 * @mr: registration of @buf (0: none)
 * @rts: recv matched by an RTS: the sender's header and buffer
 * @rts_buf: recv matched by an RTS: the sender's buffer
 * @status: result
 */
struct percs_msg_req {
	struct pm_link link;
	struct percs_msg *m;
	uint8_t kind;
	uint8_t state;
	bool freed;
	void *buf;
	size_t len;
	int peer;
	int tag;
	uint32_t ctx;
	uint64_t id;
	uint32_t mr;
	struct pm_hdr rts;
	struct pm_rts rts_buf;
	struct percs_msg_status status;
};

/** struct pm_backlog - a packet waiting for room in the send FIFO */
struct pm_backlog {
	struct pm_link link;
	unsigned int dst;
	size_t len;
	unsigned char pkt[];
};

/**
 * struct percs_msg - an endpoint
 * @w: the window
 * @rank: this rank
 * @size: ranks
 * @addrs: every rank's window address
 * @peers: per-peer state, NULL until first used
 * @eager_max: largest eager message
 * @unexpected_max: the unexpected-buffer bound
 * @credit_init: each peer's initial credit: @unexpected_max / (@size - 1)
 * @posted: posted receives in post order
 * @unexpected: matched-order arrivals no receive was posted for
 * @rndv_sends: rendezvous sends waiting for their FIN
 * @queued_reads: receives matched by an RTS waiting for a read slot
 * @reading: receives whose RDMA read is in flight
 * @backlog: packets waiting for room in the send FIFO, in order
 * @reads: RDMA reads in flight (entries of @reading)
 * @backlog_len: entries of @backlog
 * @untriggered: packets composed in the send FIFO and not triggered yet
 * @pending: requests not done
 * @orphans: of those, the ones their owner freed (close waits for them;
 *	it refuses while others are pending)
 * @next_id: next rendezvous cookie
 * @error: a fatal endpoint error (a completion error), 0 if none
 * @free_reqs: freed requests kept for reuse (a list through link.next)
 * @nr_free_reqs: their number, at most PM_REQ_CACHE
 * @idle_rounds: consecutive percs_msg_idle() calls that found nothing
 * @idle_since: when the first of them came (ns, CLOCK_MONOTONIC)
 * @failed: per rank, 1 once declared failed (NULL until the first)
 * @nr_failed: ranks declared failed
 * @first_failed: the first of them
 * @watch: asks whoever knows of dead ranks (job.c: the launcher's socket)
 *	and declares them failed; NULL outside a job
 * @watch_arg: its argument
 * @watch_tick: progress calls (failure.c: when to look at the clock)
 * @watch_last: when @watch last ran (ns, CLOCK_MONOTONIC)
 * @cnt: counters
 */
struct percs_msg {
	struct percs_window *w;
	unsigned int rank;
	unsigned int size;
	struct percs_addr *addrs;
	struct pm_peer **peers;
	size_t eager_max;
	size_t unexpected_max;
	uint64_t credit_init;
	struct pm_link posted;
	struct pm_link unexpected;
	struct pm_link rndv_sends;
	struct pm_link queued_reads;
	struct pm_link reading;
	struct pm_link backlog;
	unsigned int reads;
	unsigned int backlog_len;
	unsigned int untriggered;
	unsigned long pending;
	unsigned long orphans;
	uint64_t next_id;
	int error;
	struct percs_msg_req *free_reqs;
	unsigned int nr_free_reqs;
	unsigned int idle_rounds;
	uint64_t idle_since;
	uint8_t *failed;
	unsigned int nr_failed;
	unsigned int first_failed;
	int (*watch)(void *arg, int timeout_ms);
	void *watch_arg;
	unsigned int watch_tick;
	uint64_t watch_last;
	struct percs_msg_counters cnt;
	struct percs_mr_cache *rcache;
};

/*
 * rcache.c: the rendezvous's registrations, through the endpoint's
 * registration cache (NULL: none, each message registers).
 */
int pm_rcache_open(struct percs_msg *m);
int pm_mr_get(struct percs_msg *m, void *buf, size_t len, uint32_t access,
	      uint32_t *handle);
void pm_mr_put(struct percs_msg *m, uint32_t handle);

/* endpoint.c */
/* CLOCK_MONOTONIC in ns. */
uint64_t pm_now_ns(void);
struct pm_peer *pm_peer(struct percs_msg *m, unsigned int rank);
/* A zeroed request (from the endpoint's cache of freed ones), or NULL. */
struct percs_msg_req *pm_req_get(struct percs_msg *m);
void pm_req_put(struct percs_msg *m, struct percs_msg_req *r);
void pm_req_done(struct percs_msg_req *r);

/*
 * wire.c: sending packets (FIFO, immediate, backlog).  PM_POST_MORE: more
 * packets follow, compose this one in the send FIFO and leave the trigger
 * (a system call in kick mode) to the next pm_trigger() (progress does
 * one), so a burst of sends costs one.
 */
#define PM_POST_MORE	(1U << 0)
int pm_post(struct percs_msg *m, unsigned int dst, const struct pm_hdr *h,
	    const void *ext, size_t ext_len, const void *data, size_t len,
	    unsigned int flags);
/*
 * pm_post() of a packet without extension when it can go at once as an
 * immediate send (nothing composed or in the backlog ahead of it, it fits
 * a cache line, a slot is free), in one call rather than three: a
 * blocking send's.  Return: 0 posted, 1 not (pm_post()'s to do), -errno.
 */
int pm_post_imm(struct percs_msg *m, unsigned int dst, const struct pm_hdr *h,
		const void *data, size_t len);
int pm_backlog_flush(struct percs_msg *m);
int pm_trigger(struct percs_msg *m);

/* recv.c: the receive side of the progress engine */
int pm_drain(struct percs_msg *m);
int pm_reads_start(struct percs_msg *m);
int pm_cq_drain(struct percs_msg *m);
void pm_give_credit(struct percs_msg *m, unsigned int src, uint64_t bytes);

/*
 * failure.c: peers declared failed.  pm_watch() runs the watch if it has
 * not run for a millisecond (PM_WATCH_IDLE), or at once, waiting up to
 * PM_WATCH_WAIT_MS for news (PM_WATCH_NOW: the kernel said a peer's window
 * is gone, the launcher is about to say which); pm_watch_progress(), on
 * every send and progress round, does PM_WATCH_IDLE's every
 * PM_WATCH_EVERY-th call only (a rank that never waits, a broadcast's root
 * sending eagerly, still hears of a death soon; the fast path pays a
 * counter).  pm_watch_set() installs the watch.
 */
enum pm_watch_when { PM_WATCH_IDLE, PM_WATCH_NOW };
#define PM_WATCH_WAIT_MS	200
#define PM_WATCH_EVERY		64
void pm_watch_set(struct percs_msg *m, int (*watch)(void *arg, int timeout_ms),
		  void *arg);
int pm_watch(struct percs_msg *m, enum pm_watch_when when);

/* Inline: on the path of every message (a call costs much under TCG). */
static inline int pm_watch_progress(struct percs_msg *m)
{
	if (!m->watch || ++m->watch_tick % PM_WATCH_EVERY)
		return 0;
	return pm_watch(m, PM_WATCH_IDLE);
}

/* @rank (or, for PERCS_MSG_ANY_SOURCE, any peer) was declared failed. */
static inline bool pm_peer_failed(const struct percs_msg *m, int rank)
{
	if (!m->nr_failed)
		return false;
	if (rank == PERCS_MSG_ANY_SOURCE)
		return true;
	return rank >= 0 && (unsigned int)rank < m->size && m->failed[rank];
}

/* send.c */
/*
 * A PM_FIN for the send @cookie: complete it, failed with -EREMOTEIO when
 * @status says the receiver could not read the data.
 */
void pm_fin_arrived(struct percs_msg *m, uint64_t cookie, uint32_t status);

#endif /* LIBPERCS_MSG_INTERNAL_H */
