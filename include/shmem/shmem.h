/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenSHMEM 1.5 for C programs run with percs-run(1), over libpercs.
 *
 * The subset this library implements is declared here and nothing else: a
 * call outside it does not compile or link.  Compile with percs-oshcc(1),
 * which adds this directory and the libraries; start with percs-run(1)
 * (or its alias percs-oshrun).  Documentation/shmem.rst says how each
 * call maps onto the HFI (RDMA, the atomic unit, the CAU).
 *
 * Threads: up to SHMEM_THREAD_SERIALIZED (one call at a time, from any
 * thread; Documentation/shmem.rst says why not MULTIPLE).  shmem_ptr()
 * gives a load/store pointer for the calling PE only: other PEs are
 * separate processes reached through the network.
 */
#ifndef PERCS_SHMEM_H
#define PERCS_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEM_MAJOR_VERSION	1
#define SHMEM_MINOR_VERSION	5
#define SHMEM_MAX_NAME_LEN	256
#define SHMEM_VENDOR_STRING	"percs (emulated IBM PERCS HFI)"

#define SHMEM_THREAD_SINGLE	0
#define SHMEM_THREAD_FUNNELED	1
#define SHMEM_THREAD_SERIALIZED	2
#define SHMEM_THREAD_MULTIPLE	3

/* Comparisons of the point-to-point synchronization calls */
#define SHMEM_CMP_EQ	0
#define SHMEM_CMP_NE	1
#define SHMEM_CMP_GT	2
#define SHMEM_CMP_GE	3
#define SHMEM_CMP_LT	4
#define SHMEM_CMP_LE	5
/* Their 1.0-1.3 names */
#define _SHMEM_CMP_EQ	SHMEM_CMP_EQ
#define _SHMEM_CMP_NE	SHMEM_CMP_NE
#define _SHMEM_CMP_GT	SHMEM_CMP_GT
#define _SHMEM_CMP_GE	SHMEM_CMP_GE
#define _SHMEM_CMP_LT	SHMEM_CMP_LT
#define _SHMEM_CMP_LE	SHMEM_CMP_LE

/* pSync/pWrk of the 1.0-1.3 active-set collectives */
#define SHMEM_SYNC_VALUE		(-1L)
#define SHMEM_BARRIER_SYNC_SIZE		1
#define SHMEM_BCAST_SYNC_SIZE		1
#define SHMEM_COLLECT_SYNC_SIZE		1
#define SHMEM_REDUCE_SYNC_SIZE		1
#define SHMEM_ALLTOALL_SYNC_SIZE	1
#define SHMEM_SYNC_SIZE			1
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE	1
#define _SHMEM_SYNC_VALUE		SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE	SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE		SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE	SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE		SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE	SHMEM_REDUCE_MIN_WRKDATA_SIZE

/*
 * shmem_team_t: a team, an ordered subset of the PEs.
 * A pointer-sized handle.  %SHMEM_TEAM_WORLD is every PE,
 * %SHMEM_TEAM_SHARED the PEs reachable by load/store (the calling PE
 * alone here), %SHMEM_TEAM_INVALID no team.
 */
typedef struct percs_shmem_team *shmem_team_t;
extern shmem_team_t percs_shmem_team_world;
extern shmem_team_t percs_shmem_team_shared;
#define SHMEM_TEAM_WORLD	percs_shmem_team_world
#define SHMEM_TEAM_SHARED	percs_shmem_team_shared
#define SHMEM_TEAM_INVALID	((shmem_team_t)0)

/**
 * struct shmem_team_config - what shmem_team_split_strided() may be told
 *	(typedef shmem_team_config_t)
 * @num_contexts: contexts wanted on the team (kept for
 *	shmem_team_get_config(); shmem_team_create_ctx() makes them on demand)
 */
typedef struct shmem_team_config {
	int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS	1L

/* ---- library setup, exit and query --------------------------------------- */

/**
 * shmem_init() - join the job percs-run started, allocate the symmetric heap
 *
 * Collective.  Reserves this PE's RMA window, maps a symmetric heap of
 * SHMEM_SYMMETRIC_SIZE bytes (default 16 MiB; suffixes K, M, G) and
 * registers it and the program's global/static data with the NMMU once,
 * then exchanges the registrations with every other PE.  Aborts with a
 * message when the program was not started by percs-run or the heap cannot
 * be registered (RLIMIT_MEMLOCK).
 */
void shmem_init(void);
/**
 * shmem_init_thread() - shmem_init() at a thread level
 * @requested: SHMEM_THREAD_SINGLE .. SHMEM_THREAD_MULTIPLE (others abort)
 * @provided: where the level given goes: @requested, but at most
 *	SHMEM_THREAD_SERIALIZED
 *
 * Return: 0.
 */
int shmem_init_thread(int requested, int *provided);
/** shmem_query_thread() - the thread level provided (SINGLE after shmem_init) */
void shmem_query_thread(int *provided);
/**
 * shmem_finalize() - complete all RMA and atomics, release everything
 *
 * Collective: a barrier, then the registrations, the window and the heap
 * are released.  Nothing of this PE stays reserved or pinned.
 */
void shmem_finalize(void);
/**
 * shmem_global_exit() - end every PE of the job with @status
 * @status: the exit status percs-run reports
 */
void shmem_global_exit(int status);
/** shmem_my_pe() - this PE's number (-1 before shmem_init()) */
int shmem_my_pe(void);
/** shmem_n_pes() - the number of PEs (-1 before shmem_init()) */
int shmem_n_pes(void);
/** shmem_pe_accessible() - 1 if @pe is a PE of the job, else 0 */
int shmem_pe_accessible(int pe);
/**
 * shmem_addr_accessible() - can @addr be the target of RMA on @pe?
 * @addr: an address in this process
 * @pe: a PE
 * Return: 1 when @addr is in the symmetric heap or global/static data and
 * @pe is a PE of the job, else 0.
 */
int shmem_addr_accessible(const void *addr, int pe);
/**
 * shmem_ptr() - a load/store pointer to @dest on @pe
 * @dest: a symmetric address
 * @pe: a PE
 * Return: @dest itself when @pe is the caller; NULL otherwise (other PEs
 * are other processes, reached through the HFI only).
 */
void *shmem_ptr(const void *dest, int pe);
/** shmem_info_get_version() - 1.5 */
void shmem_info_get_version(int *major, int *minor);
/** shmem_info_get_name() - the vendor string, at most SHMEM_MAX_NAME_LEN bytes */
void shmem_info_get_name(char *name);

/* ---- memory management --------------------------------------------------- */

/*
 * The symmetric heap.  Every PE makes the same calls in the same order
 * (they are collective, each ends with a barrier), so an object has the
 * same offset in every PE's heap.  An exhausted heap returns NULL.
 */
/** shmem_malloc() - @size bytes of symmetric heap (NULL for 0 or none left) */
void *shmem_malloc(size_t size);
/** shmem_calloc() - @count x @size zeroed bytes of symmetric heap */
void *shmem_calloc(size_t count, size_t size);
/** shmem_align() - @size bytes at a multiple of @alignment (a power of two) */
void *shmem_align(size_t alignment, size_t size);
/** shmem_realloc() - resize @ptr (NULL: allocate), contents kept */
void *shmem_realloc(void *ptr, size_t size);
/** shmem_free() - free @ptr (NULL: nothing but the barrier) */
void shmem_free(void *ptr);

/* ---- communication contexts --------------------------------------------- */

/*
 * shmem_ctx_t: an ordering and completion domain for RMA and atomics; one
 * made on a team numbers PEs as the team does.  Every RMA and atomic call
 * below also exists as shmem_ctx_NAME(ctx, ...) (e.g. shmem_ctx_long_put,
 * shmem_ctx_putmem, shmem_ctx_int_atomic_fetch_add), whose PE argument is
 * a PE of the context's team.  All contexts of a PE issue through its one
 * RMA window, so shmem_ctx_quiet() and shmem_ctx_fence() complete or order
 * all of the PE's operations (a superset, as OpenSHMEM allows).
 */
typedef struct percs_shmem_ctx *shmem_ctx_t;
extern shmem_ctx_t percs_shmem_ctx_default;
#define SHMEM_CTX_DEFAULT	percs_shmem_ctx_default
#define SHMEM_CTX_INVALID	((shmem_ctx_t)0)
#define SHMEM_CTX_SERIALIZED	(1L << 0)
#define SHMEM_CTX_PRIVATE	(1L << 1)
#define SHMEM_CTX_NOSTORE	(1L << 2)

/*
 * Declares shmem_NAME(args) and shmem_ctx_NAME(shmem_ctx_t ctx, args).
 */
#define PERCS_SHMEM_CTX_PAIR(RET, NAME, ...)				\
RET shmem_##NAME(__VA_ARGS__);						\
RET shmem_ctx_##NAME(shmem_ctx_t ctx, __VA_ARGS__);

/**
 * shmem_ctx_create() - a context numbering PEs as the world does
 * @options: SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE
 *	(accepted; every context already behaves as the strictest)
 * @ctx: set to the context, or %SHMEM_CTX_INVALID on failure
 * Return: 0, or -1 for unknown @options bits or no memory.
 */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
/**
 * shmem_team_create_ctx() - a context whose PE arguments are @team's PEs
 * @team: the team (this PE must be a member)
 * @options: as for shmem_ctx_create()
 * @ctx: set to the context, or %SHMEM_CTX_INVALID on failure
 * Return: 0; -1 for %SHMEM_TEAM_INVALID, unknown @options or no memory.
 */
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
/**
 * shmem_ctx_destroy() - complete @ctx's operations and free it
 * @ctx: the context (%SHMEM_CTX_INVALID: nothing; %SHMEM_CTX_DEFAULT
 *	aborts)
 */
void shmem_ctx_destroy(shmem_ctx_t ctx);
/** shmem_ctx_get_team() - @ctx's team (the world's for world contexts) */
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
/** shmem_ctx_quiet() - complete @ctx's operations (and the PE's others) */
void shmem_ctx_quiet(shmem_ctx_t ctx);
/** shmem_ctx_fence() - order @ctx's operations (and the PE's others) */
void shmem_ctx_fence(shmem_ctx_t ctx);

/* ---- remote memory access ------------------------------------------------ */

/*
 * Per standard type (TYPENAME, TYPE) as OpenSHMEM 1.5 lists them:
 *   shmem_TYPENAME_put(TYPE *dest, const TYPE *source, size_t nelems, int pe)
 *   shmem_TYPENAME_get(TYPE *dest, const TYPE *source, size_t nelems, int pe)
 *   shmem_TYPENAME_p(TYPE *dest, TYPE value, int pe)
 *   TYPE shmem_TYPENAME_g(const TYPE *source, int pe)
 *   shmem_TYPENAME_iput/iget(dest, source, dst, sst, nelems, pe)
 *   shmem_TYPENAME_put_nbi/get_nbi(dest, source, nelems, pe)
 * and per size (8, 16, 32, 64, 128 bits) shmem_putSIZE, shmem_getSIZE,
 * shmem_iputSIZE, shmem_igetSIZE, shmem_putSIZE_nbi, shmem_getSIZE_nbi.
 */
#define PERCS_SHMEM_RMA_TYPES(X)					\
	X(float, float) X(double, double) X(longdouble, long double)	\
	X(char, char) X(schar, signed char) X(short, short) X(int, int)	\
	X(long, long) X(longlong, long long)				\
	X(uchar, unsigned char) X(ushort, unsigned short)		\
	X(uint, unsigned int) X(ulong, unsigned long)			\
	X(ulonglong, unsigned long long)				\
	X(int8, int8_t) X(int16, int16_t) X(int32, int32_t)		\
	X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)		\
	X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)		\
	X(ptrdiff, ptrdiff_t)

#define PERCS_SHMEM_RMA_DECL(N, T)					\
PERCS_SHMEM_CTX_PAIR(void, N##_put, T *dest, const T *source,		\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_get, T *dest, const T *source,		\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_put_nbi, T *dest, const T *source,	\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_get_nbi, T *dest, const T *source,	\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_p, T *dest, T value, int pe)		\
PERCS_SHMEM_CTX_PAIR(T, N##_g, const T *source, int pe)		\
PERCS_SHMEM_CTX_PAIR(void, N##_iput, T *dest, const T *source,		\
		     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
PERCS_SHMEM_CTX_PAIR(void, N##_iget, T *dest, const T *source,		\
		     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
PERCS_SHMEM_RMA_TYPES(PERCS_SHMEM_RMA_DECL)

#define PERCS_SHMEM_SIZES(X) X(8) X(16) X(32) X(64) X(128)
#define PERCS_SHMEM_SIZE_DECL(S)					\
PERCS_SHMEM_CTX_PAIR(void, put##S, void *dest, const void *source,	\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, get##S, void *dest, const void *source,	\
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, put##S##_nbi, void *dest, const void *source, \
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, get##S##_nbi, void *dest, const void *source, \
		     size_t nelems, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, iput##S, void *dest, const void *source,	\
		     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
PERCS_SHMEM_CTX_PAIR(void, iget##S, void *dest, const void *source,	\
		     ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)
PERCS_SHMEM_SIZES(PERCS_SHMEM_SIZE_DECL)

/*
 * shmem_putmem() - copy @nelems bytes from @source to @dest on @pe
 * @dest: symmetric address
 * @source: any local address
 * @nelems: bytes
 * @pe: the target PE
 *
 * Returns once @source may be reused.  Up to PERCS_RDMA_FIFO_MAX bytes
 * travel in the descriptor itself (RDMA FIFO write); more go by RDMA write
 * straight from @source when it is symmetric memory (registered), through
 * a registered bounce buffer otherwise.
 */
PERCS_SHMEM_CTX_PAIR(void, putmem, void *dest, const void *source,
		     size_t nelems, int pe)
/* shmem_getmem() - copy @nelems bytes from @source on @pe to @dest */
PERCS_SHMEM_CTX_PAIR(void, getmem, void *dest, const void *source,
		     size_t nelems, int pe)
/* shmem_putmem_nbi() - shmem_putmem() that may return before @source is read */
PERCS_SHMEM_CTX_PAIR(void, putmem_nbi, void *dest, const void *source,
		     size_t nelems, int pe)
/* shmem_getmem_nbi() - shmem_getmem() completed by shmem_quiet() */
PERCS_SHMEM_CTX_PAIR(void, getmem_nbi, void *dest, const void *source,
		     size_t nelems, int pe)

/* ---- put with signal ------------------------------------------------------ */

#define SHMEM_SIGNAL_SET	0
#define SHMEM_SIGNAL_ADD	1

/*
 * shmem_putmem_signal() - put @nelems bytes, then update a signal word
 * @dest: symmetric address
 * @source: any local address
 * @nelems: bytes
 * @sig_addr: a symmetric uint64_t on @pe
 * @signal: the value written (SET) or added (ADD)
 * @sig_op: %SHMEM_SIGNAL_SET or %SHMEM_SIGNAL_ADD
 * @pe: the target PE
 *
 * The signal changes only after the data has landed on @pe (its RDMA
 * completed), and by the HFI's atomic unit: atomic with other PEs'
 * updates of the word.  A bad @sig_op or a non-symmetric @sig_addr aborts
 * naming the call.  The _nbi forms may return before the signal's update
 * completes; shmem_quiet() completes it.
 *
 * Typed: shmem_TYPENAME_put_signal(_nbi)(dest, source, nelems, sig_addr,
 * signal, sig_op, pe), and sized shmem_putSIZE_signal(_nbi).
 */
PERCS_SHMEM_CTX_PAIR(void, putmem_signal, void *dest, const void *source,
		     size_t nelems, uint64_t *sig_addr, uint64_t signal,
		     int sig_op, int pe)
/* shmem_putmem_signal_nbi() - shmem_putmem_signal() completed by quiet */
PERCS_SHMEM_CTX_PAIR(void, putmem_signal_nbi, void *dest,
		     const void *source, size_t nelems, uint64_t *sig_addr,
		     uint64_t signal, int sig_op, int pe)
#define PERCS_SHMEM_SIGNAL_DECL(N, T)					\
PERCS_SHMEM_CTX_PAIR(void, N##_put_signal, T *dest, const T *source,	\
		     size_t nelems, uint64_t *sig_addr, uint64_t signal, \
		     int sig_op, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_put_signal_nbi, T *dest,		\
		     const T *source, size_t nelems, uint64_t *sig_addr, \
		     uint64_t signal, int sig_op, int pe)
PERCS_SHMEM_RMA_TYPES(PERCS_SHMEM_SIGNAL_DECL)
#define PERCS_SHMEM_SIGNAL_SIZE_DECL(S)					\
PERCS_SHMEM_CTX_PAIR(void, put##S##_signal, void *dest,		\
		     const void *source, size_t nelems, uint64_t *sig_addr, \
		     uint64_t signal, int sig_op, int pe)		\
PERCS_SHMEM_CTX_PAIR(void, put##S##_signal_nbi, void *dest,		\
		     const void *source, size_t nelems, uint64_t *sig_addr, \
		     uint64_t signal, int sig_op, int pe)
PERCS_SHMEM_SIZES(PERCS_SHMEM_SIGNAL_SIZE_DECL)
/** shmem_signal_fetch() - the signal word's value (an atomic load) */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
/**
 * shmem_signal_wait_until() - wait until the signal word compares true
 * @sig_addr: the signal word (local, symmetric)
 * @cmp: SHMEM_CMP_*
 * @cmp_value: what it is compared with
 * Return: the word's value when the comparison held.
 */
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp,
				 uint64_t cmp_value);

/* ---- atomic memory operations ------------------------------------------- */

/*
 * Carried by the HFI's atomic unit (ADD, AND, OR, XOR, CSWAP, with or
 * without fetch, on 4- and 8-byte operands).  fetch is a fetch-OR of 0,
 * set and swap are compare-and-swap loops (the unit has no plain swap),
 * inc is ADD 1.  The float and double forms of fetch, set and swap work
 * on the bit pattern.
 */
#define PERCS_SHMEM_AMO_TYPES(X)					\
	X(int, int) X(long, long) X(longlong, long long)		\
	X(uint, unsigned int) X(ulong, unsigned long)			\
	X(ulonglong, unsigned long long) X(int32, int32_t)		\
	X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)	\
	X(size, size_t) X(ptrdiff, ptrdiff_t)
#define PERCS_SHMEM_AMO_EXT_TYPES(X)					\
	PERCS_SHMEM_AMO_TYPES(X) X(float, float) X(double, double)
#define PERCS_SHMEM_AMO_BIT_TYPES(X)					\
	X(uint, unsigned int) X(ulong, unsigned long)			\
	X(ulonglong, unsigned long long) X(int32, int32_t)		\
	X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)

#define PERCS_SHMEM_AMO_EXT_DECL(N, T)					\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_fetch, const T *source, int pe)	\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_set, T *dest, T value, int pe)	\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_swap, T *dest, T value, int pe)	\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_fetch_nbi, T *fetch,		\
		     const T *source, int pe)				\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_swap_nbi, T *fetch, T *dest,	\
		     T value, int pe)
#define PERCS_SHMEM_AMO_STD_DECL(N, T)					\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_compare_swap, T *dest, T cond,	\
		     T value, int pe)					\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_fetch_inc, T *dest, int pe)		\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_inc, T *dest, int pe)		\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_fetch_add, T *dest, T value, int pe) \
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_add, T *dest, T value, int pe)	\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_compare_swap_nbi, T *fetch,	\
		     T *dest, T cond, T value, int pe)			\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_fetch_inc_nbi, T *fetch, T *dest, \
		     int pe)						\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_fetch_add_nbi, T *fetch, T *dest, \
		     T value, int pe)
#define PERCS_SHMEM_AMO_BIT_DECL1(N, T, OP)				\
PERCS_SHMEM_CTX_PAIR(T, N##_atomic_fetch_##OP, T *dest, T value, int pe) \
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_##OP, T *dest, T value, int pe)	\
PERCS_SHMEM_CTX_PAIR(void, N##_atomic_fetch_##OP##_nbi, T *fetch,	\
		     T *dest, T value, int pe)
#define PERCS_SHMEM_AMO_BIT_DECL(N, T)					\
	PERCS_SHMEM_AMO_BIT_DECL1(N, T, and)				\
	PERCS_SHMEM_AMO_BIT_DECL1(N, T, or)				\
	PERCS_SHMEM_AMO_BIT_DECL1(N, T, xor)
PERCS_SHMEM_AMO_EXT_TYPES(PERCS_SHMEM_AMO_EXT_DECL)
PERCS_SHMEM_AMO_TYPES(PERCS_SHMEM_AMO_STD_DECL)
PERCS_SHMEM_AMO_BIT_TYPES(PERCS_SHMEM_AMO_BIT_DECL)

/* The 1.0-1.3 names, thin aliases of the calls above. */
#define PERCS_SHMEM_OLD_AMO_TYPES(X) X(int, int) X(long, long) X(longlong, long long)
#define PERCS_SHMEM_OLD_AMO_DECL(N, T)					\
T shmem_##N##_finc(T *dest, int pe);					\
T shmem_##N##_fadd(T *dest, T value, int pe);				\
T shmem_##N##_cswap(T *dest, T cond, T value, int pe);			\
void shmem_##N##_inc(T *dest, int pe);					\
void shmem_##N##_add(T *dest, T value, int pe);
#define PERCS_SHMEM_OLD_EXT_TYPES(X)					\
	PERCS_SHMEM_OLD_AMO_TYPES(X) X(float, float) X(double, double)
#define PERCS_SHMEM_OLD_EXT_DECL(N, T)					\
T shmem_##N##_swap(T *dest, T value, int pe);				\
T shmem_##N##_fetch(const T *source, int pe);				\
void shmem_##N##_set(T *dest, T value, int pe);
PERCS_SHMEM_OLD_AMO_TYPES(PERCS_SHMEM_OLD_AMO_DECL)
PERCS_SHMEM_OLD_EXT_TYPES(PERCS_SHMEM_OLD_EXT_DECL)
/** shmem_swap() - the 1.0 untyped swap of a long */
long shmem_swap(long *dest, long value, int pe);

/* ---- memory ordering ------------------------------------------------------ */

/**
 * shmem_fence() - order this PE's puts and AMOs to each PE
 *
 * Those issued after it reach their PE after those issued before: the
 * next RDMA descriptor carries PERCS_RDMA_F_FENCE (the HFI starts it once
 * the earlier ones completed); atomics still in flight complete first.
 */
void shmem_fence(void);
/**
 * shmem_quiet() - complete every put, get and AMO this PE issued
 */
void shmem_quiet(void);

/* ---- point-to-point synchronization ------------------------------------- */

#define PERCS_SHMEM_P2P_TYPES(X)					\
	X(short, short) X(int, int) X(long, long) X(longlong, long long) \
	X(ushort, unsigned short) X(uint, unsigned int)			\
	X(ulong, unsigned long) X(ulonglong, unsigned long long)		\
	X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t)		\
	X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
#define PERCS_SHMEM_P2P_DECL(N, T)					\
void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);		\
size_t shmem_##N##_wait_until_all(T *ivars, size_t nelems,		\
				  const int *status, int cmp, T cmp_value); \
size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems,		\
				  const int *status, int cmp, T cmp_value); \
size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems,		\
				   size_t *indices, const int *status,	\
				   int cmp, T cmp_value);		\
int shmem_##N##_test(T *ivar, int cmp, T cmp_value);			\
int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status,	\
			 int cmp, T cmp_value);				\
size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status,	\
			    int cmp, T cmp_value);			\
size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,	\
			     const int *status, int cmp, T cmp_value);	\
void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems,		\
				       const int *status, int cmp,	\
				       T *cmp_values);			\
size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems,	\
					 const int *status, int cmp,	\
					 T *cmp_values);		\
size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems,	\
					  size_t *indices,		\
					  const int *status, int cmp,	\
					  T *cmp_values);		\
int shmem_##N##_test_all_vector(T *ivars, size_t nelems,		\
				const int *status, int cmp,		\
				T *cmp_values);				\
size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems,		\
				   const int *status, int cmp,		\
				   T *cmp_values);			\
size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems,		\
				    size_t *indices, const int *status,	\
				    int cmp, T *cmp_values);
PERCS_SHMEM_P2P_TYPES(PERCS_SHMEM_P2P_DECL)
/*
 * The _vector forms compare element i with @cmp_values[i].
 * @status (may be NULL): non-zero entries are left out.  _any returns the
 * index of one element that satisfies the comparison (SIZE_MAX when every
 * entry is left out), _some the number found and their indices, _all 0
 * ... as OpenSHMEM 1.5 says.  Waits spin on local memory (other PEs' puts
 * and atomics land in it through the HFI), yielding the CPU.
 */

/* ---- barriers ------------------------------------------------------------ */

/** shmem_barrier_all() - shmem_quiet(), then wait for every PE */
void shmem_barrier_all(void);
/** shmem_sync_all() - wait for every PE (no quiet) */
void shmem_sync_all(void);
/**
 * shmem_barrier() - the 1.0-1.3 barrier of an active set
 * @PE_start: first PE of the set
 * @logPE_stride: log2 of the stride between its PEs
 * @PE_size: PEs in the set
 * @pSync: ignored (the library keeps its own state; kept for the API)
 */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* ---- teams --------------------------------------------------------------- */

/** shmem_team_my_pe() - this PE's number in @team, -1 if not a member */
int shmem_team_my_pe(shmem_team_t team);
/** shmem_team_n_pes() - PEs in @team, -1 for %SHMEM_TEAM_INVALID */
int shmem_team_n_pes(shmem_team_t team);
/**
 * shmem_team_split_strided() - a team of @size PEs of @parent
 * @parent: the team split
 * @start: first PE (number in @parent)
 * @stride: distance between members (in @parent; may be negative, or 0
 *	when @size is 1)
 * @size: members
 * @config: the team's configuration, read for the fields @config_mask
 *	names (may be NULL when it names none)
 * @config_mask: 0 or %SHMEM_TEAM_NUM_CONTEXTS; other bits abort
 * @new_team: set to the team on its members, %SHMEM_TEAM_INVALID on the others
 *
 * Collective over @parent.  The team's reductions run on the CAU when its
 * members are on different hubs (a tree of their RMA windows), in
 * software otherwise.
 * Return: 0; -1 when the triplet leaves @parent (every PE gets
 * %SHMEM_TEAM_INVALID).
 */
int shmem_team_split_strided(shmem_team_t parent, int start, int stride,
			     int size, const shmem_team_config_t *config,
			     long config_mask, shmem_team_t *new_team);
/**
 * shmem_team_split_2d() - rows and columns of @parent
 * @parent: the team split
 * @xrange: PEs per row (more than @parent's size: one row)
 * @xaxis_config: the rows' configuration (as shmem_team_split_strided())
 * @xaxis_mask: the fields @xaxis_config gives
 * @xaxis_team: set to this PE's row: the parent PEs i with the same
 *	i / @xrange, numbered by i % @xrange
 * @yaxis_config: the columns' configuration
 * @yaxis_mask: the fields @yaxis_config gives
 * @yaxis_team: set to this PE's column: the same i % @xrange, numbered by
 *	i / @xrange
 *
 * Collective over @parent.  Return: 0; -1 for @xrange < 1 (both teams
 * %SHMEM_TEAM_INVALID on every PE).
 */
int shmem_team_split_2d(shmem_team_t parent, int xrange,
			const shmem_team_config_t *xaxis_config,
			long xaxis_mask, shmem_team_t *xaxis_team,
			const shmem_team_config_t *yaxis_config,
			long yaxis_mask, shmem_team_t *yaxis_team);
/**
 * shmem_team_get_config() - what @team was created with
 * @team: the team
 * @config_mask: the fields to read: 0 or %SHMEM_TEAM_NUM_CONTEXTS
 * @config: where to write them (num_contexts as given to the split, 0 if
 *	none was, and for the predefined teams)
 *
 * Return: 0; -1 for %SHMEM_TEAM_INVALID.
 */
int shmem_team_get_config(shmem_team_t team, long config_mask,
			  shmem_team_config_t *config);
/** shmem_team_translate_pe() - @src_pe of @src_team in @dest_team, or -1 */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe,
			    shmem_team_t dest_team);
/** shmem_team_sync() - wait for every member of @team (0, or -1 invalid) */
int shmem_team_sync(shmem_team_t team);
/** shmem_team_destroy() - free @team (not the predefined ones) */
void shmem_team_destroy(shmem_team_t team);

/* ---- collectives --------------------------------------------------------- */

/*
 * Team collectives return 0, or -1 for %SHMEM_TEAM_INVALID.  They end
 * with the team synchronized: dest may be read at once on every member.
 */
/** shmem_broadcastmem() - @nelems bytes of @PE_root's @source to every @dest */
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source,
		       size_t nelems, int PE_root);
/** shmem_collectmem() - concatenate each member's @nelems bytes (may differ) */
int shmem_collectmem(shmem_team_t team, void *dest, const void *source,
		     size_t nelems);
/** shmem_fcollectmem() - concatenate each member's @nelems bytes (the same) */
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source,
		      size_t nelems);
/** shmem_alltoallmem() - block j of @source to member j's block me of @dest */
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source,
		      size_t nelems);
/**
 * shmem_alltoallsmem() - strided alltoall
 * @team: the team
 * @dest: byte k from member i lands at @dest[(i * @nelems + k) * @dst]
 * @source: byte k for member j is @source[(j * @nelems + k) * @sst]
 * @dst: destination stride (at least 1)
 * @sst: source stride (at least 1)
 * @nelems: bytes per member
 * Return: 0, or -1 for %SHMEM_TEAM_INVALID.
 */
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source,
		       ptrdiff_t dst, ptrdiff_t sst, size_t nelems);

#define PERCS_SHMEM_COLL_DECL(N, T)					\
int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source,	\
			  size_t nelems, int PE_root);			\
int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source,	\
			size_t nelems);					\
int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source,	\
			 size_t nelems);				\
int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source,	\
			 size_t nelems);				\
int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source,	\
			  ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
PERCS_SHMEM_RMA_TYPES(PERCS_SHMEM_COLL_DECL)

/* Reductions: shmem_TYPENAME_OP_reduce(team, dest, source, nreduce) */
#define PERCS_SHMEM_BIT_RED_TYPES(X)					\
	X(uchar, unsigned char) X(ushort, unsigned short)		\
	X(uint, unsigned int) X(ulong, unsigned long)			\
	X(ulonglong, unsigned long long) X(int8, int8_t)		\
	X(int16, int16_t) X(int32, int32_t) X(int64, int64_t)		\
	X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)	\
	X(uint64, uint64_t) X(size, size_t)
#define PERCS_SHMEM_CMP_RED_TYPES(X)					\
	X(char, char) X(schar, signed char) X(short, short) X(int, int)	\
	X(long, long) X(longlong, long long) X(ptrdiff, ptrdiff_t)	\
	X(uchar, unsigned char) X(ushort, unsigned short)		\
	X(uint, unsigned int) X(ulong, unsigned long)			\
	X(ulonglong, unsigned long long) X(int8, int8_t)		\
	X(int16, int16_t) X(int32, int32_t) X(int64, int64_t)		\
	X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)	\
	X(uint64, uint64_t) X(size, size_t) X(float, float)		\
	X(double, double) X(longdouble, long double)
#ifndef __cplusplus
#define PERCS_SHMEM_ARITH_RED_TYPES(X)					\
	PERCS_SHMEM_CMP_RED_TYPES(X) X(complexf, float _Complex)	\
	X(complexd, double _Complex)
#else
#define PERCS_SHMEM_ARITH_RED_TYPES(X) PERCS_SHMEM_CMP_RED_TYPES(X)
#endif
#define PERCS_SHMEM_RED_DECL1(N, T, OP)					\
int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest,		\
			      const T *source, size_t nreduce);
#define PERCS_SHMEM_BIT_RED_DECL(N, T)					\
	PERCS_SHMEM_RED_DECL1(N, T, and) PERCS_SHMEM_RED_DECL1(N, T, or) \
	PERCS_SHMEM_RED_DECL1(N, T, xor)
#define PERCS_SHMEM_CMP_RED_DECL(N, T)					\
	PERCS_SHMEM_RED_DECL1(N, T, max) PERCS_SHMEM_RED_DECL1(N, T, min)
#define PERCS_SHMEM_ARITH_RED_DECL(N, T)				\
	PERCS_SHMEM_RED_DECL1(N, T, sum) PERCS_SHMEM_RED_DECL1(N, T, prod)
PERCS_SHMEM_BIT_RED_TYPES(PERCS_SHMEM_BIT_RED_DECL)
PERCS_SHMEM_CMP_RED_TYPES(PERCS_SHMEM_CMP_RED_DECL)
PERCS_SHMEM_ARITH_RED_TYPES(PERCS_SHMEM_ARITH_RED_DECL)

/*
 * The 1.0-1.3 active-set collectives: PEs PE_start + i << logPE_stride,
 * i < PE_size.  pSync and pWrk are accepted and not used (the library
 * keeps its own state per active set), so any symmetric arrays will do.
 */
void shmem_broadcast32(void *dest, const void *source, size_t nelems,
		       int PE_root, int PE_start, int logPE_stride,
		       int PE_size, long *pSync);
void shmem_broadcast64(void *dest, const void *source, size_t nelems,
		       int PE_root, int PE_start, int logPE_stride,
		       int PE_size, long *pSync);
void shmem_collect32(void *dest, const void *source, size_t nelems,
		     int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_collect64(void *dest, const void *source, size_t nelems,
		     int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect32(void *dest, const void *source, size_t nelems,
		      int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect64(void *dest, const void *source, size_t nelems,
		      int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall32(void *dest, const void *source, size_t nelems,
		      int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall64(void *dest, const void *source, size_t nelems,
		      int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_alltoalls32(void *dest, const void *source, ptrdiff_t dst,
		       ptrdiff_t sst, size_t nelems, int PE_start,
		       int logPE_stride, int PE_size, long *pSync);
void shmem_alltoalls64(void *dest, const void *source, ptrdiff_t dst,
		       ptrdiff_t sst, size_t nelems, int PE_start,
		       int logPE_stride, int PE_size, long *pSync);

#define PERCS_SHMEM_OLD_RED_DECL1(N, T, OP)				\
void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce,	\
			       int PE_start, int logPE_stride,		\
			       int PE_size, T *pWrk, long *pSync);
#define PERCS_SHMEM_OLD_INT_TYPES(X)					\
	X(short, short) X(int, int) X(long, long) X(longlong, long long)
#define PERCS_SHMEM_OLD_FLT_TYPES(X)					\
	X(float, float) X(double, double) X(longdouble, long double)
#define PERCS_SHMEM_OLD_BIT_DECL(N, T)					\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, and)				\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, or)				\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, xor)
#define PERCS_SHMEM_OLD_NUM_DECL(N, T)					\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, max)				\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, min)				\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, sum)				\
	PERCS_SHMEM_OLD_RED_DECL1(N, T, prod)
PERCS_SHMEM_OLD_INT_TYPES(PERCS_SHMEM_OLD_BIT_DECL)
PERCS_SHMEM_OLD_INT_TYPES(PERCS_SHMEM_OLD_NUM_DECL)
PERCS_SHMEM_OLD_FLT_TYPES(PERCS_SHMEM_OLD_NUM_DECL)
#ifndef __cplusplus
PERCS_SHMEM_OLD_RED_DECL1(complexf, float _Complex, sum)
PERCS_SHMEM_OLD_RED_DECL1(complexf, float _Complex, prod)
PERCS_SHMEM_OLD_RED_DECL1(complexd, double _Complex, sum)
PERCS_SHMEM_OLD_RED_DECL1(complexd, double _Complex, prod)
#endif

/* ---- distributed locking ------------------------------------------------- */

/*
 * A lock is a symmetric long, zero before first use.  A ticket lock kept
 * in PE 0's copy: two 32-bit counters (next ticket, now serving) changed
 * by the atomic unit, so waiters are served in arrival order.
 */
/** shmem_set_lock() - take the lock, waiting for it */
void shmem_set_lock(long *lock);
/** shmem_clear_lock() - shmem_quiet(), then release the lock */
void shmem_clear_lock(long *lock);
/** shmem_test_lock() - take the lock if free: 0 taken, 1 held by another */
int shmem_test_lock(long *lock);

/* ---- the 1.0-1.3 names of setup and memory ------------------------------- */

/** start_pes() - shmem_init(); @npes is ignored, as 1.2 says */
void start_pes(int npes);
/** _my_pe() - shmem_my_pe() */
int _my_pe(void);
/** _num_pes() - shmem_n_pes() */
int _num_pes(void);
/** shmalloc() - shmem_malloc() */
void *shmalloc(size_t size);
/** shfree() - shmem_free() */
void shfree(void *ptr);
/** shrealloc() - shmem_realloc() */
void *shrealloc(void *ptr, size_t size);
/** shmemalign() - shmem_align() */
void *shmemalign(size_t alignment, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* PERCS_SHMEM_H */
