// SPDX-License-Identifier: GPL-2.0
/*
 * atomics: every AMO on every standard AMO type against a known answer;
 * a distributed histogram with atomic adds; a work queue handed out by
 * fetch-add; a counter protected by shmem_set_lock.  Argument: work items
 * per PE (default 40).
 */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

#define BINS	16

static long hist[BINS];		/* this PE's share of the histogram */
static long next_item;		/* the work queue's head, on PE 0 */
static int done_by[4096];	/* item -> who took it + 1, on PE 0 */
static long lock;
static long counter;		/* protected by lock, on PE 0 */
static long mine, sum;

/* Every op of one type on PE target's copy of *x, checked. */
#define AMO_CHECK(N, T)							\
static void amo_##N(T *x, int target)					\
{									\
	T old;								\
	shmem_##N##_atomic_set(x, (T)5, target);			\
	CHECK(shmem_##N##_atomic_fetch(x, target) == (T)5, #N " set/fetch"); \
	old = shmem_##N##_atomic_fetch_add(x, (T)3, target);		\
	CHECK(old == (T)5, #N " fetch_add old %lld", (long long)old);	\
	shmem_##N##_atomic_add(x, (T)2, target);			\
	shmem_##N##_atomic_inc(x, target);				\
	CHECK(shmem_##N##_atomic_fetch_inc(x, target) == (T)11, #N " inc"); \
	CHECK(shmem_##N##_atomic_compare_swap(x, (T)99, (T)1, target) == (T)12, \
	      #N " failed cswap");					\
	CHECK(shmem_##N##_atomic_compare_swap(x, (T)12, (T)-1, target) == (T)12, \
	      #N " cswap");						\
	CHECK(shmem_##N##_atomic_swap(x, (T)7, target) == (T)-1, #N " swap"); \
	shmem_##N##_atomic_fetch_add_nbi(&old, x, (T)1, target);	\
	shmem_quiet();							\
	CHECK(old == (T)7, #N " fetch_add_nbi %lld", (long long)old);	\
	CHECK(shmem_##N##_atomic_fetch(x, target) == (T)8, #N " after nbi"); \
}
/* The 1.0-1.3 names on the types that have them. */
#define AMO_OLD(N, T)							\
static void old_##N(T *x, int target)					\
{									\
	shmem_##N##_set(x, (T)8, target);				\
	CHECK(shmem_##N##_finc(x, target) == (T)8 &&			\
	      shmem_##N##_fadd(x, (T)2, target) == (T)9 &&		\
	      shmem_##N##_cswap(x, (T)11, (T)20, target) == (T)11 &&	\
	      shmem_##N##_swap(x, (T)30, target) == (T)20, #N " 1.3 names"); \
	shmem_##N##_inc(x, target);					\
	shmem_##N##_add(x, (T)4, target);				\
	CHECK(shmem_##N##_fetch(x, target) == (T)35, #N " 1.3 inc/add"); \
}
#define AMO_BITS(N, T)							\
static void bits_##N(T *x, int target)					\
{									\
	shmem_##N##_atomic_set(x, (T)0xf0, target);			\
	CHECK(shmem_##N##_atomic_fetch_and(x, (T)0x3c, target) == (T)0xf0, #N " and"); \
	CHECK(shmem_##N##_atomic_fetch_or(x, (T)0x01, target) == (T)0x30, #N " or"); \
	CHECK(shmem_##N##_atomic_fetch_xor(x, (T)0xff, target) == (T)0x31, #N " xor"); \
	shmem_##N##_atomic_and(x, (T)0xf0, target);			\
	shmem_##N##_atomic_or(x, (T)0x100, target);			\
	shmem_##N##_atomic_xor(x, (T)0x1, target);			\
	CHECK(shmem_##N##_atomic_fetch(x, target) == (T)0x1c1, #N " bits %llx", \
	      (unsigned long long)shmem_##N##_atomic_fetch(x, target)); \
}
PERCS_SHMEM_AMO_TYPES(AMO_CHECK)
PERCS_SHMEM_OLD_AMO_TYPES(AMO_OLD)
PERCS_SHMEM_AMO_BIT_TYPES(AMO_BITS)

static void every_amo(int me, int n)
{
	/* One slot per (type, PE): PE me works on its slot at PE target. */
	uint64_t *slots = shmem_calloc((size_t)n * 32, sizeof(uint64_t));
	int t = (me + 1) % n, s = 0;
	float f;
	double d;

#define RUN(N, T) amo_##N((T *)&slots[me * 32 + s++], t);
	PERCS_SHMEM_AMO_TYPES(RUN)
#define RUNB(N, T) bits_##N((T *)&slots[me * 32 + s++], t);
	PERCS_SHMEM_AMO_BIT_TYPES(RUNB)
#define RUNO(N, T) old_##N((T *)&slots[me * 32 + s++], t);
	PERCS_SHMEM_OLD_AMO_TYPES(RUNO)
	/* float/double: fetch, set, swap on the bit pattern. */
	shmem_float_atomic_set((float *)&slots[me * 32 + 30], 1.5f, t);
	f = shmem_float_atomic_swap((float *)&slots[me * 32 + 30], -2.25f, t);
	CHECK(f == 1.5f, "float swap %g", f);
	CHECK(shmem_float_atomic_fetch((float *)&slots[me * 32 + 30], t) == -2.25f,
	      "float fetch");
	shmem_double_atomic_set((double *)&slots[me * 32 + 31], 1e300, t);
	d = shmem_double_swap((double *)&slots[me * 32 + 31], 3.0, t);
	CHECK(d == 1e300 && shmem_double_atomic_fetch((double *)&slots[me * 32 + 31], t) == 3.0,
	      "double swap/fetch");
	shmem_free(slots);
}

int main(int argc, char **argv)
{
	int per = argc > 1 ? atoi(argv[1]) : 40, me, n, total;
	long item;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	total = per * n;
	CHECK(total <= 4096, "too many items");
	every_amo(me, n);
	shmem_barrier_all();

	/* Histogram: value v goes to bin v % (BINS * n), on PE bin / BINS. */
	for (int i = 0; i < per; i++) {
		int v = (me * 7919 + i * 104729) % (BINS * n);

		if (i % 3)
			shmem_long_atomic_add(&hist[v % BINS], 1, v / BINS);
		else
			shmem_long_atomic_inc(&hist[v % BINS], v / BINS);
	}
	shmem_barrier_all();
	for (int b = 0; b < BINS; b++) {
		long want = 0;

		for (int p = 0; p < n; p++)
			for (int i = 0; i < per; i++)
				want += (p * 7919 + i * 104729) % (BINS * n) ==
					me * BINS + b;
		CHECK(hist[b] == want, "bin %d has %ld want %ld", me * BINS + b,
		      hist[b], want);
	}

	/* Work queue: take items until none is left; each once. */
	while ((item = shmem_long_atomic_fetch_add(&next_item, 1, 0)) < total) {
		CHECK(shmem_int_atomic_compare_swap(&done_by[item], 0, me + 1, 0) == 0,
		      "item %ld taken twice", item);
		mine++;
	}
	shmem_barrier_all();
	if (me == 0) {
		for (int i = 0; i < total; i++)
			CHECK(done_by[i] > 0, "item %d never taken", i);
	}

	/* Lock-protected counter: get, add, put under the lock. */
	for (int i = 0; i < per; i++) {
		long c;

		shmem_set_lock(&lock);
		c = shmem_long_g(&counter, 0);
		shmem_long_p(&counter, c + 1, 0);
		shmem_clear_lock(&lock);
	}
	shmem_barrier_all();
	if (me == 0) {
		CHECK(counter == total, "locked counter %ld want %d", counter, total);
		CHECK(shmem_test_lock(&lock) == 0, "test_lock of a free lock");
	}
	shmem_barrier_all();
	if (me == n - 1 && n > 1)
		CHECK(shmem_test_lock(&lock) == 1, "test_lock of a held lock");
	shmem_barrier_all();
	if (me == 0)
		shmem_clear_lock(&lock);
	shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &sum, &mine, 1);
	CHECK(sum == total, "items taken %ld want %d", sum, total);
	if (me == 0)
		printf("atomics: %d PEs, every AMO type, histogram, work queue of %d, locked counter %ld\n",
		       n, total, counter);
	shmem_finalize();
	return 0;
}
