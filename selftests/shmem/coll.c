// SPDX-License-Identifier: GPL-2.0
/*
 * coll: every <type>_<op>_reduce against a reference each PE computes on
 * its own (the inputs are a function of PE and index), on SHMEM_TEAM_WORLD
 * and on a team of every other PE (shmem_team_split_strided); broadcast,
 * collect, fcollect and alltoall; the 1.0-1.3 active-set forms and
 * shmem_barrier.  Values are small integers, so float sums are exact
 * whatever the order of combination.
 *
 * "coll sizes [STRIDE]" instead checks the reductions on a team of every
 * size 1 .. n (every_size()): one job covers every team size, far cheaper
 * than a job per size.  On percs-run's spread placement with 16 PEs, PEs 0 .. 7
 * and 8 .. 15 are each on distinct hubs, so teams of up to 8 from either
 * end run on CAU trees and larger ones in software.
 */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define NR	37	/* elements per reduction: more than one CAU packet */

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
/* Symmetric (global) buffers: a team's members alone cannot shmem_malloc. */
static _Alignas(16) char srcbuf[NR * 16];
static _Alignas(16) char dstbuf[NR * 16];
static double pWrk[NR];

/* Input element i of PE p: small and positive, different per PE. */
static long val(int p, int i, int op)
{
	if (op == 'p')	/* product: 1 or 2, so that it stays small */
		return 1 + ((p + i) % 5 == 0);
	return (p * 3 + i * 5) % 23 + 1;
}

static long ref(int op, int i, const int *pes, int k)
{
	long r = val(pes[0], i, op);

	for (int j = 1; j < k; j++) {
		long v = val(pes[j], i, op);

		switch (op) {
		case 's': r += v; break;
		case 'p': r *= v; break;
		case 'M': r = v > r ? v : r; break;
		case 'm': r = v < r ? v : r; break;
		case '&': r &= v; break;
		case '|': r |= v; break;
		case '^': r ^= v; break;
		}
	}
	return r;
}

/* Every red_stride-th type and op from red_phase (1, 0: all of them). */
static int red_stride = 1, red_phase;

#define TRY1(N, T, OP, C)						\
	do {								\
		T *src = (T *)(void *)srcbuf;				\
		if (idx++ % red_stride != red_phase)			\
			break;						\
		T *dst = (T *)(void *)dstbuf;				\
		for (int i = 0; i < NR; i++)				\
			src[i] = (T)val(me, i, C);			\
		if (tm != SHMEM_TEAM_INVALID) {				\
			CHECK(shmem_##N##_##OP##_reduce(tm, dst, src, NR) == 0, \
			      #N "_" #OP "_reduce");			\
			for (int i = 0; i < NR; i++)			\
				CHECK(dst[i] == (T)ref(C, i, pes, k),	\
				      #N "_" #OP "_reduce[%d] on %d PEs", i, k); \
		}							\
		checked++;						\
	} while (0);
#define BIT(N, T) TRY1(N, T, and, '&') TRY1(N, T, or, '|') TRY1(N, T, xor, '^')
#define CMPR(N, T) TRY1(N, T, max, 'M') TRY1(N, T, min, 'm')
#define ARITH(N, T) TRY1(N, T, sum, 's') TRY1(N, T, prod, 'p')

static int reductions(shmem_team_t tm, const int *pes, int k, int me)
{
	int checked = 0, idx = 0;

	PERCS_SHMEM_BIT_RED_TYPES(BIT)
	PERCS_SHMEM_CMP_RED_TYPES(CMPR)
	PERCS_SHMEM_CMP_RED_TYPES(ARITH)
	TRY1(complexf, float _Complex, sum, 's')
	TRY1(complexd, double _Complex, prod, 'p')
	return checked;
}

static void data_movement(int me, int n)
{
	int *src = shmem_malloc(8 * sizeof(int)), *dst = shmem_malloc((size_t)n * 8 * sizeof(int));
	size_t at = 0;

	for (int i = 0; i < 8; i++)
		src[i] = me * 100 + i;
	/* broadcast from the last PE: every dest gets it, the root's too. */
	memset(dst, 0, (size_t)n * 8 * sizeof(int));
	CHECK(shmem_int_broadcast(SHMEM_TEAM_WORLD, dst, src, 8, n - 1) == 0, "broadcast");
	for (int i = 0; i < 8; i++)
		CHECK(dst[i] == (n - 1) * 100 + i, "broadcast[%d] = %d", i, dst[i]);
	CHECK(shmem_int_fcollect(SHMEM_TEAM_WORLD, dst, src, 8) == 0, "fcollect");
	for (int p = 0; p < n; p++)
		for (int i = 0; i < 8; i++)
			CHECK(dst[p * 8 + i] == p * 100 + i, "fcollect[%d][%d]", p, i);
	/* collect: PE p gives p % 8 + 1 elements. */
	CHECK(shmem_int_collect(SHMEM_TEAM_WORLD, dst, src, (size_t)(me % 8 + 1)) == 0, "collect");
	for (int p = 0; p < n; p++)
		for (int i = 0; i <= p % 8; i++, at++)
			CHECK(dst[at] == p * 100 + i, "collect: PE %d elem %d = %d", p, i, dst[at]);
	shmem_free(src);
	/* alltoall: block j of PE p is p * 1000 + j. */
	src = shmem_malloc((size_t)n * 2 * sizeof(int));
	for (int j = 0; j < n; j++)
		src[2 * j] = src[2 * j + 1] = me * 1000 + j;
	CHECK(shmem_int_alltoall(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "alltoall");
	for (int p = 0; p < n; p++)
		CHECK(dst[2 * p] == p * 1000 + me && dst[2 * p + 1] == p * 1000 + me,
		      "alltoall from PE %d: %d", p, dst[2 * p]);
	shmem_free(src);
	shmem_free(dst);
}

/* The 1.0-1.3 forms on the active set of even PEs. */
static void old_forms(int me, int n)
{
	int size = (n + 1) / 2;
	long *s = shmem_malloc(NR * sizeof(long)), *d = shmem_malloc((size_t)n * NR * sizeof(long));
	double *ds = shmem_malloc(NR * sizeof(double)), *dd = shmem_malloc(NR * sizeof(double));
	int pes[64];

	for (int i = 0; i < size; i++)
		pes[i] = 2 * i;
	for (int i = 0; i < NR; i++) {
		s[i] = val(me, i, 's');
		ds[i] = (double)val(me, i, 'M');
	}
	if (me % 2 == 0) {
		shmem_long_sum_to_all(d, s, NR, 0, 1, size, (long *)pWrk, pSync);
		for (int i = 0; i < NR; i++)
			CHECK(d[i] == ref('s', i, pes, size), "long_sum_to_all[%d]", i);
		shmem_double_max_to_all(dd, ds, NR, 0, 1, size, pWrk, pSync);
		for (int i = 0; i < NR; i++)
			CHECK(dd[i] == (double)ref('M', i, pes, size), "double_max_to_all[%d]", i);
		shmem_barrier(0, 1, size, pSync);
		memset(d, 0, NR * sizeof(long));
		shmem_broadcast64(d, s, NR, 0, 0, 1, size, pSync);
		for (int i = 0; i < NR; i++)
			CHECK(me == 0 ? d[i] == 0 : d[i] == val(0, i, 's'),
			      "broadcast64[%d] = %ld", i, d[i]);
		shmem_fcollect64(d, s, 2, 0, 1, size, pSync);
		for (int p = 0; p < size; p++)
			CHECK(d[2 * p] == val(2 * p, 0, 's') && d[2 * p + 1] == val(2 * p, 1, 's'),
			      "fcollect64 block %d", p);
		shmem_collect32(d, s, 1, 0, 1, size, pSync);
		shmem_alltoall64(d, s, 1, 0, 1, size, pSync);
	}
	shmem_barrier_all();
	shmem_free(s);
	shmem_free(d);
	shmem_free(ds);
	shmem_free(dd);
}

/*
 * The reductions on a team of every size 1 .. @n, two disjoint teams at a
 * time so that no PE idles: round k (1 .. n/2, and n) splits PEs 0 .. k-1
 * and PEs k .. n-1 (sizes k and n - k); each PE checks its team.  A team
 * of size k checks every @stride-th type and op from (k - 1) % @stride:
 * with a stride of n, every type and op is checked on one size, and the
 * job costs about what a stride of 1 (everything on every size) costs
 * divided by n.
 */
static void every_size(int me, int n, int stride)
{
	int pes[64], checked = 0, sizes = 0;

	CHECK(stride >= 1, "stride %d", stride);
	for (int k = 1; k <= n; k = k < n / 2 ? k + 1 : k < n ? n : n + 1) {
		for (int part = 0; part < 2; part++) {
			int start = part ? k : 0, size = part ? n - k : k;
			shmem_team_t tm = SHMEM_TEAM_INVALID;

			if (!size)
				continue;
			CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, size, NULL, 0,
						       &tm) == 0, "split of %d PEs", size);
			CHECK((tm != SHMEM_TEAM_INVALID) == (me >= start && me < start + size),
			      "membership of %d PEs from %d", size, start);
			sizes++;
			if (tm == SHMEM_TEAM_INVALID)
				continue;
			CHECK(shmem_team_n_pes(tm) == size && shmem_team_my_pe(tm) == me - start,
			      "team pe %d of %d", shmem_team_my_pe(tm), shmem_team_n_pes(tm));
			for (int i = 0; i < size; i++)
				pes[i] = start + i;
			red_stride = stride;
			red_phase = (size - 1) % stride;
			checked += reductions(tm, pes, size, me);
			shmem_team_destroy(tm);
		}
	}
	shmem_barrier_all();
	CHECK(sizes == n + (n > 1 && n % 2 == 0), "%d teams for %d PEs", sizes, n);
	if (me == 0)
		printf("coll sizes: teams of 1 .. %d PEs, 1 in %d types and ops a size (%d on PE 0's)\n",
		       n, stride, checked);
}

int main(int argc, char **argv)
{
	int me, n, pes[64], k, checked;
	shmem_team_t even = SHMEM_TEAM_INVALID;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	CHECK(n <= 64, "at most 64 PEs");
	if (argc > 1 && !strcmp(argv[1], "sizes")) {
		every_size(me, n, argc > 2 ? atoi(argv[2]) : 1);
		shmem_finalize();
		return 0;
	}
	for (int i = 0; i < n; i++)
		pes[i] = i;
	checked = reductions(SHMEM_TEAM_WORLD, pes, n, me);
	data_movement(me, n);
	/* Every other PE, from PE 0. */
	k = (n + 1) / 2;
	CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, k, NULL, 0, &even) == 0,
	      "split");
	CHECK((even != SHMEM_TEAM_INVALID) == (me % 2 == 0), "membership");
	if (even != SHMEM_TEAM_INVALID) {
		CHECK(shmem_team_my_pe(even) == me / 2 && shmem_team_n_pes(even) == k,
		      "team pe %d of %d", shmem_team_my_pe(even), shmem_team_n_pes(even));
		CHECK(shmem_team_translate_pe(even, k - 1, SHMEM_TEAM_WORLD) == 2 * (k - 1),
		      "translate");
		for (int i = 0; i < k; i++)
			pes[i] = 2 * i;
		reductions(even, pes, k, me);
		CHECK(shmem_team_sync(even) == 0, "team sync");
		shmem_team_destroy(even);
	}
	old_forms(me, n);
	if (me == 0)
		printf("coll: %d PEs, %d reductions of every type and op, data movement, teams, 1.3 forms\n",
		       n, checked);
	shmem_finalize();
	return 0;
}
