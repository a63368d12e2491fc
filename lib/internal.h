/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs internals: the window object and its rings.
 *
 * The ring code (fifo.c, imm.c, cq.c) only touches the memory described by
 * struct lp_layout and calls the system through w->kick, so the unit tests
 * can drive it with plain malloc'ed regions and a fake HFI behind the kick
 * hook.  Nothing here is exported from the shared library (the version
 * script exports percs_* only; internal names start with lp_).
 */
#ifndef LIBPERCS_INTERNAL_H
#define LIBPERCS_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "percs.h"

#define LP_HIDDEN __attribute__((visibility("hidden")))

#define lp_likely(x)	__builtin_expect(!!(x), 1)
#define lp_unlikely(x)	__builtin_expect(!!(x), 0)

/* Shared-memory accessors, liburing style. */
#define lp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define lp_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define lp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define lp_smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

/* One round of a spin-wait: lets a sibling hyperthread run, rereads memory. */
static inline void lp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" : : : "memory");
#else
	__asm__ __volatile__("" : : : "memory");
#endif
}

/* Units (128 B) a packet with @len payload bytes occupies in a FIFO. */
static inline uint32_t lp_pkt_units(size_t len)
{
	return (uint32_t)((PERCS_PKT_HDR_SIZE + len + PERCS_FLIT_SIZE - 1) /
			  PERCS_FLIT_SIZE);
}

/* The length field of a pad entry covering @units units. */
static inline uint16_t lp_pad_length(uint32_t units)
{
	return (uint16_t)(units * PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE);
}

struct percs_hfi {
	int fd;
	unsigned int hub;
	unsigned int unit;
};

/**
 * struct lp_layout - where a window's regions are and how big they are
 * @send_fifo: send FIFO
 * @send_fifo_size: its bytes, a power of two, at least PERCS_FIFO_MIN_SIZE
 * @recv_fifo: receive FIFO
 * @recv_fifo_size: its bytes, same rules
 * @doorbell: doorbell page
 * @status: status page
 * @imm: immediate-send slots
 * @imm_slots: how many
 * @cq: completion queue
 * @cq_entries: its entries, a power of two
 * @flags: PERCS_WINDOW_F_*
 * @addr: the window's network address
 * @clock: the global clock page, or NULL when the kernel offers none
 *
 * Filled from the reserve ioctl and the mmaps in percs_window_reserve(),
 * or from malloc'ed memory by the unit tests.
 */
struct lp_layout {
	void *send_fifo;
	uint32_t send_fifo_size;
	const void *recv_fifo;
	uint32_t recv_fifo_size;
	struct percs_doorbell *doorbell;
	const struct percs_status *status;
	void *imm;
	uint32_t imm_slots;
	const struct percs_cqe *cq;
	uint32_t cq_entries;
	uint32_t flags;
	struct percs_addr addr;
	const struct percs_clock *clock;
};

/* Send FIFO: we produce at tail, the HFI consumes up to status->send_head. */
struct lp_sq {
	uint8_t *base;
	uint64_t tail;		/* units composed */
	uint64_t head;		/* last send_head seen */
	uint32_t units;
	uint32_t mask;
};

/* Receive FIFO: the HFI produces up to status->recv_tail, we consume. */
struct lp_rq {
	const uint8_t *base;
	uint64_t head;		/* units consumed locally */
	uint64_t tail;		/* last recv_tail seen */
	uint64_t credited;	/* last recv_head stored in the doorbell */
	uint32_t units;
	uint32_t mask;
	uint32_t batch;		/* credit once this many units are consumed */
	uint32_t peeked;	/* units of the packet peek returned, or 0 */
};

/* Immediate-send slots: we fill at tail, the HFI frees up to imm_head. */
struct lp_imm {
	uint8_t *next;		/* slot the next ICSWX writes */
	uint8_t *base;
	uint8_t *end;
	uint64_t tail;
	uint64_t head;		/* last imm_head seen */
	uint32_t slots;
};

/*
 * Completion queue: the HFI posts up to status->cq_tail, we consume.  The
 * stash keeps, in order, the entries the library took from the ring while
 * it waited for its own atomics (percs_cq_poll() returns them first).
 */
struct lp_cq {
	const struct percs_cqe *ring;
	uint64_t head;
	uint32_t entries;
	uint32_t mask;
	struct percs_cqe *stash;	/* ring of stash_cap entries, or NULL */
	uint32_t stash_head;		/* oldest kept entry */
	uint32_t stash_count;
	uint32_t stash_cap;		/* a power of two, or 0 */
	uint32_t limit;			/* percs_cq_limit(), 0: none */
	uint32_t owed;			/* asked-for entries not yet returned */
	uint64_t overflows_seen;	/* status cq_overflows last reported */
};

/*
 * The PGAS atomics (pgas.c).  Every descriptor the library sends holds one
 * slot until its completion entry comes; the slot's index and a generation
 * are the low 32 bits of its user_data, PERCS_AMO_USER_DATA_TAG the high
 * ones.  A fetching descriptor's old value lands in the slot's 8 bytes of
 * the result area, a page registered with the window.
 */
#define LP_AMO_SLOTS		64	/* descriptors in flight, at most */
#define LP_AMO_IDX_BITS		6
#define LP_AMO_GEN_MASK		((1U << (32 - LP_AMO_IDX_BITS)) - 1)

/**
 * struct lp_amo_slot - one library descriptor in flight
 * @fetched: where the old value goes at completion, or NULL
 * @gen: the generation its user_data carries (stale entries are ignored)
 * @width: operand bytes
 * @block: a blocking call waits for it: completion sets @done and @res
 *	and the waiter frees the slot
 * @done: completed (blocking slots only)
 * @res: its status (blocking slots only)
 * @ovf: the window's cq_overflows when it was sent
 */
struct lp_amo_slot {
	void *fetched;
	uint32_t gen;
	uint8_t width;
	bool block;
	bool done;
	int res;
	uint64_t ovf;
};

/**
 * struct lp_amo - a window's PGAS atomic state (zero: nothing issued yet)
 * @slot: the descriptors in flight
 * @busy: bit i set while @slot[i] is in flight
 * @outstanding: popcount of @busy
 * @gen: generation of the last descriptor sent
 * @results: the result area (LP_AMO_SLOTS x 8 bytes), mapped and
 *	registered on the first fetching operation; NULL before
 * @results_len: its mapped bytes
 * @results_mr: its registration handle
 * @first_err: the first error of a non-blocking operation since the last
 *	percs_atomic_quiet()
 * @packing: PERCS_PACK_*
 * @pend: the packed descriptor being filled (@pend.count operations, 0:
 *	none); sent when full or when anything else comes
 * @lost_ms: how long a wait goes on after the CQ overflowed before it
 *	declares the operations sent before the overflow lost (-EOVERFLOW);
 *	0 is 5 s, longer than the kernel's retransmissions (about 2 s)
 */
struct lp_amo {
	struct lp_amo_slot slot[LP_AMO_SLOTS];
	uint64_t busy;
	unsigned int outstanding;
	uint32_t gen;
	uint64_t *results;
	size_t results_len;
	uint32_t results_mr;
	int first_err;
	unsigned int packing;
	struct percs_atomic_wr pend;
	unsigned int lost_ms;
};

/*
 * Where the clock reader gets its time: the TSC and CLOCK_MONOTONIC, or, in
 * the unit tests, fakes (so that a test can rewrite the page in the middle
 * of a read and feed chosen TSC values).
 */
struct lp_clock_hooks {
	uint64_t (*tsc)(void *ctx);
	int (*mono)(void *ctx, uint64_t *ns);
	void *ctx;
};

/*
 * Receive stash: packets the library took from the receive FIFO while it
 * waited for its own (collective results and messages), kept in order for
 * percs_recv() and percs_recv_peek(), which return them first.  Each entry
 * is the header followed by its payload, as in the FIFO.
 */
struct lp_rstash_ent {
	struct lp_rstash_ent *next;
	struct percs_pkt_hdr hdr;	/* hdr.length payload bytes follow */
};

struct lp_rstash {
	struct lp_rstash_ent *head;
	struct lp_rstash_ent *tail;
	uint32_t count;
	bool peeked;		/* percs_recv_peek() returned the head */
};

/* The global clock: the page (NULL: none) and, for tests, hooks. */
struct lp_clock {
	const struct percs_clock *page;
	const struct lp_clock_hooks *hooks;
};

#if defined(__x86_64__) || defined(__i386__)
#define LP_HAVE_TSC 1
/* The TSC, read in program order: after earlier loads, before later ones. */
static inline uint64_t lp_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
			     : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#else
#define LP_HAVE_TSC 0
static inline uint64_t lp_rdtsc(void)
{
	return 0;
}
#endif

/**
 * struct lp_auto - auto mode's view of the polling thread (auto.c)
 * @on: the window is in auto mode (PERCS_WINDOW_F_AUTO)
 * @tsc: @since and @bound count TSC cycles, else nanoseconds
 * @beat: the last &percs_status.poll_beat seen
 * @since: when @beat was first seen unchanged; 0: not yet
 * @bound: how long a beat may stand still before the thread counts as
 *	stopped (PERCS_AUTO_STALE_US, LP_AUTO_STALE_US by default)
 */
struct lp_auto {
	bool on;
	bool tsc;
	uint64_t beat;
	uint64_t since;
	uint64_t bound;
};

/**
 * struct percs_window - one reserved window
 * @db: doorbell page (ours to write)
 * @status: status page (the HFI's)
 * @kick: runs PERCS_IOC_KICK; the unit tests replace it with a fake HFI
 * @doorbell: the plain send/immediate doorbell (fdatasync(2) on the
 *	window, cheaper than the ioctl); the unit tests replace it too
 * @poll: polling engine (poll or auto mode): kick only on
 *	PERCS_STATUS_NEED_WAKEUP or, in auto mode, a beat that stopped
 * @au: auto mode's state
 * @wflags: the PERCS_WINDOW_F_* flags the window was reserved with
 * @fd: the window fd, -1 for a test window
 * @sq: send FIFO state
 * @rq: receive FIFO state
 * @imm: immediate-send slot state
 * @cq: completion queue state
 * @addr: network address
 * @kick_ctx: for the replacement kick
 * @clock: the global clock page (and the unit tests' time source)
 * @amo: the PGAS atomics' state
 * @rstash: received packets kept for the application (struct lp_rstash)
 * @coll: the collectives' state (coll.c), NULL until the first tree or
 *	group
 * @map: the mappings percs_window_release() undoes (empty for test windows)
 */
struct percs_window {
	struct percs_doorbell *db;
	const struct percs_status *status;
	int (*kick)(struct percs_window *w, unsigned int flags);
	int (*doorbell)(struct percs_window *w, unsigned int flags);
	bool poll;
	struct lp_auto au;
	uint32_t wflags;
	int fd;
	struct lp_sq sq;
	struct lp_rq rq;
	struct lp_imm imm;
	struct lp_cq cq;
	struct percs_addr addr;
	void *kick_ctx;
	struct lp_clock clock;
	struct lp_amo amo;
	struct lp_rstash rstash;
	struct lp_coll *coll;
	struct {
		void *addr;
		size_t len;
	} map[PERCS_REGION_MAX];
};

/* hfi.c */
LP_HIDDEN int lp_kick_ioctl(struct percs_window *w, unsigned int flags);
LP_HIDDEN int lp_doorbell_sync(struct percs_window *w, unsigned int flags);
LP_HIDDEN int lp_window_new(const struct lp_layout *l, int fd,
			    struct percs_window **out);

/* fifo.c */
LP_HIDDEN bool lp_recv_pending(struct percs_window *w);
LP_HIDDEN int lp_recv_drain(struct percs_window *w);
LP_HIDDEN void lp_rstash_release(struct percs_window *w);
LP_HIDDEN struct lp_rstash_ent *lp_rstash_take(struct percs_window *w,
		bool (*match)(const struct percs_pkt_hdr *h, void *arg),
		void *arg);

/* cq.c */
LP_HIDDEN bool lp_cq_pending(struct percs_window *w);
LP_HIDDEN bool lp_cq_ring_pending(struct percs_window *w);
LP_HIDDEN int lp_cq_drain(struct percs_window *w);

/* hfi.c: sleep in ppoll(2) until something arrives or @us pass */
LP_HIDDEN int lp_sleep_us(struct percs_window *w, unsigned int us);
LP_HIDDEN void lp_cq_release(struct percs_window *w);

/*
 * An operation that asks for a completion entry may be posted only while
 * fewer than the window's limit are owed (percs_cq_limit()); once posted
 * (@ret 0) it owes one more, until percs_cq_poll() returns its entry.
 */
static inline int lp_cq_room(const struct percs_window *w, bool asks)
{
	return lp_unlikely(asks && w->cq.limit && w->cq.owed >= w->cq.limit) ?
	       -ENOBUFS : 0;
}

static inline void lp_cq_owe(struct percs_window *w, bool asks, int ret)
{
	if (asks && !ret)
		w->cq.owed++;
}

/* Does a FIFO or immediate send with header flags @flags ask for one? */
static inline bool lp_pkt_asks(unsigned int flags)
{
	return flags & (PERCS_PKT_F_NOTIFY | PERCS_PKT_F_NOTIFY_REMOTE);
}

/*
 * fifo.c, descriptors (RDMA, atomics): room at the send FIFO's tail for
 * header @h (h->length payload bytes) - if the FIFO is full, publish,
 * kick, retry once - with *@payload where the caller writes the payload;
 * or the same with @len bytes from @buf, then the trigger.
 */
LP_HIDDEN int lp_desc_reserve(struct percs_window *w,
			      const struct percs_pkt_hdr *h, void **payload);
LP_HIDDEN int lp_desc_post(struct percs_window *w, const struct percs_pkt_hdr *h,
			   const void *buf, size_t len);

/*
 * atomic.c: compose @wr in the send FIFO and trigger, for the library's
 * own descriptors, well-formed by construction (percs_atomic_post()
 * checks the caller's)
 */
LP_HIDDEN int lp_atomic_post(struct percs_window *w,
			     const struct percs_atomic_wr *wr);

/* pgas.c */
LP_HIDDEN void lp_amo_complete(struct percs_window *w,
			       const struct percs_cqe *c);
LP_HIDDEN void lp_amo_release(struct percs_window *w);
LP_HIDDEN int lp_amo_flush(struct percs_window *w);

/* Is @c the completion of a descriptor the PGAS level sent? */
static inline bool lp_cqe_is_amo(const struct percs_cqe *c)
{
	return c->kind == PERCS_PKT_ATOMIC &&
	       (uint32_t)(c->user_data >> 32) == PERCS_AMO_USER_DATA_TAG;
}

/* ---- collectives (coll*.c, cau*.c) ------------------------------------------ */

#define LP_CAU_TREES	256	/* a window's library trees: tag index 1 .. 255 */
#define LP_SW_FRAG	1984	/* data bytes of one software message packet */
#define LP_SW_NONE	UINT32_MAX	/* no peer */

/* The tag of the library's descriptor for operation @seq of tree @idx. */
static inline uint32_t lp_cau_tag(unsigned int idx, uint64_t seq)
{
	return PERCS_CAU_TAG_HI << 24 | (uint32_t)idx << 16 |
	       (uint32_t)(seq & 0xffff);
}

static inline uint32_t lp_sw_tag(uint16_t ctx)
{
	return PERCS_SW_TAG_HI << 16 | ctx;
}

/*
 * The header of every software collective packet, before its data: the
 * group's collective number, the algorithm's round (the same on every
 * member), where the data goes in the message and the message's length.
 */
struct lp_sw_hdr {
	uint32_t opseq;
	uint16_t round;
	uint16_t reserved;
	uint32_t offset;
	uint32_t total;
};

enum lp_req_kind { LP_REQ_CAU, LP_REQ_SW };

/**
 * struct lp_cau_req - a CAU collective: chunks of PERCS_CAU_PAYLOAD bytes
 * @t: the tree
 * @qnext: next request in the tree's queue of those still posting
 * @src: the contribution, or NULL for zeros (a multicast's non-origin)
 * @dst: where results go, or NULL
 * @bytes: bytes at @src / @dst
 * @nchunks: CAU operations in all
 * @posted: operations posted
 * @resolved: operations whose result came (or that expect none)
 * @coll: PERCS_COLL_*
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @esize: element bytes
 * @want: result packets come to this member
 * @origin: a multicast's origin member (PERCS_COLL_MCAST)
 * @mc_base: a multicast received: its chunks are the origin's multicasts
 *	@mc_base + 1 .. @mc_base + @nchunks
 */
struct lp_cau_req {
	struct percs_cau_tree *t;
	struct percs_coll_req *qnext;
	const uint8_t *src;
	uint8_t *dst;
	size_t bytes;
	uint32_t nchunks;
	uint32_t posted;
	uint32_t resolved;
	uint8_t coll;
	uint8_t op;
	uint8_t type;
	uint8_t esize;
	bool want;
	uint32_t origin;
	uint64_t mc_base;
};

/* What a software receive does with the data. */
enum lp_sw_action {
	LP_SW_COPY,	/* store it */
	LP_SW_COMB_R,	/* buf = buf op data (the peer ranks higher) */
	LP_SW_COMB_L,	/* buf = data op buf (the peer ranks lower) */
};

/**
 * struct lp_sw_xfer - one message of a step, to or from one peer
 * @buf: the data (a send's is read when composed)
 * @len: its bytes
 * @done: bytes composed (send) or received (receive)
 * @peer: the peer's rank, LP_SW_NONE for no message
 * @action: enum lp_sw_action (receives)
 * @seen: a receive: a packet came (a 0-byte message has one)
 */
struct lp_sw_xfer {
	uint8_t *buf;
	size_t len;
	size_t done;
	uint32_t peer;
	uint8_t action;
	bool seen;
};

/* One round of an algorithm at one member: send first, then receive. */
struct lp_sw_step {
	uint16_t round;
	struct lp_sw_xfer send;
	struct lp_sw_xfer recv;
};

/**
 * struct lp_sw_req - a software collective: its schedule
 * @g: the group
 * @opseq: the group's number of this collective
 * @op: PERCS_CAU_OP_*
 * @type: PERCS_CAU_T_*
 * @sent: the current step's send is composed (its receive may be applied)
 * @cur: the current step
 * @nsteps: steps
 * @steps: the schedule
 * @tmp: scratch the request owns (freed when it finishes)
 */
struct lp_sw_req {
	struct percs_sw_group *g;
	uint32_t opseq;
	uint8_t op;
	uint8_t type;
	bool sent;
	uint32_t cur;
	uint32_t nsteps;
	struct lp_sw_step *steps;
	uint8_t *tmp;
};

/**
 * struct percs_coll_req - a collective in progress or finished
 * @w: the window
 * @prev: in the window's list of requests (struct lp_coll)
 * @next: see @prev
 * @kind: enum lp_req_kind
 * @done: finished: @status is final
 * @heap: allocated for a non-blocking call (a blocking call's is on its
 *	stack)
 * @status: 0 or the first error
 * @cau: LP_REQ_CAU
 * @sw: LP_REQ_SW
 */
struct percs_coll_req {
	struct percs_window *w;
	struct percs_coll_req *prev;
	struct percs_coll_req *next;
	uint8_t kind;
	bool done;
	bool heap;
	int status;
	union {
		struct lp_cau_req cau;
		struct lp_sw_req sw;
	};
};

/* An operation posted on a tree that waits for its result. */
struct lp_cau_slot {
	uint64_t seq;			/* 0: free */
	struct percs_coll_req *req;
	uint32_t chunk;
};

/**
 * struct percs_cau_tree - a window's handle of a CAU tree
 * @w: the window
 * @id: the kernel's tree id
 * @idx: its index in the window's table (and in descriptor tags)
 * @nr: members
 * @me: this member's index
 * @root: the root's index
 * @flags: PERCS_CAU_F_*
 * @err: 0, or -ECONNRESET once the tree ended
 * @late_err: a status that came for an operation already finished here
 *	(a non-root's reduce), for the next call that finishes
 * @posted: operations posted: the number of the last one
 * @running: requests not finished
 * @slot: operations waiting for their result, by number modulo 16
 * @q_head: requests still posting, in the order they were started
 * @q_tail: see @q_head
 * @probe_ns: when the waits last asked the kernel whether it still exists
 * @mc: multicast state (cau.c)
 */
struct lp_cau_mc;
struct percs_cau_tree {
	struct percs_window *w;
	uint32_t id;
	unsigned int idx;
	uint32_t nr;
	uint32_t me;
	uint32_t root;
	uint32_t flags;
	int err;
	int late_err;
	uint64_t posted;
	unsigned int running;
	struct lp_cau_slot slot[PERCS_CAU_MAX_INFLIGHT];
	struct percs_coll_req *q_head;
	struct percs_coll_req *q_tail;
	uint64_t probe_ns;
	struct lp_cau_mc *mc;
};

/* A software message packet that came before its receive was current. */
struct lp_sw_frag {
	struct lp_sw_frag *next;
	uint32_t src;			/* rank */
	struct lp_sw_hdr h;
	uint32_t len;
	uint8_t data[];
};

/* A member: its window and rank, sorted by window for lookups. */
struct lp_sw_member {
	struct percs_addr a;
	uint32_t rank;
};

/**
 * struct percs_sw_group - a window's group for software collectives
 * @w: the window
 * @next: the window's next group
 * @ctx: its context (in every message's tag)
 * @nr: members
 * @me: this member's rank
 * @members: by rank
 * @sorted: by window address
 * @opseq: collectives started on it
 * @running: requests not finished
 * @unexp: messages not matched yet, in arrival order
 * @unexp_tail: where the next one is linked
 */
struct percs_sw_group {
	struct percs_window *w;
	struct percs_sw_group *next;
	uint16_t ctx;
	uint32_t nr;
	uint32_t me;
	struct percs_addr *members;
	struct lp_sw_member *sorted;
	uint32_t opseq;
	unsigned int running;
	struct lp_sw_frag *unexp;
	struct lp_sw_frag **unexp_tail;
};

/**
 * struct lp_coll - a window's collectives
 * @tree: its library trees by index (0 unused)
 * @nr_trees: how many
 * @groups: its software groups
 * @head: its requests (running and finished, not freed), oldest first
 * @tail: see @head
 * @cq_seen: the CQ stash's count when the library last looked at it
 */
struct lp_coll {
	struct percs_cau_tree *tree[LP_CAU_TREES];
	unsigned int nr_trees;
	struct percs_sw_group *groups;
	struct percs_coll_req *head;
	struct percs_coll_req *tail;
	uint32_t cq_seen;
};

/* coll.c */
LP_HIDDEN struct lp_coll *lp_coll_get(struct percs_window *w);
LP_HIDDEN int lp_coll_claim(struct percs_window *w,
			    const struct percs_pkt_hdr *h);
LP_HIDDEN int lp_coll_progress(struct percs_window *w);
LP_HIDDEN int lp_coll_cq(struct percs_window *w, bool all);
LP_HIDDEN void lp_coll_release(struct percs_window *w);
LP_HIDDEN void lp_req_start(struct percs_window *w, struct percs_coll_req *r,
			    enum lp_req_kind kind);
LP_HIDDEN void lp_req_finish(struct percs_coll_req *r, int status);
LP_HIDDEN int lp_req_run(struct percs_coll_req *r,
			 struct percs_coll_req **out);
LP_HIDDEN uint64_t lp_now_ns(void);
LP_HIDDEN int lp_combine(unsigned int op, unsigned int type, uint8_t *acc,
			 const uint8_t *in, size_t bytes, bool left);

/* cau.c */
LP_HIDDEN int lp_cau_claim(struct percs_window *w,
			   const struct percs_pkt_hdr *h);
LP_HIDDEN bool lp_cau_cqe(struct percs_window *w, const struct percs_cqe *c);
LP_HIDDEN int lp_cau_post(struct percs_cau_tree *t);
LP_HIDDEN void lp_cau_check(struct percs_coll_req *r);
LP_HIDDEN int lp_cau_mc_init(struct percs_cau_tree *t,
			     const struct percs_cau_member *m);
LP_HIDDEN void lp_cau_mc_free(struct percs_cau_tree *t);

/* cau_tree.c */
LP_HIDDEN void lp_cau_probe(struct percs_window *w);
LP_HIDDEN void lp_cau_tree_end(struct percs_cau_tree *t, int err);
LP_HIDDEN struct percs_cau_tree *lp_cau_tree_by_id(struct lp_coll *c,
						   uint32_t id);

/* coll_sw.c */
LP_HIDDEN int lp_sw_claim(struct percs_window *w,
			  const struct percs_pkt_hdr *h);
LP_HIDDEN bool lp_sw_cqe(struct percs_window *w, const struct percs_cqe *c);
LP_HIDDEN int lp_sw_advance(struct percs_coll_req *r);
LP_HIDDEN void lp_sw_group_free(struct percs_sw_group *g);
LP_HIDDEN void lp_sw_req_fini(struct percs_coll_req *r);

/* coll_sched.c: the algorithms' schedules */
LP_HIDDEN int lp_sched_allreduce(struct lp_sw_req *s, unsigned int algo,
				 uint8_t *acc, size_t count, size_t esize);
LP_HIDDEN int lp_sched_reduce(struct lp_sw_req *s, unsigned int root,
			      uint8_t *acc, size_t count, size_t esize);
LP_HIDDEN int lp_sched_bcast(struct lp_sw_req *s, unsigned int root,
			     uint8_t *buf, size_t len);
LP_HIDDEN int lp_sched_barrier(struct lp_sw_req *s, unsigned int algo);

/* auto.c */
LP_HIDDEN int lp_auto_init(struct percs_window *w);
LP_HIDDEN bool lp_auto_stale_slow(struct percs_window *w);
LP_HIDDEN int lp_auto_progress(struct percs_window *w);

/*
 * Auto mode: has the polling thread's beat stood still for longer than
 * the bound?  A beat that moved since the last look is the cheap answer
 * (one load); only a beat that did not reads the time.
 */
static inline bool lp_auto_stale(struct percs_window *w)
{
	uint64_t beat = lp_load_relaxed(&w->status->poll_beat);

	if (lp_likely(beat != w->au.beat)) {
		w->au.beat = beat;
		w->au.since = 0;
		return false;
	}
	return lp_auto_stale_slow(w);
}

/*
 * Will the polling thread consume what was published without a kick?
 * Poll mode: unless it announced that it sleeps.  Auto mode: also unless
 * its beat stopped (it has no CPU, or is parked).
 */
static inline bool lp_engine_live(struct percs_window *w)
{
	if (lp_load_relaxed(&w->status->flags) & PERCS_STATUS_NEED_WAKEUP)
		return false;
	return !w->au.on || !lp_auto_stale(w);
}

/*
 * The tail of the doorbell handshake after a producer index was stored:
 * kick mode always kicks; poll and auto mode kick only if the polling
 * engine is not live (lp_engine_live()).  The full barrier orders our tail
 * store before the flag load, pairing with the engine's flag store,
 * barrier, tail re-check.  In auto mode the kick runs the engine here.
 */
static inline int lp_notify(struct percs_window *w, unsigned int flags)
{
	int ret;

	if (w->poll) {
		lp_smp_mb();
		if (lp_engine_live(w))
			return 0;
	}
	ret = w->doorbell(w, flags);
	return ret < 0 ? ret : 0;
}

#endif /* LIBPERCS_INTERNAL_H */
