// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The reductions' arithmetic (red_arith.c) for every type and op: the
 * software path's combination of 5 members' vectors, in member order,
 * against a reference computed another way (in uintmax_t with the type's
 * wrap-around for integers, in long double for floating types, by parts
 * for complex), and the CAU path's widening of 8- and 16-bit elements.
 * Inputs are small integers (negative ones too), so every floating result
 * is exact.
 */
#include <complex.h>
#include <stdint.h>

#include "red_arith.h"
#include "unit.h"

#define K	5	/* members */
#define LEN	67	/* elements */

static long long val(int k, int i, int op)
{
	unsigned int h = (unsigned int)(k * 7919 + i * 104729 + op * 31);

	h ^= h >> 7;
	h *= 2654435761U;
	h ^= h >> 13;
	if (op == 'p')		/* products of 5 stay within 8 bits' range */
		return (long long)(h % 5) - 2;
	return (long long)(h % 200) - 60;
}

/* The reference of op @op over the members for element @i, as type T. */
#define REF_INT(T, op, i, out)						\
	do {								\
		uintmax_t u = (uintmax_t)(T)val(0, i, op);		\
		T r = (T)val(0, i, op);					\
		for (int k = 1; k < K; k++) {				\
			T v = (T)val(k, i, op);				\
			switch (op) {					\
			case 's': u += (uintmax_t)v; break;		\
			case 'p': u *= (uintmax_t)v; break;		\
			case '&': u &= (uintmax_t)v; break;		\
			case '|': u |= (uintmax_t)v; break;		\
			case '^': u ^= (uintmax_t)v; break;		\
			case 'M': if (v > r) r = v; break;		\
			case 'm': if (v < r) r = v; break;		\
			}						\
		}							\
		(out) = op == 'M' || op == 'm' ? r : (T)u;		\
	} while (0)

#define REF_FLT(T, op, i, out)						\
	do {								\
		long double r = (long double)val(0, i, op);		\
		for (int k = 1; k < K; k++) {				\
			long double v = (long double)val(k, i, op);	\
			switch (op) {					\
			case 's': r += v; break;			\
			case 'p': r *= v; break;			\
			case 'M': if (v > r) r = v; break;		\
			case 'm': if (v < r) r = v; break;		\
			}						\
		}							\
		(out) = (T)r;						\
	} while (0)

#define IS_FLT(T)	((T)0.5 != 0)

/* Combine K members' vectors with FN and compare with the reference. */
#define TRY(N, T, OP, C)						\
	do {								\
		T acc[LEN], in[LEN], want;				\
		for (int i = 0; i < LEN; i++)				\
			acc[i] = (T)val(0, i, C);			\
		for (int k = 1; k < K; k++) {				\
			for (int i = 0; i < LEN; i++)			\
				in[i] = (T)val(k, i, C);		\
			shmem_comb_##N##_##OP(acc, in, LEN);		\
		}							\
		for (int i = 0; i < LEN; i++) {				\
			if (IS_FLT(T))					\
				REF_FLT(T, C, i, want);			\
			else						\
				REF_INT(T, C, i, want);			\
			if (acc[i] != want) {				\
				t_fail(__FILE__, __LINE__,		\
				       "%s_%s[%d]: %Lg, want %Lg", #N, #OP, i, \
				       (long double)acc[i], (long double)want); \
				break;					\
			}						\
		}							\
		checked++;						\
	} while (0);

#define BIT(N, T) TRY(N, T, and, '&') TRY(N, T, or, '|') TRY(N, T, xor, '^')
#define NUM(N, T)							\
	TRY(N, T, max, 'M') TRY(N, T, min, 'm') TRY(N, T, sum, 's')	\
	TRY(N, T, prod, 'p')

static void t_bitwise(void)
{
	int checked = 0;

	PERCS_SHMEM_BIT_RED_TYPES(BIT)
	/* and/or/xor of the signed types: the 1.0-1.3 names only. */
	PERCS_SHMEM_OLD_INT_TYPES(BIT)
	CHECK_EQ(checked, (14 + 4) * 3);
}

static void t_arith(void)
{
	int checked = 0;

	PERCS_SHMEM_CMP_RED_TYPES(NUM)
	CHECK_EQ(checked, 24 * 4);
}

#define CTRY(N, T, R)							\
	do {								\
		T acc[LEN], in[LEN];					\
		for (int op = 's'; op; op = op == 's' ? 'p' : 0) {	\
			for (int i = 0; i < LEN; i++)			\
				acc[i] = (R)val(0, i, op) + (R)val(0, i + 1, op) * I; \
			for (int k = 1; k < K; k++) {			\
				for (int i = 0; i < LEN; i++)		\
					in[i] = (R)val(k, i, op) +	\
						(R)val(k, i + 1, op) * I; \
				if (op == 's')				\
					shmem_comb_##N##_sum(acc, in, LEN); \
				else					\
					shmem_comb_##N##_prod(acc, in, LEN); \
			}						\
			for (int i = 0; i < LEN; i++) {			\
				long double re = (long double)val(0, i, op); \
				long double im = (long double)val(0, i + 1, op); \
				for (int k = 1; k < K; k++) {		\
					long double a = (long double)val(k, i, op); \
					long double b = (long double)val(k, i + 1, op); \
					long double t = re;		\
					if (op == 's') {		\
						re += a;		\
						im += b;		\
					} else {			\
						re = t * a - im * b;	\
						im = t * b + im * a;	\
					}				\
				}					\
				CHECK(creal(acc[i]) == re && cimag(acc[i]) == im); \
			}						\
		}							\
	} while (0)

static void t_complex(void)
{
	CTRY(complexf, float _Complex, float);
	CTRY(complexd, double _Complex, double);
}

/* The CAU path: 8- and 16-bit elements widened to 32 bits, combined
 * there, narrowed back; the low bits of the wide sum are the narrow sum,
 * and sign extension keeps max and min right. */
#define WTRY(T, SGN)							\
	do {								\
		T in[K][LEN], back[LEN];				\
		int32_t w[K][LEN], sum[LEN], max[LEN];			\
		for (int k = 0; k < K; k++) {				\
			for (int i = 0; i < LEN; i++)			\
				in[k][i] = (T)(val(k, i, 's') * 3);	\
			shmem_red_widen(w[k], in[k], LEN, sizeof(T), SGN); \
		}							\
		for (int i = 0; i < LEN; i++) {				\
			T s = in[0][i], m = in[0][i];			\
			sum[i] = max[i] = w[0][i];			\
			for (int k = 1; k < K; k++) {			\
				CHECK_EQ(w[k][i], in[k][i]);		\
				s = (T)(s + in[k][i]);			\
				if (in[k][i] > m)			\
					m = in[k][i];			\
				sum[i] += w[k][i];			\
				if (w[k][i] > max[i])			\
					max[i] = w[k][i];		\
			}						\
			in[0][i] = s;					\
			in[1][i] = m;					\
		}							\
		shmem_red_narrow(back, sum, LEN, sizeof(T));		\
		for (int i = 0; i < LEN; i++)				\
			CHECK_EQ(back[i], in[0][i]);			\
		shmem_red_narrow(back, max, LEN, sizeof(T));		\
		for (int i = 0; i < LEN; i++)				\
			CHECK_EQ(back[i], in[1][i]);			\
	} while (0)

static void t_widen(void)
{
	WTRY(int8_t, true);
	WTRY(uint8_t, false);
	WTRY(int16_t, true);
	WTRY(uint16_t, false);
}

const struct unit_test red_arith_tests[] = {
	{ "reduce: and/or/xor of every integer type against a reference", t_bitwise },
	{ "reduce: max/min/sum/prod of every type against a reference", t_arith },
	{ "reduce: complex sum and product by parts", t_complex },
	{ "reduce: 8/16-bit elements widened for the CAU and narrowed back", t_widen },
	{ NULL, NULL }
};
