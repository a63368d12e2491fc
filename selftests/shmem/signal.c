// SPDX-License-Identifier: GPL-2.0
/*
 * signal: the OpenSHMEM 1.5 calls beyond the core - put-with-signal (SET
 * and ADD, blocking and not, typed, sized and on a context), the signal
 * found only after its data; strided alltoalls; the _vector waits;
 * team_split_2d's rows and columns and their configuration
 * (shmem_team_get_config); contexts, world and team-numbered.
 * Every answer is checked against what it must be.
 *
 *   signal ROUNDS
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define LEN	(64 * 1024 + 3)		/* an RDMA write, not in-descriptor */

static uint64_t sig_set, sig_add;
static uint8_t data[LEN];
static long flags[8];

static uint8_t pat(int pe, int round, size_t i)
{
	return (uint8_t)(pe * 29 + round * 13 + i * 7 + (i >> 10));
}

/* Ring of put-with-signal: the data is there once the signal is. */
static void signals(int me, int n, int rounds)
{
	int right = (me + 1) % n, left = (me + n - 1) % n;
	uint8_t *src = shmem_malloc(LEN);
	uint64_t *heap_sig = shmem_calloc(1, sizeof(uint64_t));
	int64_t *small = shmem_calloc(4, sizeof(int64_t));
	int64_t vals[4];

	CHECK(src && heap_sig && small, "allocation");
	for (int r = 1; r <= rounds; r++) {
		for (size_t i = 0; i < LEN; i++)
			src[i] = pat(me, r, i);
		if (r % 2)
			shmem_putmem_signal(data, src, LEN, &sig_set, r,
					    SHMEM_SIGNAL_SET, right);
		else
			shmem_putmem_signal_nbi(data, src, LEN, &sig_set, r,
						SHMEM_SIGNAL_SET, right);
		CHECK(shmem_signal_wait_until(&sig_set, SHMEM_CMP_EQ, r) ==
		      (uint64_t)r, "signal");
		for (size_t i = 0; i < LEN; i++)
			CHECK(data[i] == pat(left, r, i),
			      "round %d byte %zu: %u, want %u (signal before data)",
			      r, i, data[i], pat(left, r, i));
		shmem_quiet();
		shmem_barrier_all();	/* data may be overwritten now */
	}

	/* ADD from every PE to PE 0: n * rounds adds, data each time. */
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 4; k++)
			vals[k] = (int64_t)me * 100 + r * 4 + k;
		shmem_int64_put_signal(small, vals, 4, heap_sig, 1,
				       SHMEM_SIGNAL_ADD, 0);
		shmem_barrier_all();
	}
	shmem_put64_signal_nbi(small, vals, 0, &sig_add, 2, SHMEM_SIGNAL_ADD,
			       0);
	shmem_ctx_put8_signal(SHMEM_CTX_DEFAULT, src, src, 0, &sig_add, 3,
			      SHMEM_SIGNAL_ADD, 0);
	shmem_quiet();
	shmem_barrier_all();
	if (me == 0) {
		CHECK(shmem_signal_fetch(heap_sig) == (uint64_t)n * rounds,
		      "ADD signal %llu, want %llu",
		      (unsigned long long)shmem_signal_fetch(heap_sig),
		      (unsigned long long)n * rounds);
		CHECK(shmem_signal_fetch(&sig_add) == (uint64_t)n * 5,
		      "sized/ctx ADD signal %llu, want %d",
		      (unsigned long long)shmem_signal_fetch(&sig_add), n * 5);
	}
	shmem_barrier_all();
	shmem_free(small);
	shmem_free(heap_sig);
	shmem_free(src);
}

/* Strided alltoall: element k for member j at (j * nelems + k) * sst. */
static void alltoalls(int me, int n)
{
	enum { NE = 3, SST = 2, DST = 3 };
	int32_t *src = shmem_malloc(sizeof(int32_t) * n * NE * SST);
	int32_t *dst = shmem_malloc(sizeof(int32_t) * n * NE * DST);

	CHECK(src && dst, "allocation");
	for (int e = 0; e < n * NE * SST; e++)
		src[e] = -1;
	for (int j = 0; j < n; j++)
		for (int k = 0; k < NE; k++)
			src[(j * NE + k) * SST] = me * 10000 + j * 100 + k;
	memset(dst, 0xff, sizeof(int32_t) * n * NE * DST);
	CHECK(shmem_int32_alltoalls(SHMEM_TEAM_WORLD, dst, src, DST, SST,
				    NE) == 0, "alltoalls");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < NE; k++) {
			int32_t got = dst[(i * NE + k) * DST];

			CHECK(got == i * 10000 + me * 100 + k,
			      "from %d element %d: %d", i, k, got);
			if (DST > 1)
				CHECK(dst[(i * NE + k) * DST + 1] == -1,
				      "a gap was written");
		}
	CHECK(shmem_alltoallsmem(SHMEM_TEAM_INVALID, dst, src, 1, 1, 1) == -1,
	      "invalid team");
	shmem_barrier_all();
	shmem_free(dst);
	shmem_free(src);
}

/* Each PE sets flags[me] on every PE to me + 1; wait with per-element values. */
static void vector_waits(int me, int n)
{
	long want[8];
	size_t idx[8], k;
	int status[8] = { 0 };
	int m = n < 8 ? n : 8;

	for (int i = 0; i < m; i++)
		want[i] = i + 1;
	CHECK(!shmem_long_test_all_vector(flags, m, NULL, SHMEM_CMP_EQ, want) ||
	      m == 0, "all before any put");
	shmem_barrier_all();
	if (me < m)
		for (int pe = 0; pe < n; pe++)
			shmem_long_atomic_set(&flags[me], me + 1, pe);
	shmem_long_wait_until_all_vector(flags, m, NULL, SHMEM_CMP_EQ, want);
	CHECK(shmem_long_test_all_vector(flags, m, NULL, SHMEM_CMP_EQ, want),
	      "all");
	k = shmem_long_wait_until_any_vector(flags, m, NULL, SHMEM_CMP_GE,
					     want);
	CHECK(k < (size_t)m, "any: %zu", k);
	k = shmem_long_wait_until_some_vector(flags, m, idx, NULL,
					      SHMEM_CMP_EQ, want);
	CHECK(k == (size_t)m, "some: %zu of %d", k, m);
	/* Every element left out: any finds none, some none. */
	for (int i = 0; i < m; i++)
		status[i] = 1;
	CHECK(shmem_long_wait_until_any_vector(flags, m, status, SHMEM_CMP_EQ,
					       want) == SIZE_MAX, "any, all out");
	CHECK(shmem_long_test_some_vector(flags, m, idx, status, SHMEM_CMP_EQ,
					  want) == 0, "some, all out");
	/* Element 0 compared with a value it does not have: not all. */
	want[0] = -5;
	CHECK(!shmem_long_test_all_vector(flags, m, NULL, SHMEM_CMP_EQ, want),
	      "all with a false element");
	CHECK(shmem_long_test_any_vector(flags, m, NULL, SHMEM_CMP_EQ, want) ==
	      (m > 1 ? 1 : SIZE_MAX), "any skips the false element");
	shmem_barrier_all();
}

/* Rows and columns of the world; a context on the row numbers its PEs. */
static void split_2d(int me, int n)
{
	int xr = n > 2 ? 3 : 1;
	shmem_team_t row, col, t;
	shmem_ctx_t ctx;
	long *slot = shmem_calloc(1, sizeof(long));

	shmem_team_config_t rows_cfg = { .num_contexts = 3 }, got;

	CHECK(slot, "allocation");
	CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, &rows_cfg,
				  SHMEM_TEAM_NUM_CONTEXTS, &row, NULL, 0,
				  &col) == 0, "split_2d");
	/* The configuration comes back as given: 3 for rows, none for columns. */
	got.num_contexts = -1;
	CHECK(shmem_team_get_config(row, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
	      got.num_contexts == 3, "row num_contexts %d", got.num_contexts);
	CHECK(shmem_team_get_config(col, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
	      got.num_contexts == 0, "column num_contexts %d",
	      got.num_contexts);
	CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS,
				    &got) == 0 && got.num_contexts == 0,
	      "world num_contexts %d", got.num_contexts);
	got.num_contexts = 7;
	CHECK(shmem_team_get_config(row, 0, &got) == 0 &&
	      got.num_contexts == 7, "mask 0 wrote num_contexts");
	CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, 0, &got) == -1,
	      "get_config of SHMEM_TEAM_INVALID");
	CHECK(row != SHMEM_TEAM_INVALID && col != SHMEM_TEAM_INVALID, "teams");
	CHECK(shmem_team_my_pe(row) == me % xr, "x %d, want %d",
	      shmem_team_my_pe(row), me % xr);
	CHECK(shmem_team_my_pe(col) == me / xr, "y %d, want %d",
	      shmem_team_my_pe(col), me / xr);
	CHECK(shmem_team_n_pes(row) ==
	      (n - me / xr * xr < xr ? n - me / xr * xr : xr), "row size %d",
	      shmem_team_n_pes(row));
	CHECK(shmem_team_n_pes(col) == (n - me % xr + xr - 1) / xr,
	      "column size %d", shmem_team_n_pes(col));

	/* A context of the row: PE k is the row's k-th. */
	CHECK(shmem_team_create_ctx(row, SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx");
	CHECK(shmem_ctx_get_team(ctx, &t) == 0 && t == row, "ctx team");
	shmem_ctx_long_atomic_add(ctx, slot, me + 1, 0);
	shmem_ctx_quiet(ctx);
	shmem_barrier_all();
	if (me % xr == 0) {
		long want = 0;

		for (int pe = me; pe < me + xr && pe < n; pe++)
			want += pe + 1;
		CHECK(*slot == want, "row sum %ld, want %ld", *slot, want);
	}
	shmem_ctx_destroy(ctx);
	shmem_ctx_destroy(SHMEM_CTX_INVALID);
	shmem_team_destroy(row);
	shmem_team_destroy(col);
	CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &ctx) == -1 &&
	      ctx == SHMEM_CTX_INVALID, "ctx on an invalid team");
	CHECK(shmem_ctx_create(1L << 20, &ctx) == -1 &&
	      ctx == SHMEM_CTX_INVALID, "unknown options");
	CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &row, NULL, 0,
				  &col) == -1 && row == SHMEM_TEAM_INVALID &&
	      col == SHMEM_TEAM_INVALID, "xrange 0");
	shmem_barrier_all();
	shmem_free(slot);
}

/* A world context: the typed, sized and mem calls, and its fence. */
static void world_ctx(int me, int n)
{
	shmem_ctx_t ctx;
	int right = (me + 1) % n, left = (me + n - 1) % n;
	int *a = shmem_calloc(4, sizeof(int));
	int v[4] = { me, me + 1, me + 2, me + 3 }, g[4];

	CHECK(a, "allocation");
	CHECK(shmem_ctx_create(SHMEM_CTX_SERIALIZED, &ctx) == 0, "ctx");
	shmem_ctx_int_put(ctx, a, v, 2, right);
	shmem_ctx_fence(ctx);
	shmem_ctx_put32(ctx, a + 2, v + 2, 1, right);
	shmem_ctx_int_p(ctx, a + 3, me + 3, right);
	shmem_ctx_quiet(ctx);
	shmem_barrier_all();
	for (int i = 0; i < 4; i++)
		CHECK(a[i] == left + i, "a[%d] %d, want %d", i, a[i], left + i);
	shmem_ctx_getmem(ctx, g, a, sizeof(g), right);
	for (int i = 0; i < 4; i++)
		CHECK(g[i] == me + i, "g[%d] %d", i, g[i]);
	CHECK(shmem_ctx_int_g(ctx, a, right) == me, "g");
	CHECK(shmem_ctx_int_atomic_fetch_add(ctx, a, 0, right) == me, "amo");
	shmem_barrier_all();
	shmem_ctx_destroy(ctx);
	shmem_free(a);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, me, n;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	signals(me, n, rounds);
	alltoalls(me, n);
	vector_waits(me, n);
	split_2d(me, n);
	world_ctx(me, n);
	shmem_barrier_all();
	if (me == 0)
		printf("signal: %d PEs, %d rounds\n", n, rounds);
	shmem_finalize();
	return 0;
}
