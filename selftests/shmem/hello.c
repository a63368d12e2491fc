// SPDX-License-Identifier: GPL-2.0
/*
 * hello: every PE says hello; the query calls answer what they should
 * (with "old", through the 1.0-1.3 names start_pes/_my_pe/_num_pes).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

static long global_counter;
static int static_array[4] = { 1, 2, 3, 4 };

int main(int argc, char **argv)
{
	int old = argc > 1 && !strcmp(argv[1], "old");
	int me, n, major = 0, minor = 0, local = 0;
	char name[SHMEM_MAX_NAME_LEN];
	long *heap;

	CHECK(shmem_my_pe() == -1, "my_pe before init %d", shmem_my_pe());
	if (old)
		start_pes(0);
	else
		shmem_init();
	me = old ? _my_pe() : shmem_my_pe();
	n = old ? _num_pes() : shmem_n_pes();
	CHECK(me == atoi(getenv("PERCS_RANK")), "my_pe %d", me);
	CHECK(n == atoi(getenv("PERCS_SIZE")), "n_pes %d", n);
	shmem_info_get_version(&major, &minor);
	CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
	shmem_info_get_name(name);
	CHECK(strstr(name, "percs"), "name '%s'", name);
	heap = old ? shmalloc(sizeof(long)) : shmem_malloc(sizeof(long));
	CHECK(heap, "shmem_malloc failed");
	CHECK(shmem_pe_accessible(n - 1) && !shmem_pe_accessible(n) &&
	      !shmem_pe_accessible(-1), "pe_accessible");
	CHECK(shmem_addr_accessible(heap, 0) && shmem_addr_accessible(&global_counter, n - 1) &&
	      shmem_addr_accessible(&static_array[3], 0), "addr_accessible of symmetric data");
	CHECK(!shmem_addr_accessible(&local, 0), "a stack address is accessible");
	CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr to self");
	CHECK(n == 1 || shmem_ptr(heap, (me + 1) % n) == NULL,
	      "shmem_ptr to another PE is not NULL");
	CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me &&
	      shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "world team");
	CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == 1, "shared team");
	/* Everyone counts itself in on PE 0's global, through the HFI. */
	shmem_long_atomic_inc(&global_counter, 0);
	shmem_barrier_all();
	if (me == 0)
		CHECK(global_counter == n, "counter %ld want %d", global_counter, n);
	printf("hello from PE %d of %d\n", me, n);
	if (old)
		shfree(heap);
	else
		shmem_free(heap);
	shmem_finalize();
	return 0;
}
