// SPDX-License-Identifier: GPL-2.0
/*
 * ring: put/get around a ring of PEs, every path: small puts (in the
 * descriptor), large ones from the heap (registered), from the stack and
 * malloc (bounce buffer), into global/static data; typed, sized, strided
 * and non-blocking forms; gets likewise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define BIG	(300 * 1024 + 17)	/* more than one bounce buffer */

static uint8_t global_buf[BIG];
static int64_t global_ints[64];

static uint8_t pat(int pe, size_t i)
{
	return (uint8_t)(pe * 31 + i * 7 + (i >> 9));
}

int main(void)
{
	int me, n, right, left;
	uint8_t *heap_src, *heap_dst, *mal;
	int64_t stack_ints[64], got[64];
	short sh[10];

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	right = (me + 1) % n;
	left = (me + n - 1) % n;
	heap_src = shmem_malloc(BIG);
	heap_dst = shmem_malloc(BIG);
	mal = malloc(BIG);
	CHECK(heap_src && heap_dst && mal, "allocation");
	for (size_t i = 0; i < BIG; i++)
		heap_src[i] = mal[i] = pat(me, i);
	for (int i = 0; i < 64; i++)
		stack_ints[i] = (int64_t)me * 1000 + i;
	shmem_barrier_all();

	/* Heap to heap, large: RDMA write from registered memory. */
	shmem_putmem(heap_dst, heap_src, BIG, right);
	/* malloc to global, large: through the bounce buffer. */
	shmem_putmem_nbi(global_buf, mal, BIG, right);
	/* Small typed puts from the stack, and single elements. */
	shmem_int64_put(global_ints, stack_ints, 32, right);
	for (int i = 32; i < 64; i++)
		shmem_int64_p(&global_ints[i], stack_ints[i], right);
	shmem_barrier_all();
	for (size_t i = 0; i < BIG; i++) {
		CHECK(heap_dst[i] == pat(left, i), "heap byte %zu: %u want %u", i,
		      heap_dst[i], pat(left, i));
		CHECK(global_buf[i] == pat(left, i), "global byte %zu", i);
	}
	for (int i = 0; i < 64; i++)
		CHECK(global_ints[i] == (int64_t)left * 1000 + i,
		      "global_ints[%d] = %lld", i, (long long)global_ints[i]);

	/* Gets: into the stack (bounce), into the heap (registered). */
	memset(got, 0, sizeof(got));
	shmem_int64_get(got, global_ints, 64, left);
	for (int i = 0; i < 64; i++)
		CHECK(got[i] == (int64_t)((left + n - 1) % n) * 1000 + i,
		      "get[%d] = %lld", i, (long long)got[i]);
	memset(heap_dst, 0, BIG);
	shmem_getmem(heap_dst, heap_src, BIG, right);
	for (size_t i = 0; i < BIG; i++)
		CHECK(heap_dst[i] == pat(right, i), "getmem byte %zu", i);
	memset(mal, 0, BIG);
	shmem_getmem_nbi(mal, global_buf, BIG, right);
	shmem_quiet();
	for (size_t i = 0; i < BIG; i++)
		CHECK(mal[i] == pat(me, i), "getmem_nbi byte %zu", i);
	CHECK(shmem_int64_g(&global_ints[5], right) == (int64_t)me * 1000 + 5,
	      "g");
	shmem_barrier_all();

	/* Strided: every other short of a 10-element array. */
	for (int i = 0; i < 10; i++)
		sh[i] = (short)(me * 100 + i);
	{
		short *dst = shmem_calloc(20, sizeof(short));

		CHECK(dst && dst[7] == 0, "calloc");
		shmem_short_iput(dst, sh, 2, 1, 10, right);
		shmem_barrier_all();
		for (int i = 0; i < 20; i++)
			CHECK(dst[i] == (i % 2 ? 0 : (short)(left * 100 + i / 2)),
			      "iput dst[%d] = %d", i, dst[i]);
		memset(sh, 0, sizeof(sh));
		shmem_short_iget(sh, dst, 1, 2, 10, right);
		for (int i = 0; i < 10; i++)
			CHECK(sh[i] == (short)(me * 100 + i), "iget[%d] = %d", i, sh[i]);
		shmem_free(dst);
	}
	/* Sized and other types, with realloc keeping the contents. */
	{
		double *d = shmem_malloc(8 * sizeof(double));
		double v[8];

		for (int i = 0; i < 8; i++)
			v[i] = me + i / 4.0;
		shmem_put64(d, v, 8, right);
		shmem_barrier_all();
		d = shmem_realloc(d, 4096 * sizeof(double));
		CHECK(d, "realloc");
		for (int i = 0; i < 8; i++)
			CHECK(d[i] == left + i / 4.0, "put64/realloc d[%d] = %g", i, d[i]);
		shmem_double_p(&d[4095], 0.5 + me, right);
		shmem_barrier_all();
		CHECK(d[4095] == 0.5 + left, "double_p");
		shmem_free(d);
	}
	{
		char *a = shmem_align(4096, 100);

		CHECK(a && ((uintptr_t)a & 4095) == 0, "shmem_align");
		shmem_free(a);
	}
	shmem_free(heap_src);
	shmem_free(heap_dst);
	free(mal);
	if (me == 0)
		printf("ring: %d PEs, every put/get path checked\n", n);
	shmem_finalize();
	return 0;
}
