// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symmetric address translation (heap.c): a local address in the heap or
 * in global/static data becomes (that PE's registration, offset); ranges
 * that leave symmetric memory and PEs out of range abort naming the call.
 * shmem_g is set up by hand as shmem_init() would leave it for 4 PEs.
 */
#include "unit.h"

#define NPES	4
#define HEAPSZ	4096
#define DATASZ	512

static char data[DATASZ];
static struct shmem_peer peers[NPES];

static void setup(void)
{
	shmem_g.initialized = true;
	shmem_g.me = 1;
	shmem_g.npes = NPES;
	shmem_g.heap = malloc(HEAPSZ);
	shmem_g.heap_size = HEAPSZ;
	shmem_g.heap_handle = 7;
	shmem_g.data = data;
	shmem_g.data_len = DATASZ;
	shmem_g.data_handle = 9;
	for (int p = 0; p < NPES; p++) {
		peers[p].heap.handle = 100 + (uint32_t)p;
		peers[p].heap.base = 0x100000ULL * (uint64_t)(p + 1);
		peers[p].heap.length = HEAPSZ;
		peers[p].data.handle = 200 + (uint32_t)p;
		peers[p].data.base = 0x7000000ULL + 0x10000ULL * (uint64_t)p;
		peers[p].data.length = DATASZ;
	}
	shmem_g.peers = peers;
}

static void t_translate(void)
{
	const struct percs_rmr *r;
	uint64_t off = 99;

	setup();
	for (int p = 0; p < NPES; p++) {
		r = shmem_remote("t", shmem_g.heap, 8, p, &off);
		CHECK(r == &peers[p].heap);
		CHECK_EQ(off, 0);
		r = shmem_remote("t", shmem_g.heap + HEAPSZ - 8, 8, p, &off);
		CHECK(r == &peers[p].heap);
		CHECK_EQ(off, HEAPSZ - 8);
		r = shmem_remote("t", data + 100, 1, p, &off);
		CHECK(r == &peers[p].data);
		CHECK_EQ(off, 100);
		r = shmem_remote("t", data, DATASZ, p, &off);	/* all of it */
		CHECK(r == &peers[p].data);
		CHECK_EQ(off, 0);
	}
	CHECK(shmem_is_symmetric(shmem_g.heap + 1, HEAPSZ - 1));
	CHECK(!shmem_is_symmetric(shmem_g.heap + 1, HEAPSZ));
	CHECK(!shmem_is_symmetric(&off, 8));
	CHECK_EQ(shmem_local_handle(shmem_g.heap + 64, 64), 7);
	CHECK_EQ(shmem_local_handle(data + DATASZ - 1, 1), 9);
	CHECK_EQ(shmem_local_handle(data + DATASZ - 1, 2), 0);
	CHECK_EQ(shmem_local_handle(&off, 8), 0);
	free(shmem_g.heap);
}

static void remote_stack(void *arg)
{
	uint64_t off, local = 0;

	(void)arg;
	shmem_remote("shmem_putmem", &local, sizeof(local), 0, &off);
}

static void remote_past_heap(void *arg)
{
	uint64_t off;

	(void)arg;
	shmem_remote("shmem_getmem", shmem_g.heap + HEAPSZ - 4, 8, 2, &off);
}

static void remote_bad_pe(void *arg)
{
	uint64_t off;

	shmem_remote("shmem_long_p", shmem_g.heap, 8, *(int *)arg, &off);
}

static void t_bad(void)
{
	int pe;

	setup();
	CHECK_DIES(remote_stack, NULL, "PE 1: shmem_putmem: address 0x");
	CHECK_DIES(remote_stack, NULL, "(8 bytes) is not symmetric");
	CHECK_DIES(remote_past_heap, NULL, "shmem_getmem: address");
	pe = NPES;
	CHECK_DIES(remote_bad_pe, &pe, "PE 1: shmem_long_p: PE 4 is out of range (0 .. 3)");
	pe = -1;
	CHECK_DIES(remote_bad_pe, &pe, "shmem_long_p: PE -1 is out of range");
	free(shmem_g.heap);
}

const struct unit_test symmetric_tests[] = {
	{ "symmetric: heap and data addresses to every PE's registration", t_translate },
	{ "symmetric: non-symmetric ranges and bad PEs abort naming the call", t_bad },
	{ NULL, NULL }
};
