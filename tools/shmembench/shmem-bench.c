// SPDX-License-Identifier: GPL-2.0
/*
 * percs-shmem-bench: OpenSHMEM calls against the native libpercs
 * operations they are built on, measured side by side in one run (the
 * machines are noisy: only ratios from one run count).
 *
 *   percs-run -n 2 percs-shmem-bench [ITERS]
 *
 * PE 0 measures, PE 1 is the target.  Besides its SHMEM state each PE
 * reserves a window of its own on its HFI and registers a buffer there;
 * the two exchange those registrations through symmetric memory.  Each
 * figure alternates the SHMEM and the native loop five times and keeps
 * the median of each, so that drift hits both.
 *
 *   atomic   shmem_long_atomic_fetch_add vs percs_atomic_fetch_add64
 *            (half round trip... a blocking fetch is a full round trip:
 *            reported as the time per call)
 *   put8     shmem_long_p + shmem_quiet vs an 8-byte percs_rdma_write
 *            waited for its completion
 *   bw       OSU-style sweep 1 KiB .. 1 MiB: shmem_putmem (heap to heap)
 *            vs percs_rdma_write + completion, bytes/s
 *
 * Targets (issue 20): atomic <= 1.2x, put8 <= 1.3x, bw(1 MiB) >= 0.9x.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <shmem.h>
#include "percs.h"

#define REPS	5
#define MAXLEN	(1U << 20)

static struct percs_rmr peer_rmr;	/* PE 1's native registration */
static long target;			/* shmem fetch-add target */

static struct percs_window *w;
static char *buf;
static uint32_t handle;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "percs-shmem-bench: %s: %s\n", what, percs_strerror(ret));
	shmem_global_exit(1);
}

static void native_setup(void)
{
	struct percs_window_attr wa = { .window = PERCS_WINDOW_ANY };
	const char *hub = getenv("PERCS_HUB"), *unit = getenv("PERCS_UNIT");
	struct percs_hfi *hfi;
	struct percs_rmr mine;
	int ret;

	ret = percs_hfi_open(hub ? atoi(hub) : 0, unit ? atoi(unit) : 0, &hfi);
	if (!ret)
		ret = percs_window_reserve(hfi, &wa, &w);
	if (ret)
		die("native window", ret);
	percs_hfi_close(hfi);
	buf = aligned_alloc(4096, MAXLEN);
	if (!buf)
		die("allocation", -ENOMEM);
	memset(buf, 1, MAXLEN);
	ret = percs_mr_reg(w, buf, MAXLEN, PERCS_ACCESS_ALL, &handle);
	if (ret)
		die("native registration", ret);
	memset(&mine, 0, sizeof(mine));
	mine.win = percs_window_addr(w);
	mine.handle = handle;
	mine.base = (uint64_t)(uintptr_t)buf;
	mine.length = MAXLEN;
	if (shmem_my_pe() == 1)
		shmem_putmem(&peer_rmr, &mine, sizeof(mine), 0);
	shmem_barrier_all();
}

/* An RDMA write, waited for as shmem waits for its own. */
static void native_write(size_t len)
{
	struct percs_cqe cqe;
	int ret, n;

	ret = percs_rdma_write(w, &peer_rmr.win, peer_rmr.handle, peer_rmr.base,
			       handle, buf, len, 0, 1);
	if (ret)
		die("percs_rdma_write", ret);
	while ((n = percs_cq_poll(w, &cqe, 1)) == 0)
		percs_kick(w, PERCS_KICK_F_SEND);
	if (n < 0 || cqe.res)
		die("RDMA completion", n < 0 ? n : cqe.res);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, REPS, sizeof(*v), cmp);
	return v[REPS / 2];
}

enum kind { ATOMIC, PUT8, BW };

/* Seconds per operation of one loop of @iters. */
static double loop(enum kind k, int shmem, size_t len, int iters, long *heap)
{
	double t0 = now();
	uint64_t old;
	int ret;

	for (int i = 0; i < iters; i++) {
		switch (k) {
		case ATOMIC:
			if (shmem) {
				shmem_long_atomic_fetch_add(&target, 1, 1);
			} else {
				ret = percs_atomic_fetch_add64(w, &peer_rmr, 0, 1, &old);
				if (ret)
					die("percs_atomic_fetch_add64", ret);
			}
			break;
		case PUT8:
			if (shmem) {
				shmem_long_p(heap, i, 1);
				shmem_quiet();
			} else {
				native_write(8);
			}
			break;
		case BW:
			if (shmem)
				shmem_putmem(heap, heap + MAXLEN / sizeof(long), len, 1);
			else
				native_write(len);
			break;
		}
	}
	return (now() - t0) / iters;
}

static void measure(enum kind k, size_t len, int iters, long *heap,
		    double *s, double *nat)
{
	double vs[REPS], vn[REPS];

	loop(k, 1, len, iters / 10 + 1, heap);	/* warm up both */
	loop(k, 0, len, iters / 10 + 1, heap);
	for (int r = 0; r < REPS; r++) {
		vs[r] = loop(k, 1, len, iters, heap);
		vn[r] = loop(k, 0, len, iters, heap);
	}
	*s = median(vs);
	*nat = median(vn);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	double s, nat;
	long *heap;

	shmem_init();
	if (shmem_n_pes() != 2) {
		if (shmem_my_pe() == 0)
			fprintf(stderr, "percs-shmem-bench: run it with percs-run -n 2\n");
		shmem_global_exit(2);
	}
	if (iters < 10)
		iters = 10;
	heap = shmem_malloc(2 * MAXLEN);
	if (!heap)
		die("shmem_malloc of 2 MiB (set SHMEM_SYMMETRIC_SIZE)", -ENOMEM);
	memset(heap, 2, 2 * MAXLEN);
	native_setup();
	if (shmem_my_pe() == 0) {
		printf("# percs-shmem-bench: %d iterations x %d repetitions, medians\n",
		       iters, REPS);
		measure(ATOMIC, 8, iters, heap, &s, &nat);
		printf("atomic  shmem_long_atomic_fetch_add %8.2f us  native fetch-add %8.2f us  ratio %.2f (target <= 1.2)\n",
		       s * 1e6, nat * 1e6, s / nat);
		measure(PUT8, 8, iters, heap, &s, &nat);
		printf("put8    shmem_long_p + shmem_quiet  %8.2f us  native RDMA write %8.2f us  ratio %.2f (target <= 1.3)\n",
		       s * 1e6, nat * 1e6, s / nat);
		printf("# bw: shmem_putmem vs native RDMA write, one at a time\n");
		printf("%8s %14s %14s %7s\n", "bytes", "shmem B/s", "native B/s", "ratio");
		for (size_t len = 1024; len <= MAXLEN; len *= 4) {
			int it = len >= (256U << 10) ? iters / 10 + 5 : iters;

			measure(BW, len, it, heap, &s, &nat);
			printf("%8zu %14.0f %14.0f %7.2f%s\n", len, len / s, len / nat,
			       nat / s, len == MAXLEN ? " (target >= 0.9)" : "");
		}
	}
	shmem_barrier_all();
	percs_mr_dereg(w, handle);
	percs_window_release(w);
	free(buf);
	shmem_free(heap);
	shmem_finalize();
	return 0;
}
