// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The symmetric heap's allocator (alloc.c): first fit, grain and
 * alignment, exhaustion, fragmentation and merging, bad requests, and
 * that two allocators given the same calls give the same offsets (which
 * is what makes the heap symmetric).
 */
#include <errno.h>
#include <stdint.h>

#include "alloc.h"
#include "unit.h"

#define HEAP	(64U << 10)

static void t_first_fit_and_grain(void)
{
	struct shmem_alloc a;
	size_t o1, o2, o3;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	o1 = shmem_alloc_get(&a, 16, 1);
	o2 = shmem_alloc_get(&a, 16, 17);
	o3 = shmem_alloc_get(&a, 16, 16);
	CHECK_EQ(o1, 0);
	CHECK_EQ(shmem_alloc_len(&a, o1), 16);	/* rounded up to the grain */
	CHECK_EQ(o2, 16);
	CHECK_EQ(shmem_alloc_len(&a, o2), 32);
	CHECK_EQ(o3, 48);
	CHECK_EQ(shmem_alloc_free_bytes(&a, NULL), HEAP - 64);
	/* A freed hole is reused first when the request fits it. */
	CHECK_EQ(shmem_alloc_put(&a, o2), 0);
	CHECK_EQ(shmem_alloc_get(&a, 16, 20), 16);
	CHECK_EQ(shmem_alloc_get(&a, 16, 40), 64);	/* too big for any hole */
	shmem_alloc_fini(&a);
}

static void t_alignment(void)
{
	struct shmem_alloc a;
	size_t align, off, largest;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	CHECK_EQ(shmem_alloc_get(&a, 16, 16), 0);
	for (align = 16; align <= 8192; align <<= 1) {
		off = shmem_alloc_get(&a, align, 24);
		CHECK(off != SHMEM_ALLOC_NONE);
		CHECK_EQ(off % align, 0);
		CHECK_EQ(shmem_alloc_len(&a, off), 32);
	}
	/* The padding stays free and is handed out first: 0 .. 16 and 16 ..
	 * 48 are taken, 48 .. 64 is the padding before the 32-aligned one. */
	CHECK_EQ(shmem_alloc_get(&a, 16, 16), 48);
	/* Bad alignments: zero, not a power of two, beyond the heap. */
	CHECK_EQ(shmem_alloc_get(&a, 0, 16), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_get(&a, 48, 16), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_get(&a, (size_t)HEAP * 2, 16), SHMEM_ALLOC_NONE);
	shmem_alloc_free_bytes(&a, &largest);
	CHECK(largest > 0);
	shmem_alloc_fini(&a);
}

static void t_exhaustion(void)
{
	struct shmem_alloc a;
	size_t off, n = 0, largest;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	/* Zero bytes and more than the heap (even ones that would wrap when
	 * rounded to the grain) are refused. */
	CHECK_EQ(shmem_alloc_get(&a, 16, 0), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_get(&a, 16, HEAP + 1), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_get(&a, 16, SIZE_MAX - 3), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_free_bytes(&a, NULL), HEAP);
	/* The whole heap in one, then nothing. */
	CHECK_EQ(shmem_alloc_get(&a, 16, HEAP), 0);
	CHECK_EQ(shmem_alloc_get(&a, 16, 1), SHMEM_ALLOC_NONE);
	CHECK_EQ(shmem_alloc_put(&a, 0), 0);
	/* Filled by 1 KiB blocks: exactly HEAP / 1 KiB of them. */
	while ((off = shmem_alloc_get(&a, 16, 1024)) != SHMEM_ALLOC_NONE) {
		CHECK_EQ(off, n * 1024);
		n++;
	}
	CHECK_EQ(n, HEAP / 1024);
	CHECK_EQ(shmem_alloc_free_bytes(&a, &largest), 0);
	CHECK_EQ(largest, 0);
	shmem_alloc_fini(&a);
}

static void t_fragmentation(void)
{
	struct shmem_alloc a;
	size_t off[64], largest;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(off[i] = shmem_alloc_get(&a, 16, 1024), (size_t)i * 1024);
	/* Every other block free: half the heap free, none of it 2 KiB. */
	for (int i = 0; i < 64; i += 2)
		CHECK_EQ(shmem_alloc_put(&a, off[i]), 0);
	CHECK_EQ(shmem_alloc_free_bytes(&a, &largest), HEAP / 2);
	CHECK_EQ(largest, 1024);
	CHECK_EQ(shmem_alloc_get(&a, 16, 2048), SHMEM_ALLOC_NONE);
	/* Freeing the rest merges everything back into one block. */
	for (int i = 1; i < 64; i += 2)
		CHECK_EQ(shmem_alloc_put(&a, off[i]), 0);
	CHECK_EQ(shmem_alloc_free_bytes(&a, &largest), HEAP);
	CHECK_EQ(largest, HEAP);
	CHECK_EQ(shmem_alloc_get(&a, 16, HEAP), 0);
	shmem_alloc_fini(&a);
}

static void t_bad_put(void)
{
	struct shmem_alloc a;
	size_t off;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	off = shmem_alloc_get(&a, 16, 100);
	CHECK_EQ(shmem_alloc_put(&a, off + 16), -ENOENT);	/* inside */
	CHECK_EQ(shmem_alloc_put(&a, 4096), -ENOENT);		/* free space */
	CHECK_EQ(shmem_alloc_len(&a, 4096), 0);
	CHECK_EQ(shmem_alloc_put(&a, off), 0);
	CHECK_EQ(shmem_alloc_put(&a, off), -ENOENT);		/* twice */
	shmem_alloc_fini(&a);
}

/* A pseudo-random sequence of calls: the same on two allocators gives
 * the same offsets, and no two live blocks overlap. */
static void t_symmetric_and_disjoint(void)
{
	struct shmem_alloc a, b;
	size_t live[128] = { 0 }, len[128] = { 0 };
	uint64_t s = 88172645463325252ULL;

	CHECK_EQ(shmem_alloc_init(&a, HEAP), 0);
	CHECK_EQ(shmem_alloc_init(&b, HEAP), 0);
	for (int i = 0; i < 128; i++)
		live[i] = SHMEM_ALLOC_NONE;
	for (int step = 0; step < 5000; step++) {
		int k;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		k = (int)(s % 128);
		if (live[k] != SHMEM_ALLOC_NONE) {
			CHECK_EQ(shmem_alloc_put(&a, live[k]), 0);
			CHECK_EQ(shmem_alloc_put(&b, live[k]), 0);
			live[k] = SHMEM_ALLOC_NONE;
			continue;
		}
		{
			size_t sz = (size_t)(s >> 20) % 3000 + 1;
			size_t al = (size_t)1 << ((s >> 40) % 10);
			size_t o = shmem_alloc_get(&a, al, sz);

			CHECK_EQ(shmem_alloc_get(&b, al, sz), o);
			if (o == SHMEM_ALLOC_NONE)
				continue;
			CHECK_EQ(o % al, 0);
			CHECK(o + sz <= HEAP);
			for (int j = 0; j < 128; j++)
				if (live[j] != SHMEM_ALLOC_NONE)
					CHECK(o + sz <= live[j] || live[j] + len[j] <= o);
			live[k] = o;
			len[k] = sz;
		}
	}
	shmem_alloc_fini(&a);
	shmem_alloc_fini(&b);
}

const struct unit_test alloc_tests[] = {
	{ "alloc: first fit, 16-byte grain, holes reused", t_first_fit_and_grain },
	{ "alloc: alignment to every power of two, padding stays free", t_alignment },
	{ "alloc: zero, oversized and wrapping sizes refused; exhaustion", t_exhaustion },
	{ "alloc: fragmentation and merging back to one block", t_fragmentation },
	{ "alloc: freeing what was not allocated is -ENOENT", t_bad_put },
	{ "alloc: same calls, same offsets; live blocks never overlap", t_symmetric_and_disjoint },
	{ NULL, NULL }
};
