// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: the arithmetic of reductions (red_arith.h).
 */
#include <string.h>

#include "red_arith.h"

/*
 * Element-wise combination in C, for the software path.  Products go
 * through unsigned int (x * 1U * y): two unsigned shorts promote to int,
 * whose product can overflow (undefined); unsigned arithmetic wraps, and
 * the low bits are the same.
 */
#define COMB(N, T, OP, EXPR)						\
void shmem_comb_##N##_##OP(void *acc, const void *in, size_t n)	\
{									\
	T *a = acc;							\
	const T *b = in;						\
	for (size_t i = 0; i < n; i++) {				\
		T x = a[i], y = b[i];					\
		a[i] = (T)(EXPR);					\
	}								\
}
#define BIT_COMB(N, T)							\
	COMB(N, T, and, x & y) COMB(N, T, or, x | y) COMB(N, T, xor, x ^ y)
#define NUM_COMB(N, T)							\
	COMB(N, T, max, y > x ? y : x) COMB(N, T, min, y < x ? y : x)	\
	COMB(N, T, sum, x + y) COMB(N, T, prod, x * 1U * y)
PERCS_SHMEM_BIT_RED_TYPES(BIT_COMB)
PERCS_SHMEM_CMP_RED_TYPES(NUM_COMB)
PERCS_SHMEM_OLD_INT_TYPES(BIT_COMB)
COMB(complexf, float _Complex, sum, x + y)
COMB(complexf, float _Complex, prod, x * y)
COMB(complexd, double _Complex, sum, x + y)
COMB(complexd, double _Complex, prod, x * y)

void shmem_red_widen(int32_t *w, const void *src, size_t n, size_t size,
		     bool is_signed)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)src + i * size;
		int16_t s16;
		uint16_t u16;

		if (size == 1) {
			w[i] = is_signed ? (int8_t)*p : *p;
		} else {
			/* memcpy: the source need not be 2-byte aligned. */
			memcpy(&s16, p, 2);
			memcpy(&u16, p, 2);
			w[i] = is_signed ? s16 : u16;
		}
	}
}

void shmem_red_narrow(void *dest, const int32_t *w, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = (unsigned char *)dest + i * size;
		uint16_t u16 = (uint16_t)w[i];

		if (size == 1)
			*p = (unsigned char)w[i];
		else
			memcpy(p, &u16, 2);
	}
}
