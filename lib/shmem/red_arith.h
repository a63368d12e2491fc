/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem: the arithmetic of reductions, apart from moving data
 * (reduce.c), so that it can be unit-tested on the host: the element-wise
 * combination of the software path for every type and op, and the
 * widening of 8- and 16-bit elements to the CAU's 32-bit ones and back.
 */
#ifndef LIBPERCS_SHMEM_RED_ARITH_H
#define LIBPERCS_SHMEM_RED_ARITH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmem.h"

/* acc[i] = acc[i] OP in[i] for i < n. */
typedef void (*shmem_comb_fn)(void *acc, const void *in, size_t n);

#define SHMEM_COMB_DECL(N, T, OP)					\
	void shmem_comb_##N##_##OP(void *acc, const void *in, size_t n);
#define SHMEM_COMB_BIT_DECL(N, T)					\
	SHMEM_COMB_DECL(N, T, and) SHMEM_COMB_DECL(N, T, or)		\
	SHMEM_COMB_DECL(N, T, xor)
#define SHMEM_COMB_NUM_DECL(N, T)					\
	SHMEM_COMB_DECL(N, T, max) SHMEM_COMB_DECL(N, T, min)		\
	SHMEM_COMB_DECL(N, T, sum) SHMEM_COMB_DECL(N, T, prod)
PERCS_SHMEM_BIT_RED_TYPES(SHMEM_COMB_BIT_DECL)
PERCS_SHMEM_CMP_RED_TYPES(SHMEM_COMB_NUM_DECL)
/* and/or/xor of the signed types exist only in the 1.0-1.3 names. */
PERCS_SHMEM_OLD_INT_TYPES(SHMEM_COMB_BIT_DECL)
SHMEM_COMB_DECL(complexf, float _Complex, sum)
SHMEM_COMB_DECL(complexf, float _Complex, prod)
SHMEM_COMB_DECL(complexd, double _Complex, sum)
SHMEM_COMB_DECL(complexd, double _Complex, prod)

/* @n elements of @size (1 or 2) bytes at @src as 32-bit ones at @w. */
void shmem_red_widen(int32_t *w, const void *src, size_t n, size_t size,
		     bool is_signed);
/* Back: the low @size bytes of each of @w's @n elements to @dest. */
void shmem_red_narrow(void *dest, const int32_t *w, size_t n, size_t size);

#endif /* LIBPERCS_SHMEM_RED_ARITH_H */
