// SPDX-License-Identifier: GPL-2.0
/*
 * threads: SHMEM_THREAD_SERIALIZED, the highest level the library
 * provides (shmem.rst, "Threads").  shmem_init_thread() asked for
 * MULTIPLE gives SERIALIZED; then THREADS threads on every PE put, get,
 * fetch-add, increment and quiet - on the default context and on contexts
 * of their own - interleaved call by call (each call under the program's
 * mutex, as SERIALIZED requires: one call at a time, any thread), and
 * every answer is checked:
 *
 *   - each thread puts its own slots of a symmetric array on the next PE,
 *     half with shmem_long_p, half with shmem_putmem, quieting as it goes;
 *     after the threads end and a barrier, every slot holds what its
 *     writer put;
 *   - each thread takes ROUNDS tickets from PE 0's counter with
 *     shmem_long_atomic_fetch_add and marks each in PE 0's table with
 *     shmem_long_atomic_add: every ticket 0 .. total-1 is then marked
 *     exactly once, and PE 0's counter is the total;
 *   - round i of thread t increments the second counter of PE
 *     (i + t) % n_pes: each PE's ends at n_pes x the rounds that name it;
 *   - each thread reads a word the next PE wrote before the threads
 *     started, with shmem_long_g, and checks it.
 *
 * One thread's quiet completes the others' puts too (a quiet completes
 * every operation of the PE).  Built against the ASan/UBSan libraries
 * (libpercs has no ThreadSanitizer build); run by shmem.sh.
 * "threads ROUNDS".
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define THREADS	4
#define MAXR	512
#define MAXPES	8

static long slots[THREADS][MAXR];	/* written by the previous PE */
static long tickets_ctr, inc_ctr, hello;
static long seen[MAXPES * THREADS * MAXR];	/* PE 0's ticket marks */
static int me, npes, rounds;
static pthread_mutex_t serial = PTHREAD_MUTEX_INITIALIZER;

/* One SHMEM call at a time, from whichever thread. */
#define SERIAL(stmt) do {						\
	pthread_mutex_lock(&serial);					\
	stmt;								\
	pthread_mutex_unlock(&serial);					\
} while (0)

struct worker {
	pthread_t th;
	int t;
};

static void *work(void *arg)
{
	struct worker *wk = arg;
	int next = (me + 1) % npes, t = wk->t;
	shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;

	/* Odd threads use a context of their own. */
	if (t % 2) {
		int ret;

		SERIAL(ret = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx));
		CHECK(ret == 0, "ctx_create");
	}
	for (int i = 0; i < rounds; i++) {
		long v = (long)me << 32 | (long)t << 16 | i, k, got;

		if (i % 2)
			SERIAL(shmem_ctx_long_p(ctx, &slots[t][i], v, next));
		else
			SERIAL(shmem_ctx_putmem(ctx, &slots[t][i], &v, sizeof(v), next));
		SERIAL(k = shmem_ctx_long_atomic_fetch_add(ctx, &tickets_ctr, 1, 0));
		CHECK(k >= 0 && k < (long)npes * THREADS * rounds, "ticket %ld", k);
		SERIAL(shmem_ctx_long_atomic_add(ctx, &seen[k], 1, 0));
		SERIAL(shmem_ctx_long_atomic_inc(ctx, &inc_ctr, (i + t) % npes));
		if (i % 16 == 15)
			SERIAL(shmem_ctx_quiet(ctx));
		SERIAL(got = shmem_ctx_long_g(ctx, &hello, next));
		CHECK(got == 1000 + next, "thread %d: hello of PE %d: %ld", t, next, got);
		if (i % 8 == 0)
			sched_yield();	/* let the threads interleave */
	}
	SERIAL(shmem_ctx_quiet(ctx));
	if (ctx != SHMEM_CTX_DEFAULT)
		SERIAL(shmem_ctx_destroy(ctx));
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker wk[THREADS];
	int provided = -1, prev;
	long total, want;

	rounds = argc > 1 ? atoi(argv[1]) : 64;
	CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread");
	CHECK(provided == SHMEM_THREAD_SERIALIZED, "provided %d", provided);
	shmem_query_thread(&provided);
	CHECK(provided == SHMEM_THREAD_SERIALIZED, "query_thread %d", provided);
	me = shmem_my_pe();
	npes = shmem_n_pes();
	CHECK(rounds > 0 && rounds <= MAXR, "rounds 1 .. %d", MAXR);
	CHECK(npes <= MAXPES, "at most %d PEs", MAXPES);
	hello = 1000 + me;
	shmem_barrier_all();
	for (int t = 0; t < THREADS; t++) {
		wk[t].t = t;
		CHECK(pthread_create(&wk[t].th, NULL, work, &wk[t]) == 0, "pthread_create");
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(wk[t].th, NULL);
	shmem_barrier_all();	/* quiets: every put and increment is in */
	prev = (me + npes - 1) % npes;
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < rounds; i++)
			CHECK(slots[t][i] == ((long)prev << 32 | (long)t << 16 | i),
			      "slot [%d][%d] = %lx", t, i, slots[t][i]);
	total = (long)npes * THREADS * rounds;
	want = 0;
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < rounds; i++)
			want += (i + t) % npes == me;
	want *= npes;
	CHECK(inc_ctr == want, "inc counter %ld, want %ld", inc_ctr, want);
	if (me == 0) {
		CHECK(tickets_ctr == total, "ticket counter %ld, want %ld", tickets_ctr, total);
		for (long k = 0; k < total; k++)
			CHECK(seen[k] == 1, "ticket %ld taken %ld times", k, seen[k]);
	}
	if (me == 0)
		printf("threads: %d PEs x %d threads x %d rounds, SHMEM_THREAD_SERIALIZED\n",
		       npes, THREADS, rounds);
	shmem_finalize();
	return 0;
}
