// SPDX-License-Identifier: GPL-2.0
/*
 * order: what shmem_fence and shmem_quiet promise, under the network's
 * reorder knob (shmem.sh turns isr/reorder_ppm up).  Each round PE 0
 * writes a block (large: RDMA write; small: in the descriptor) to every
 * other PE, fences, and raises that PE's flag; the PE waits for the flag
 * and checks the whole block is there.  Then the same with shmem_quiet
 * and a flag set by an atomic.  Argument: rounds (default 50).
 */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

#define BLOCK	(64 * 1024)

static long flag;
static long qflag;
static uint32_t small[64];

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50, me, n;
	uint32_t *big, *src;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	CHECK(n >= 2, "needs 2 PEs");
	big = shmem_malloc(BLOCK * sizeof(uint32_t));
	src = shmem_malloc(BLOCK * sizeof(uint32_t));
	CHECK(big && src, "allocation");
	for (int r = 1; r <= rounds; r++) {
		if (me == 0) {
			for (int i = 0; i < BLOCK; i++)
				src[i] = (uint32_t)(r * 7 + i);
			for (int p = 1; p < n; p++) {
				uint32_t s[64];

				for (int i = 0; i < 64; i++)
					s[i] = (uint32_t)(r * 13 + i);
				shmem_uint32_put_nbi(big, src, BLOCK, p);
				shmem_uint32_put(small, s, 64, p);
				shmem_fence();
				shmem_long_p(&flag, r, p);
			}
		} else {
			shmem_long_wait_until(&flag, SHMEM_CMP_EQ, r);
			for (int i = 0; i < BLOCK; i++)
				CHECK(big[i] == (uint32_t)(r * 7 + i),
				      "round %d: fence did not order: big[%d] = %u", r, i, big[i]);
			for (int i = 0; i < 64; i++)
				CHECK(small[i] == (uint32_t)(r * 13 + i),
				      "round %d: fence did not order: small[%d]", r, i);
		}
		shmem_barrier_all();
		/* quiet: every earlier put done before the atomic flag. */
		if (me == 0) {
			for (int p = 1; p < n; p++)
				shmem_uint32_put_nbi(big, src, BLOCK / 2, p);
			shmem_quiet();
			for (int p = 1; p < n; p++)
				shmem_long_atomic_set(&qflag, r, p);
		} else {
			shmem_long_wait_until(&qflag, SHMEM_CMP_EQ, r);
			for (int i = 0; i < BLOCK / 2; i++)
				CHECK(big[i] == (uint32_t)(r * 7 + i),
				      "round %d: quiet did not complete: big[%d]", r, i);
		}
		shmem_barrier_all();
	}
	if (me == 0)
		printf("order: %d PEs, %d rounds of fence and quiet\n", n, rounds);
	shmem_free(big);
	shmem_free(src);
	shmem_finalize();
	return 0;
}
