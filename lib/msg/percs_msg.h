/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-msg: tagged point-to-point messaging between the ranks of a job,
 * on top of libpercs windows.
 *
 * One endpoint per rank, one window per endpoint.  Messages are matched by
 * (source rank, tag, context); source and tag may be wildcards.  Messages
 * between one pair on one context never overtake each other, although the
 * network may reorder packets: every message carries a per-pair sequence
 * number and the receiver matches them in that order.
 *
 * Protocols (Documentation/design.rst, "Messaging layer"):
 * - eager: a message of at most the eager threshold travels in one packet,
 *   an immediate send when it fits a cache line, else a FIFO packet; the
 *   receiver buffers it if no receive is posted yet;
 * - rendezvous: larger messages (and synchronous sends) send a
 *   request-to-send naming the sender's registered buffer; the receiver,
 *   once it has matched a receive, RDMA-reads the data straight into the
 *   user's buffer and answers with a FIN.
 * Flow control: each receiver buffers at most a fixed number of bytes of
 * unexpected eager messages, shared out as per-sender credits; a sender
 * without credit uses the rendezvous protocol, so the data waits at the
 * sender.  Nothing is ever dropped and the receive FIFO is always drained.
 *
 * Every function returns 0 (or a count) or a negative errno.  Nothing
 * happens behind the caller's back: progress is made inside the calls.
 * An endpoint is used by one thread at a time.
 */
#ifndef LIBPERCS_MSG_H
#define LIBPERCS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "percs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERCS_MSG_ANY_SOURCE	(-1)
#define PERCS_MSG_ANY_TAG	(-1)
#define PERCS_MSG_TAG_MAX	0x7fffffff

/* percs_msg_isend() flags */
#define PERCS_MSG_F_SYNC	(1U << 0) /* complete only once matched */
/*
 * More sends follow: the message may wait in the send FIFO, untriggered,
 * until the next call that makes progress (test, wait, probe, progress, a
 * send without the flag), so that a burst costs one trigger (one system
 * call in kick mode) instead of one each.  Such a message never goes as
 * an immediate send.
 */
#define PERCS_MSG_F_MORE	(1U << 1)

/*
 * Defaults of the tunables (see struct percs_msg_attr).  The eager default
 * is the most one packet carries (PERCS_MAX_PAYLOAD less the 40-byte
 * message header): measured, an eager message costs a fraction of a
 * rendezvous at every size a packet can carry (Documentation/design.rst).
 */
#define PERCS_MSG_DEF_EAGER		1976
#define PERCS_MSG_DEF_UNEXPECTED	(1U << 20)

struct percs_msg;
struct percs_msg_req;

/**
 * struct percs_msg_attr - tunables of an endpoint
 * @eager_max: largest message sent eagerly, bytes; 0 means
 *	PERCS_MSG_DEF_EAGER; at most percs_msg_eager_limit()
 * @unexpected_max: bytes of unexpected eager messages this endpoint keeps
 *	at most (shared out as credits among its peers); 0 means
 *	PERCS_MSG_DEF_UNEXPECTED
 */
struct percs_msg_attr {
	size_t eager_max;
	size_t unexpected_max;
};

/**
 * struct percs_msg_status - what a finished receive (or a probe) found
 * @source: sending rank
 * @tag: the message's tag
 * @len: bytes received (for a probe: the message's length)
 * @msg_len: the message's length as sent (> @len when truncated)
 * @error: 0, -EMSGSIZE when truncated, -ECANCELED when cancelled, or the
 *	transfer's -errno: for a rendezvous receive the errno its RDMA read
 *	failed or could not start with (-EFAULT: a buffer that cannot be
 *	registered for writing), for a rendezvous send -EREMOTEIO when the
 *	receiver could not read the data
 */
struct percs_msg_status {
	int source;
	int tag;
	size_t len;
	size_t msg_len;
	int error;
};

/** percs_msg_eager_limit() - the largest eager threshold accepted */
size_t percs_msg_eager_limit(void);

/**
 * percs_msg_open() - make an endpoint on a reserved window
 * @w: this rank's window (the endpoint takes it over: percs_msg_close()
 *	does not release it)
 * @rank: this rank, < @size
 * @size: ranks in the job
 * @peers: @size window addresses, indexed by rank (copied)
 * @attr: tunables, or NULL for the defaults
 * @out: the endpoint
 * Return: 0; -EINVAL for a NULL pointer, @rank >= @size, @peers[@rank]
 * not @w's address, @attr->eager_max above percs_msg_eager_limit(), or
 * PERCS_MSG_RCACHE or PERCS_MSG_RCACHE_MB not a number (the rendezvous's
 * registration cache, lib/msg/rcache.c); -ENOMEM.
 */
int percs_msg_open(struct percs_window *w, unsigned int rank,
		   unsigned int size, const struct percs_addr *peers,
		   const struct percs_msg_attr *attr, struct percs_msg **out);

/**
 * percs_msg_close() - finish freed requests and queued packets, free all
 * @m: the endpoint (may be NULL)
 *
 * Makes progress until every request freed before it completed is done
 * and every packet waiting for room has left (at most 30 s: the peers
 * must take part), then frees the endpoint.
 * Return: 0; -EBUSY when requests not freed are still pending (nothing
 * done); the endpoint's -errno or -ETIMEDOUT (the endpoint is freed).
 */
int percs_msg_close(struct percs_msg *m);

/** percs_msg_rank() - this endpoint's rank */
unsigned int percs_msg_rank(const struct percs_msg *m);
/** percs_msg_size() - ranks in the job */
unsigned int percs_msg_size(const struct percs_msg *m);
/** percs_msg_window() - the endpoint's window */
struct percs_window *percs_msg_window(const struct percs_msg *m);

/**
 * percs_msg_peer_addr() - a rank's window address
 * @m: the endpoint
 * @rank: a rank of the job, < percs_msg_size()
 * @out: its address (as given to percs_msg_open())
 *
 * Tells which ranks share a hub (the same @out->hub), e.g. to build a CAU
 * tree with one window per hub.
 * Return: 0; -EINVAL for a NULL pointer or @rank out of range.
 */
int percs_msg_peer_addr(const struct percs_msg *m, unsigned int rank,
			struct percs_addr *out);

/**
 * percs_msg_isend() - start sending a message
 * @m: the endpoint
 * @buf: the data (untouched until the request completes)
 * @len: bytes
 * @dst: destination rank
 * @tag: 0 .. PERCS_MSG_TAG_MAX
 * @ctx: context (communicator) id; only receives of the same @ctx match
 * @flags: PERCS_MSG_F_*
 * @req: the request (percs_msg_wait()/percs_msg_test(), then free it)
 * Return: 0; -EINVAL for a bad @dst, @tag, @flags or a NULL pointer;
 * -EMSGSIZE above PERCS_MR_MAX_LENGTH; -ENOMEM; the window's -errno.
 */
int percs_msg_isend(struct percs_msg *m, const void *buf, size_t len,
		    unsigned int dst, int tag, uint32_t ctx, unsigned int flags,
		    struct percs_msg_req **req);

/**
 * percs_msg_send_now() - send a message eagerly at once, without a request
 * @m: the endpoint
 * @buf: the data (free for reuse when it returns 1)
 * @len: bytes
 * @dst: destination rank
 * @tag: 0 .. PERCS_MSG_TAG_MAX
 * @ctx: context id
 *
 * A blocking send's fast path: the message goes as one eager packet when
 * it fits one and the endpoint holds credit for it at @dst (and has
 * talked to @dst before), exactly as percs_msg_isend() would send it.
 * Otherwise nothing is sent and the caller uses percs_msg_isend(), which
 * also reports any error the endpoint or @dst had before.
 * Return: 1 sent; 0 not sent (use percs_msg_isend()); -EINVAL for a bad
 * @dst or @tag or a NULL pointer; -ECONNRESET when @dst turned out to
 * have failed; the window's -errno.
 */
int percs_msg_send_now(struct percs_msg *m, const void *buf, size_t len,
		       unsigned int dst, int tag, uint32_t ctx);

/**
 * percs_msg_recv_spin() - wait a little for a message and receive it in
 *	place, without a request
 * @m: the endpoint
 * @buf: where the data goes
 * @cap: bytes available at @buf
 * @src: source rank or PERCS_MSG_ANY_SOURCE
 * @tag: tag or PERCS_MSG_ANY_TAG
 * @ctx: context id
 * @st: the status when it returns 1
 *
 * A blocking receive's fast path.  While no receive is posted, it takes
 * the message a receive posted now would match at once, when that is an
 * eager message of at most @cap bytes: from the buffered (unexpected)
 * ones, else from the receive FIFO, which it watches for up to the spin
 * phase of a wait (200 us) with a progress round every 16 looks, copying
 * the packet at the FIFO's head straight into @buf when it is the next
 * one in order from its sender.  Anything else (a posted receive, a
 * matching rendezvous or too long a message, a failed peer, an endpoint
 * error, the time up) ends it with nothing received: the caller posts
 * the receive with percs_msg_irecv() and waits.
 * Return: 1 received; 0 not (post a receive); -EINVAL for a bad @src or
 * @tag or a NULL pointer.
 */
int percs_msg_recv_spin(struct percs_msg *m, void *buf, size_t cap, int src,
			int tag, uint32_t ctx, struct percs_msg_status *st);

/**
 * percs_msg_irecv() - post a receive
 * @m: the endpoint
 * @buf: where the data goes
 * @cap: bytes available at @buf (a longer message is truncated to it and
 *	the status says -EMSGSIZE)
 * @src: source rank or PERCS_MSG_ANY_SOURCE
 * @tag: tag or PERCS_MSG_ANY_TAG
 * @ctx: context id
 * @req: the request
 * Return: 0; -EINVAL for a bad @src or @tag or a NULL pointer; -ENOMEM.
 */
int percs_msg_irecv(struct percs_msg *m, void *buf, size_t cap, int src,
		    int tag, uint32_t ctx, struct percs_msg_req **req);

/**
 * percs_msg_test() - make progress and check a request
 * @req: the request
 * @st: NULL, or the status once done (receives)
 * Return: 1 done, 0 not yet, or the endpoint's -errno.
 */
int percs_msg_test(struct percs_msg_req *req, struct percs_msg_status *st);

/**
 * percs_msg_wait() - make progress until a request is done
 * @req: the request
 * @st: NULL, or its status
 * Return: 0, or the -errno that stopped the progress (a peer's window
 * gone: -ECONNREFUSED, ...).
 */
int percs_msg_wait(struct percs_msg_req *req, struct percs_msg_status *st);

/**
 * percs_msg_req_free() - free a request
 * @req: the request (may be NULL)
 *
 * A request not done yet is freed when it completes (its buffer must stay
 * valid until then; percs_msg_close() waits for it).
 */
void percs_msg_req_free(struct percs_msg_req *req);

/**
 * percs_msg_cancel() - cancel a posted receive
 * @req: the request
 * Return: 1 cancelled (it is done, status -ECANCELED), 0 too late (it
 * matched a message, or it is a send: sends are not cancelled).
 */
int percs_msg_cancel(struct percs_msg_req *req);

/**
 * percs_msg_iprobe() - is a matching message waiting to be received?
 * @m: the endpoint
 * @src: source rank or PERCS_MSG_ANY_SOURCE
 * @tag: tag or PERCS_MSG_ANY_TAG
 * @ctx: context id
 * @st: NULL, or the message's source, tag and length
 * Return: 1 yes, 0 no; -EINVAL for a bad @src or @tag; the endpoint's
 * -errno.
 */
int percs_msg_iprobe(struct percs_msg *m, int src, int tag, uint32_t ctx,
		     struct percs_msg_status *st);

/**
 * percs_msg_progress() - advance every pending request once (never sleeps)
 * @m: the endpoint
 * Return: 0 or the endpoint's -errno.
 */
int percs_msg_progress(struct percs_msg *m);

/**
 * percs_msg_idle() - wait a little for something to arrive
 * @m: the endpoint
 *
 * For loops around percs_msg_progress(): spins for 200 us, then yields
 * the CPU (kicking the engine) until 5 ms, then sleeps up to 1 ms at a
 * time in percs_wait(); an arrival starts the spinning again.
 */
void percs_msg_idle(struct percs_msg *m);

/**
 * struct percs_msg_counters - what an endpoint has done (tests, benchmarks)
 * @eager_sent: messages sent eagerly
 * @imm_sent: of those, as immediate sends
 * @rndv_sent: messages sent by rendezvous
 * @no_credit: messages sent by rendezvous for want of eager credit
 * @unexpected_now: bytes of unexpected eager messages buffered now
 * @unexpected_peak: the most ever buffered
 * @out_of_order: packets that arrived ahead of their turn
 * @backlog_peak: most packets waiting for room in the send FIFO
 */
struct percs_msg_counters {
	uint64_t eager_sent;
	uint64_t imm_sent;
	uint64_t rndv_sent;
	uint64_t no_credit;
	uint64_t unexpected_now;
	uint64_t unexpected_peak;
	uint64_t out_of_order;
	uint64_t backlog_peak;
};

/** percs_msg_counters() - copy the endpoint's counters */
void percs_msg_counters(const struct percs_msg *m,
			struct percs_msg_counters *c);

/**
 * percs_msg_fail_peer() - declare a peer failed (dead, or gone for good)
 * @m: the endpoint
 * @rank: the peer (not this endpoint's own rank)
 *
 * Every pending transfer with @rank, and every posted receive from any
 * source, completes with status error -ECONNRESET; later sends to @rank
 * fail with -ECONNRESET, later receives from it (or from any source)
 * complete at once with that error unless a message it sent before is
 * already here; packets still owed to it are dropped.  A job's endpoint
 * is told by percs-run when a rank dies (percs_msg_job_join()).
 * Return: 0 (also when already failed); -EINVAL for a bad @rank; -ENOMEM.
 */
int percs_msg_fail_peer(struct percs_msg *m, unsigned int rank);

/**
 * percs_msg_peer_failed() - was @rank declared failed?
 * @m: the endpoint
 * @rank: the peer
 * Return: true once percs_msg_fail_peer() was called for @rank.
 */
bool percs_msg_peer_failed(const struct percs_msg *m, unsigned int rank);

/**
 * percs_msg_failures() - how many peers were declared failed
 * @m: the endpoint
 * @first: if not NULL, the first failed rank, or -1 when none
 * Return: the number of failed peers.
 */
unsigned int percs_msg_failures(const struct percs_msg *m, int *first);

/*
 * Joining a job started by percs-run(1).  percs_msg_job_join() reads the
 * environment the launcher set (PERCS_RANK, PERCS_SIZE, PERCS_HUB,
 * PERCS_UNIT, PERCS_RUN_FD, PERCS_JOB_FD), opens the HFI, reserves a
 * window in the launcher's job (libpercs's default job: PERCS_JOB_FD), sends its address to the launcher and receives every
 * rank's, then opens the endpoint with the tunables PERCS_MSG_EAGER and
 * PERCS_MSG_UNEXPECTED (bytes) from the environment.
 */

struct percs_msg_job;

/**
 * percs_msg_job_join() - join the job this process was started in
 * @out: the job (its endpoint: percs_msg_job_endpoint())
 * Return: 0; -ENOENT when not started by percs-run (no PERCS_RUN_FD);
 * -EINVAL for a malformed variable; -EPROTO when the launcher's answer is
 * malformed; the -errno of opening the HFI, reserving the window or
 * reading the launcher's socket.
 */
int percs_msg_job_join(struct percs_msg_job **out);

/** percs_msg_job_endpoint() - the job's endpoint */
struct percs_msg *percs_msg_job_endpoint(const struct percs_msg_job *job);

/**
 * percs_msg_job_leave() - finish: wait until every rank has left, free all
 * @job: the job (may be NULL)
 *
 * With PERCS_MSG_STATS set in the environment, first prints the
 * endpoint's counters (struct percs_msg_counters) on one stderr line.
 * Tells the launcher this rank is done and waits for every other rank to
 * say so too (their windows stay valid until then), then closes the
 * endpoint, releases the window and closes the HFI.
 * Return: 0, or the first -errno met (everything is freed anyway).
 */
int percs_msg_job_leave(struct percs_msg_job *job);

/**
 * percs_msg_job_abort() - ask the launcher to end the job
 * @job: the job
 * @code: the exit status the launcher reports
 *
 * The launcher kills every rank and exits with @code.  Returns only if
 * the launcher could not be told.
 */
void percs_msg_job_abort(struct percs_msg_job *job, int code);

#ifdef __cplusplus
}
#endif

#endif /* LIBPERCS_MSG_H */
