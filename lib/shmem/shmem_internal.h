/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem internals: one PE's state and the helpers every file of
 * the library shares.
 *
 * Each PE has two windows on its HFI: the messaging endpoint percs-run's
 * job gives it (bootstrap exchange, barriers, software collectives) and an
 * RMA window of its own, which owns the NMMU registrations of the
 * symmetric heap and of the program's global/static data and initiates
 * every put, get and atomic.  Keeping RMA off the endpoint's window means
 * the endpoint never meets a completion it does not expect.
 */
#ifndef LIBPERCS_SHMEM_INTERNAL_H
#define LIBPERCS_SHMEM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "percs.h"
#include "percs_msg.h"
#include "shmem.h"

/* High 32 bits of our RDMA descriptors' user_data ("SHMM"). */
#define SHMEM_UD_TAG		0x53484d4dU
/* RDMA operations in flight at most (the CQ has 256 entries; the PGAS
 * atomics take up to 64 and the CAU some). */
#define SHMEM_MAX_PENDING	128
/* The bounce buffer for sources and destinations outside symmetric memory. */
#define SHMEM_BOUNCE_SIZE	(256U << 10)
#define SHMEM_DEF_HEAP		(16UL << 20)
/* Messaging contexts: bootstrap and world; a team's is its id. */
#define SHMEM_CTX_BOOT		0x53480000U
#define SHMEM_CTX_TEAM		0x53490000U

/* A registration of this PE as every other PE sees it. */
struct shmem_peer {
	struct percs_rmr heap;
	struct percs_rmr data;
};

struct shmem_state {
	bool initialized;
	bool finalized;
	int thread_level;	/* provided: SHMEM_THREAD_SINGLE .. SERIALIZED */
	int me;
	int npes;
	struct percs_msg_job *job;
	struct percs_msg *m;
	struct percs_hfi *hfi;
	struct percs_window *w;
	struct percs_addr *wins;	/* every PE's RMA window */
	struct shmem_peer *peers;
	/* symmetric heap */
	char *heap;
	size_t heap_size;
	uint32_t heap_handle;
	/* global/static data (.data and .bss) */
	char *data;
	size_t data_len;
	uint32_t data_handle;
	/* bounce buffer */
	char *bounce;
	uint32_t bounce_handle;
	/* RDMA in flight and ordering */
	unsigned int pending;
	uint64_t seq;
	bool fence_rdma;	/* the next RDMA descriptor carries F_FENCE */
	bool fence_amo;		/* atomics complete before the next operation */
	bool amo_inflight;	/* non-blocking atomics since the last quiet */
};

extern struct shmem_state shmem_g;

noreturn void shmem_die(const char *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Abort unless shmem_init() ran and shmem_finalize() did not. */
static inline void shmem_need_init(const char *call)
{
	if (!shmem_g.initialized)
		shmem_die(call, "called %s shmem_init()",
			  shmem_g.finalized ? "after shmem_finalize() without" :
					      "before");
}

void shmem_check_pe(const char *call, int pe);

/* heap.c */
int shmem_heap_init(void);
void shmem_heap_fini(void);
/* Aborts naming @call: @pe is out of range or the range not symmetric. */
noreturn void shmem_remote_fail(const char *call, const void *addr,
				size_t len, int pe);

/* [@addr, @addr + @len) inside [@base, @base + @blen)? */
static inline bool shmem_in(const char *base, size_t blen, const void *addr,
			    size_t len)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)base;

	return base && a >= b && len <= blen && a - b <= blen - len;
}

/*
 * The registration holding [@addr, @addr + @len) on @pe and the offset in
 * it; aborts naming @call when @pe is out of range or the range is not
 * symmetric.  Inline: every put, get and atomic starts here, and a call
 * is a measurable part of a blocking atomic (benchmarks.rst, OpenSHMEM).
 */
static inline const struct percs_rmr *
shmem_remote(const char *call, const void *addr, size_t len, int pe,
	     uint64_t *off)
{
	/* One unsigned compare: a negative pe is out of range too. */
	if ((unsigned int)pe >= (unsigned int)shmem_g.npes)
		shmem_remote_fail(call, addr, len, pe);
	if (shmem_in(shmem_g.heap, shmem_g.heap_size, addr, len)) {
		*off = (uint64_t)((const char *)addr - shmem_g.heap);
		return &shmem_g.peers[pe].heap;
	}
	if (shmem_in(shmem_g.data, shmem_g.data_len, addr, len)) {
		*off = (uint64_t)((const char *)addr - shmem_g.data);
		return &shmem_g.peers[pe].data;
	}
	shmem_remote_fail(call, addr, len, pe);
}

/* This PE's handle of the registration holding the range, 0 if none. */
uint32_t shmem_local_handle(const void *addr, size_t len);
bool shmem_is_symmetric(const void *addr, size_t len);

/* rma.c */
void shmem_rma_wait(const char *call, unsigned int max_pending);
void shmem_put_bytes(const char *call, void *dest, const void *src,
		     size_t len, int pe, bool nbi);
void shmem_get_bytes(const char *call, void *dest, const void *src,
		     size_t len, int pe, bool nbi);
void shmem_do_quiet(const char *call);

/*
 * The byte offset of element @i of a strided array (@stride elements of
 * @size bytes apart; may be negative), as iput/iget and alltoalls walk it.
 */
static inline ptrdiff_t shmem_elem_off(size_t i, ptrdiff_t stride,
				       size_t size)
{
	return (ptrdiff_t)i * stride * (ptrdiff_t)size;
}

/* amo.c: what a fence left pending completes before this atomic. */
void shmem_amo_fence(const char *call);
static inline void shmem_amo_before(const char *call)
{
	if (shmem_g.fence_rdma || shmem_g.fence_amo)
		shmem_amo_fence(call);
}
/* A signal update (signal.c): SET (a swap) or ADD of @value on @pe. */
void shmem_amo_signal(const char *call, uint64_t *sig_addr, int pe,
		      bool add, uint64_t value, bool nbi);

/* ctx.c: the world PE that @pe of @ctx names; aborts naming @call when
 * @ctx is invalid or @pe out of its team. */
int shmem_ctx_team_pe(const char *call, shmem_ctx_t ctx, int pe);

/*
 * The default context numbers PEs as the world does: @pe as it is (every
 * call that uses it checks it), with nothing on the atomics' fast path.
 */
static inline int shmem_ctx_pe(const char *call, shmem_ctx_t ctx, int pe)
{
	return ctx == SHMEM_CTX_DEFAULT ? pe : shmem_ctx_team_pe(call, ctx, pe);
}

/*
 * Defines an RMA or atomic call twice: shmem_NAME(args) on the default
 * context and shmem_ctx_NAME(ctx, args).  BODY sees ctx, call (the name
 * of the function called, for messages) and CTX_PE(pe), the world PE that
 * the caller's pe names in ctx.
 */
#define SHMEM_CTX_DEF(RET, NAME, BODY, ...)				\
RET shmem_##NAME(__VA_ARGS__)						\
{									\
	const shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;			\
	const char *const call = "shmem_" #NAME;			\
	BODY								\
}									\
RET shmem_ctx_##NAME(shmem_ctx_t ctx, __VA_ARGS__)			\
{									\
	const char *const call = "shmem_ctx_" #NAME;			\
	BODY								\
}
#define CTX_PE(pe)	shmem_ctx_pe(call, ctx, (pe))

/* team.c */
int shmem_team_init(void);
void shmem_team_fini(void);

/* sync.c */
void shmem_barrier_pes(const char *call, int start, int stride, int size);

#endif /* LIBPERCS_SHMEM_INTERNAL_H */
