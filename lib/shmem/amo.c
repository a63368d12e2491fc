// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: atomic memory operations, every one carried by the
 * HFI's atomic unit through libpercs's PGAS level (percs_amo()), also to
 * the calling PE (so that they are atomic with the others').
 *
 * The unit has ADD, AND, OR, XOR and CSWAP, with or without fetch, on 1-
 * to 8-byte operands.  The rest is built on them: fetch is a fetch-OR of
 * 0, inc an ADD of 1, set and swap a CSWAP loop (percs_amo_swap()).
 */
#include <string.h>

#include "shmem_internal.h"

/* Operand bits of a value of @w bytes (host order, zero-extended). */
static uint64_t bits(const void *v, size_t w)
{
	uint64_t u = 0;

	memcpy(&u, v, w);
	return u;
}

/* A fence before this operation: what came before completes first. */
void shmem_amo_fence(const char *call)
{
	int ret;

	if (shmem_g.fence_rdma) {
		shmem_rma_wait(call, 0);
		shmem_g.fence_rdma = false;
	}
	if (shmem_g.fence_amo) {
		ret = percs_atomic_quiet(shmem_g.w);
		if (ret)
			shmem_die(call, "an earlier atomic failed: %s",
				  percs_strerror(ret));
		shmem_g.fence_amo = false;
		shmem_g.amo_inflight = false;
	}
}

/*
 * Always inlined into each call: @w is then a constant, so bits() is a
 * load rather than a call of memcpy (the blocking fetch-add's latency is
 * measured against the native call: benchmarks.rst).
 */
static inline __attribute__((always_inline)) void
amo(const char *call, void *dest, int pe, unsigned int op, size_t w,
    const void *value, const void *cond, void *fetched, unsigned int flags)
{
	const struct percs_rmr *r;
	uint64_t off;
	int ret;

	shmem_need_init(call);
	r = shmem_remote(call, dest, w, pe, &off);
	shmem_amo_before(call);
	ret = percs_amo(shmem_g.w, r, off, op, (unsigned int)w,
			value ? bits(value, w) : 0, cond ? bits(cond, w) : 0,
			fetched, flags);
	if (ret)
		shmem_die(call, "atomic on PE %d: %s", pe, percs_strerror(ret));
	if (!(flags & PERCS_AMO_F_BLOCK))
		shmem_g.amo_inflight = true;
}

static void amo_swap(const char *call, void *dest, int pe, size_t w,
		     const void *value, void *old)
{
	const struct percs_rmr *r;
	uint64_t off;
	int ret;

	shmem_need_init(call);
	r = shmem_remote(call, dest, w, pe, &off);
	shmem_amo_before(call);
	ret = percs_amo_swap(shmem_g.w, r, off, (unsigned int)w,
			     bits(value, w), old);
	if (ret)
		shmem_die(call, "atomic swap on PE %d: %s", pe,
			  percs_strerror(ret));
}

void shmem_amo_signal(const char *call, uint64_t *sig_addr, int pe,
		      bool add, uint64_t value, bool nbi)
{
	if (add)
		amo(call, sig_addr, pe, PERCS_ATOMIC_ADD, sizeof(*sig_addr),
		    &value, NULL, NULL, nbi ? 0 : PERCS_AMO_F_BLOCK);
	else
		amo_swap(call, sig_addr, pe, sizeof(*sig_addr), &value, NULL);
}

#define B PERCS_AMO_F_BLOCK
#define EXT_DEF(N, T)							\
SHMEM_CTX_DEF(T, N##_atomic_fetch,					\
	{ T old;							\
	  amo(call, (void *)(uintptr_t)source, CTX_PE(pe),		\
	      PERCS_ATOMIC_OR, sizeof(T), NULL, NULL, &old, B);		\
	  return old; },						\
	const T *source, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_set,					\
	{ amo_swap(call, dest, CTX_PE(pe), sizeof(T), &value, NULL); },	\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(T, N##_atomic_swap,					\
	{ T old;							\
	  amo_swap(call, dest, CTX_PE(pe), sizeof(T), &value, &old);	\
	  return old; },						\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_fetch_nbi,				\
	{ amo(call, (void *)(uintptr_t)source, CTX_PE(pe),		\
	      PERCS_ATOMIC_OR, sizeof(T), NULL, NULL, fetch, 0); },	\
	T *fetch, const T *source, int pe)				\
SHMEM_CTX_DEF(void, N##_atomic_swap_nbi,				\
	{ amo_swap(call, dest, CTX_PE(pe), sizeof(T), &value, fetch); }, \
	T *fetch, T *dest, T value, int pe)
PERCS_SHMEM_AMO_EXT_TYPES(EXT_DEF)

#define STD_DEF(N, T)							\
SHMEM_CTX_DEF(T, N##_atomic_compare_swap,				\
	{ T old;							\
	  amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_CSWAP, sizeof(T),	\
	      &value, &cond, &old, B);					\
	  return old; },						\
	T *dest, T cond, T value, int pe)				\
SHMEM_CTX_DEF(T, N##_atomic_fetch_inc,					\
	{ T old;							\
	  T one = 1;							\
	  amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &one, NULL, &old, B);					\
	  return old; },						\
	T *dest, int pe)						\
SHMEM_CTX_DEF(void, N##_atomic_inc,					\
	{ T one = 1;							\
	  amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &one, NULL, NULL, 0); },					\
	T *dest, int pe)						\
SHMEM_CTX_DEF(T, N##_atomic_fetch_add,					\
	{ T old;							\
	  amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &value, NULL, &old, B);					\
	  return old; },						\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_add,					\
	{ amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &value, NULL, NULL, 0); },				\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_compare_swap_nbi,			\
	{ amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_CSWAP, sizeof(T),	\
	      &value, &cond, fetch, 0); },				\
	T *fetch, T *dest, T cond, T value, int pe)			\
SHMEM_CTX_DEF(void, N##_atomic_fetch_inc_nbi,				\
	{ T one = 1;							\
	  amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &one, NULL, fetch, 0); },					\
	T *fetch, T *dest, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_fetch_add_nbi,				\
	{ amo(call, dest, CTX_PE(pe), PERCS_ATOMIC_ADD, sizeof(T),	\
	      &value, NULL, fetch, 0); },				\
	T *fetch, T *dest, T value, int pe)
PERCS_SHMEM_AMO_TYPES(STD_DEF)

#define BIT1(N, T, OP, AOP)						\
SHMEM_CTX_DEF(T, N##_atomic_fetch_##OP,					\
	{ T old;							\
	  amo(call, dest, CTX_PE(pe), AOP, sizeof(T), &value, NULL,	\
	      &old, B);							\
	  return old; },						\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_##OP,					\
	{ amo(call, dest, CTX_PE(pe), AOP, sizeof(T), &value, NULL,	\
	      NULL, 0); },						\
	T *dest, T value, int pe)					\
SHMEM_CTX_DEF(void, N##_atomic_fetch_##OP##_nbi,			\
	{ amo(call, dest, CTX_PE(pe), AOP, sizeof(T), &value, NULL,	\
	      fetch, 0); },						\
	T *fetch, T *dest, T value, int pe)
#define BIT_DEF(N, T)							\
	BIT1(N, T, and, PERCS_ATOMIC_AND) BIT1(N, T, or, PERCS_ATOMIC_OR) \
	BIT1(N, T, xor, PERCS_ATOMIC_XOR)
PERCS_SHMEM_AMO_BIT_TYPES(BIT_DEF)

/* ---- the 1.0-1.3 names ---------------------------------------------------- */

#define OLD_DEF(N, T)							\
T shmem_##N##_finc(T *dest, int pe)					\
{ return shmem_##N##_atomic_fetch_inc(dest, pe); }			\
T shmem_##N##_fadd(T *dest, T value, int pe)				\
{ return shmem_##N##_atomic_fetch_add(dest, value, pe); }		\
T shmem_##N##_cswap(T *dest, T cond, T value, int pe)			\
{ return shmem_##N##_atomic_compare_swap(dest, cond, value, pe); }	\
void shmem_##N##_inc(T *dest, int pe)					\
{ shmem_##N##_atomic_inc(dest, pe); }					\
void shmem_##N##_add(T *dest, T value, int pe)				\
{ shmem_##N##_atomic_add(dest, value, pe); }
PERCS_SHMEM_OLD_AMO_TYPES(OLD_DEF)

#define OLD_EXT_DEF(N, T)						\
T shmem_##N##_swap(T *dest, T value, int pe)				\
{ return shmem_##N##_atomic_swap(dest, value, pe); }			\
T shmem_##N##_fetch(const T *source, int pe)				\
{ return shmem_##N##_atomic_fetch(source, pe); }			\
void shmem_##N##_set(T *dest, T value, int pe)				\
{ shmem_##N##_atomic_set(dest, value, pe); }
PERCS_SHMEM_OLD_EXT_TYPES(OLD_EXT_DEF)

long shmem_swap(long *dest, long value, int pe)
{
	return shmem_long_atomic_swap(dest, value, pe);
}
