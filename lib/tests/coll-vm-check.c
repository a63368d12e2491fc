// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coll-vm-check: the libpercs collectives against the real module, and an
 * example of their use by several processes.
 *
 *   tools/vm/percs-vm --module percs.ko -- build/lib/tests/coll-vm-check [N [POLL]]
 *
 * N processes (default 8, at most 16), rank i on hub i: each reserves a
 * window; rank 0 creates two CAU trees over them (default k-ary shape from
 * the hub topology; one ordered, one not) and passes their ids through
 * shared memory; the others join; all make a software group.  Then for 18
 * vector lengths from 1 to 1000 elements: allreduce of doubles (SUM) via
 * both trees and each software algorithm, compared with the rank-order
 * reference to a tolerance, the ordered tree's result bit-identical across
 * two runs and across ranks, each software algorithm's across ranks;
 * allreduce of u64 SUM, s32 MIN and u64 XOR via every method, compared
 * exactly; CAU and software reduce, bcast and barriers.  Last, the median
 * latency of each method for 1, 8, 125 and 1000 doubles and of the two
 * barriers.  POLL=1 reserves poll-mode windows.  Exit status 0 when every
 * check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "percs.h"

#define MAXN	16
#define MAXC	1000
#define NMETH	5

struct shared {
	pthread_barrier_t bar;
	struct percs_addr addr[MAXN];
	uint32_t tree_ord, tree_un;
	uint64_t hash[MAXN];
	unsigned int bad[MAXN];
	double t[MAXN][4][NMETH + 2];	/* rank, size, method: median us */
};

static struct shared *S;
static unsigned int N, me;

static const char *const mname[NMETH] = {
	"cau-ord", "cau-unord", "sw-binomial", "sw-recdbl", "sw-rabenseifner",
};
static const unsigned int algos[3] = {
	PERCS_SW_BINOMIAL, PERCS_SW_RECDBL, PERCS_SW_RABENSEIFNER,
};

static void sync_all(void)
{
	pthread_barrier_wait(&S->bar);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Rank @rank's @cnt elements of @type; doubles are not exact in binary. */
static void gen(void *buf, size_t cnt, unsigned int type, unsigned int rank,
		unsigned int seed)
{
	for (size_t i = 0; i < cnt; i++) {
		uint64_t v = (rank + 1) * 0x9e3779b97f4a7c15ULL ^
			     (i * 0xbf58476d1ce4e5b9ULL) ^ seed;
		double d;
		int32_t x;

		v ^= v >> 29;
		switch (type) {
		case PERCS_CAU_T_F64:
			d = (double)(v % 1000003) / 7.0 - 70000.0;
			memcpy((char *)buf + 8 * i, &d, 8);
			break;
		case PERCS_CAU_T_S32:
			x = (int32_t)v;
			memcpy((char *)buf + 4 * i, &x, 4);
			break;
		default:
			memcpy((char *)buf + 8 * i, &v, 8);
		}
	}
}

/* Every rank's vector combined in rank order, with the CAU's ALU. */
static void ref(void *out, size_t cnt, unsigned int type, unsigned int op,
		unsigned int seed)
{
	static char tmp[8 * MAXC];

	gen(out, cnt, type, 0, seed);
	for (unsigned int r = 1; r < N; r++) {
		gen(tmp, cnt, type, r, seed);
		percs_coll_combine(op, type, cnt, out, tmp);
	}
}

static void bad(const char *what, size_t cnt, int ret)
{
	if (S->bad[me]++ < 20)
		fprintf(stderr, "rank %u: %s, count %zu: %d %s\n", me, what,
			cnt, ret, ret < 0 ? percs_strerror(ret) : "wrong result");
}

static bool close_d(const double *a, const double *b, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		if (fabs(a[i] - b[i]) > 1e-9 * (fabs(a[i]) + fabs(b[i])) + 1e-6)
			return false;
	return true;
}

static uint64_t fnv(const void *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ULL;
	return h;
}

/* Do all ranks hold the same @n bytes at @p? */
static bool same_everywhere(const void *p, size_t n)
{
	bool ok;

	S->hash[me] = fnv(p, n);
	sync_all();
	ok = S->hash[me] == S->hash[0];
	sync_all();
	return ok;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ctx {
	struct percs_cau_tree *to, *tu;
	struct percs_sw_group *g;
};

static int allreduce(struct ctx *c, unsigned int mth, const void *in,
		     void *out, size_t cnt, unsigned int type, unsigned int op)
{
	if (mth < 2)
		return percs_cau_allreduce(mth ? c->tu : c->to, in, out, cnt,
					   type, op);
	return percs_sw_allreduce(c->g, algos[mth - 2], in, out, cnt, type,
				  op);
}

static void check_size(struct ctx *c, size_t cnt)
{
	static const unsigned int iops[3][2] = {
		{ PERCS_CAU_OP_SUM, PERCS_CAU_T_U64 },
		{ PERCS_CAU_OP_MIN, PERCS_CAU_T_S32 },
		{ PERCS_CAU_OP_XOR, PERCS_CAU_T_U64 },
	};
	static double din[MAXC], dout[MAXC], dref[MAXC], d2[MAXC];
	static uint64_t uin[MAXC], uout[MAXC], uref[MAXC];
	unsigned int seed = (unsigned int)cnt * 31, origin = 1 % N;
	int r;

	gen(din, cnt, PERCS_CAU_T_F64, me, seed);
	ref(dref, cnt, PERCS_CAU_T_F64, PERCS_CAU_OP_SUM, seed);
	for (unsigned int m = 0; m < NMETH; m++) {
		r = allreduce(c, m, din, dout, cnt, PERCS_CAU_T_F64,
			      PERCS_CAU_OP_SUM);
		if (r || !close_d(dout, dref, cnt))
			bad(mname[m], cnt, r);
		if (m != 1 && !same_everywhere(dout, cnt * 8))
			bad("f64 sum differs between ranks", cnt, m);
		if (m)
			continue;
		r = allreduce(c, m, din, d2, cnt, PERCS_CAU_T_F64,
			      PERCS_CAU_OP_SUM);
		if (r || memcmp(dout, d2, cnt * 8))
			bad("ordered f64 sum differs between runs", cnt, r);
	}
	for (unsigned int q = 0; q < 3; q++) {
		unsigned int op = iops[q][0], ty = iops[q][1];
		size_t bytes = cnt * percs_coll_type_size(ty);

		gen(uin, cnt, ty, me, seed + q);
		ref(uref, cnt, ty, op, seed + q);
		for (unsigned int m = 0; m < NMETH; m++) {
			r = allreduce(c, m, uin, uout, cnt, ty, op);
			if (r || memcmp(uout, uref, bytes))
				bad(mname[m], cnt, r);
		}
	}
	/* Reduce: CAU to the tree's root (rank 0), software to rank N-1. */
	gen(uin, cnt, PERCS_CAU_T_U64, me, seed);
	ref(uref, cnt, PERCS_CAU_T_U64, PERCS_CAU_OP_SUM, seed);
	memset(uout, 0, sizeof(uout));
	r = percs_cau_reduce(c->to, uin, uout, cnt, PERCS_CAU_T_U64,
			     PERCS_CAU_OP_SUM);
	if (r || (me == 0 && memcmp(uout, uref, cnt * 8)))
		bad("cau reduce", cnt, r);
	memset(uout, 0, sizeof(uout));
	r = percs_sw_reduce(c->g, PERCS_SW_AUTO, N - 1, uin, uout, cnt,
			    PERCS_CAU_T_U64, PERCS_CAU_OP_SUM);
	if (r || (me == N - 1 && memcmp(uout, uref, cnt * 8)))
		bad("sw reduce", cnt, r);
	/* Bcast from rank 1 (an odd length for the CAU's 8-byte words). */
	gen(uref, cnt, PERCS_CAU_T_U64, origin, seed);
	memcpy(uout, me == origin ? uref : uin, cnt * 8);
	r = percs_cau_bcast(c->to, origin, uout, cnt * 8 - 3);
	if (r || memcmp(uout, uref, cnt * 8 - 3))
		bad("cau bcast", cnt, r);
	memcpy(uout, me == origin ? uref : uin, cnt * 8);
	r = percs_sw_bcast(c->g, PERCS_SW_AUTO, origin, uout, cnt * 8);
	if (r || memcmp(uout, uref, cnt * 8))
		bad("sw bcast", cnt, r);
	if ((r = percs_cau_barrier(c->to)) ||
	    (r = percs_sw_barrier(c->g, PERCS_SW_DISSEMINATION)) ||
	    (r = percs_sw_barrier(c->g, PERCS_SW_BINOMIAL)) ||
	    (r = percs_sw_barrier(c->g, PERCS_SW_RECDBL)))
		bad("barrier", cnt, r);
}

/* Median microseconds of @iters calls of method @mth (barriers: 5, 6). */
static double timed(struct ctx *c, unsigned int mth, size_t cnt,
		    unsigned int iters)
{
	static double din[MAXC], dout[MAXC], lat[100];
	int r;

	gen(din, cnt, PERCS_CAU_T_F64, me, 1);
	percs_sw_barrier(c->g, PERCS_SW_DISSEMINATION);
	for (unsigned int it = 0; it < iters; it++) {
		uint64_t t0 = now_ns();

		if (mth == NMETH)
			r = percs_cau_barrier(c->to);
		else if (mth == NMETH + 1)
			r = percs_sw_barrier(c->g, PERCS_SW_DISSEMINATION);
		else
			r = allreduce(c, mth, din, dout, cnt, PERCS_CAU_T_F64,
				      PERCS_CAU_OP_SUM);
		if (r)
			bad("timed", cnt, r);
		lat[it] = (double)(now_ns() - t0) / 1e3;
	}
	qsort(lat, iters, sizeof(lat[0]), dcmp);
	return lat[iters / 2];
}

static void report(bool poll_mode, const size_t *tsz)
{
	printf("allreduce f64 sum, median us per call (the slowest rank's), "
	       "%u ranks, %s mode:\n%8s", N, poll_mode ? "poll" : "kick",
	       "count");
	for (unsigned int k = 0; k < NMETH; k++)
		printf(" %16s", mname[k]);
	printf("\n");
	for (unsigned int si = 0; si < 4; si++) {
		printf("%8zu", tsz[si]);
		for (unsigned int k = 0; k < NMETH + 2; k++) {
			double mx = 0;

			for (unsigned int i = 0; i < N; i++)
				if (S->t[i][si][k] > mx)
					mx = S->t[i][si][k];
			S->t[0][si][k] = mx;
			if (k < NMETH)
				printf(" %16.1f", mx);
		}
		printf("\n");
	}
	printf("barrier: cau %.1f us, sw dissemination %.1f us\n",
	       S->t[0][0][NMETH], S->t[0][0][NMETH + 1]);
}

static int child(unsigned int rank, bool poll_mode)
{
	static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 16, 17, 63, 64, 65,
					100, 127, 128, 250, 500, 999, 1000 };
	static const size_t tsz[4] = { 1, 8, 125, 1000 };
	struct percs_window_attr a = {
		.window = PERCS_WINDOW_ANY,
		.flags = poll_mode ? PERCS_WINDOW_F_POLL : 0,
	};
	struct percs_cau_member m[MAXN];
	struct percs_hfi_info info;
	struct percs_window *w;
	struct percs_hfi *hfi;
	struct ctx c;
	int r;

	me = rank;
	if ((r = percs_hfi_open(rank, 0, &hfi)) ||
	    (r = percs_hfi_info(hfi, &info)) ||
	    (r = percs_window_reserve(hfi, &a, &w))) {
		fprintf(stderr, "rank %u: open/reserve: %s\n", rank,
			percs_strerror(r));
		return 1;
	}
	S->addr[rank] = percs_window_addr(w);
	sync_all();
	/* Every rank builds the same shape from the same addresses. */
	r = percs_cau_shape_kary(S->addr, N, 0, 0, &info, m);
	if (r) {
		fprintf(stderr, "rank %u: shape: %s\n", rank, percs_strerror(r));
		return 1;
	}
	if (rank == 0) {
		printf("tree: %u members, depth %d, %u hubs per supernode; "
		       "parents:", N, percs_cau_shape_check(m, N),
		       info.hubs_per_supernode);
		for (unsigned int i = 0; i < N; i++)
			printf(" %d", (int)m[i].parent);
		printf("\n");
		if ((r = percs_cau_tree_create(w, m, N, PERCS_CAU_F_ORDERED,
					       &c.to)) ||
		    (r = percs_cau_tree_create(w, m, N, 0, &c.tu))) {
			fprintf(stderr, "create: %s\n", percs_strerror(r));
			return 1;
		}
		S->tree_ord = percs_cau_tree_id(c.to);
		S->tree_un = percs_cau_tree_id(c.tu);
	}
	sync_all();
	if (rank && ((r = percs_cau_tree_join(w, S->tree_ord, m, N,
					      PERCS_CAU_F_ORDERED, &c.to)) ||
		     (r = percs_cau_tree_join(w, S->tree_un, m, N, 0, &c.tu)))) {
		fprintf(stderr, "rank %u: join: %s\n", rank, percs_strerror(r));
		return 1;
	}
	r = percs_sw_group_create(w, S->addr, N, 1, &c.g);
	if (r) {
		fprintf(stderr, "rank %u: group: %s\n", rank, percs_strerror(r));
		return 1;
	}
	sync_all();

	for (unsigned int si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		check_size(&c, sizes[si]);
	sync_all();
	if (rank == 0)
		printf("correctness: %zu lengths x (f64 sum by 5 methods, 3 "
		       "integer op/types by 5 methods, reduce, bcast, 4 "
		       "barriers)\n", sizeof(sizes) / sizeof(sizes[0]));

	for (unsigned int si = 0; si < 4; si++)
		for (unsigned int k = 0; k < NMETH + 2; k++)
			S->t[rank][si][k] = timed(&c, k, tsz[si],
						  tsz[si] >= 125 ? 20 : 100);
	sync_all();
	if (rank == 0)
		report(poll_mode, tsz);
	sync_all();
	percs_sw_group_destroy(c.g);
	percs_cau_tree_destroy(c.to);
	percs_cau_tree_destroy(c.tu);
	percs_window_release(w);
	percs_hfi_close(hfi);
	return S->bad[rank] != 0;
}

int main(int argc, char **argv)
{
	bool poll_mode = argc > 2 && atoi(argv[2]);
	unsigned int fails = 0;
	pthread_barrierattr_t ba;

	N = argc > 1 ? (unsigned int)atoi(argv[1]) : 8;
	if (N < 1 || N > MAXN) {
		fprintf(stderr, "usage: %s [N (1..%d) [POLL]]\n", argv[0], MAXN);
		return 2;
	}
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		return 2;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&S->bar, &ba, N);
	setvbuf(stdout, NULL, _IONBF, 0);
	/* One job for the ranks: made here, inherited by every fork. */
	{
		struct percs_hfi *hfi;
		int r = percs_hfi_open(0, 0, &hfi);

		if (!r) {
			r = percs_job_default(hfi);
			percs_hfi_close(hfi);
		}
		if (r < 0) {
			fprintf(stderr, "the job: %s\n", percs_strerror(r));
			return 2;
		}
	}
	for (unsigned int i = 0; i < N; i++)
		if (fork() == 0)
			_exit(child(i, poll_mode));
	for (unsigned int i = 0; i < N; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			fails++;
	}
	for (unsigned int i = 0; i < N; i++)
		fails += S->bad[i];
	printf("%s: %u ranks, %u failures\n", fails ? "FAIL" : "PASS", N,
	       fails);
	return fails != 0;
}
