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

/* Completion queue: the HFI posts up to status->cq_tail, we consume. */
struct lp_cq {
	const struct percs_cqe *ring;
	uint64_t head;
	uint32_t entries;
	uint32_t mask;
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
