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

/* The global clock: the page (NULL: none) and, for tests, hooks. */
struct lp_clock {
	const struct percs_clock *page;
	const struct lp_clock_hooks *hooks;
};

/**
 * struct percs_window - one reserved window
 * @db: doorbell page (ours to write)
 * @status: status page (the HFI's)
 * @kick: runs PERCS_IOC_KICK; the unit tests replace it with a fake HFI
 * @doorbell: the plain send/immediate doorbell (fdatasync(2) on the
 *	window, cheaper than the ioctl); the unit tests replace it too
 * @poll: polling engine: kick only on PERCS_STATUS_NEED_WAKEUP
 * @fd: the window fd, -1 for a test window
 * @sq: send FIFO state
 * @rq: receive FIFO state
 * @imm: immediate-send slot state
 * @cq: completion queue state
 * @addr: network address
 * @kick_ctx: for the replacement kick
 * @clock: the global clock page (and the unit tests' time source)
 * @amo: the PGAS atomics' state
 * @map: the mappings percs_window_release() undoes (empty for test windows)
 */
struct percs_window {
	struct percs_doorbell *db;
	const struct percs_status *status;
	int (*kick)(struct percs_window *w, unsigned int flags);
	int (*doorbell)(struct percs_window *w, unsigned int flags);
	bool poll;
	int fd;
	struct lp_sq sq;
	struct lp_rq rq;
	struct lp_imm imm;
	struct lp_cq cq;
	struct percs_addr addr;
	void *kick_ctx;
	struct lp_clock clock;
	struct lp_amo amo;
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

/* cq.c */
LP_HIDDEN bool lp_cq_pending(struct percs_window *w);
LP_HIDDEN bool lp_cq_ring_pending(struct percs_window *w);
LP_HIDDEN int lp_cq_drain(struct percs_window *w);
LP_HIDDEN void lp_cq_release(struct percs_window *w);

/* rdma.c: compose a descriptor; if the FIFO is full, publish, kick, retry once */
LP_HIDDEN int lp_desc_post(struct percs_window *w, const struct percs_pkt_hdr *h,
			   const void *buf, size_t len);

/* atomic.c: percs_atomic_post() without the reserved user_data check */
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

/*
 * The tail of the doorbell handshake after a producer index was stored:
 * kick mode always kicks; poll mode kicks only if the polling engine
 * announced it sleeps.  The full barrier orders our tail store before the
 * flag load, pairing with the engine's flag store, barrier, tail re-check.
 */
static inline int lp_notify(struct percs_window *w, unsigned int flags)
{
	int ret;

	if (w->poll) {
		lp_smp_mb();
		if (!(lp_load_relaxed(&w->status->flags) &
		      PERCS_STATUS_NEED_WAKEUP))
			return 0;
	}
	ret = w->doorbell(w, flags);
	return ret < 0 ? ret : 0;
}

#endif /* LIBPERCS_INTERNAL_H */
