// SPDX-License-Identifier: GPL-2.0
/*
 * bad: one misuse per argument, each of which must end the job with a
 * message naming the call (shmem.sh checks the message and the status):
 *   nonsym   shmem_putmem to a stack address
 *   pe       shmem_long_p to PE n
 *   preinit  shmem_getmem before shmem_init
 *   free     shmem_free of a pointer shmem_malloc did not return
 *   cmp      shmem_int_wait_until with an unknown comparison
 *   exit     shmem_global_exit(5) on the last PE (the job exits 5)
 */
#include <string.h>
#include "check.h"

static long sym;

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long local = 1;
	int x = 0;

	if (!strcmp(what, "preinit"))
		shmem_getmem(&local, &sym, sizeof(sym), 0);
	shmem_init();
	if (!strcmp(what, "nonsym") && shmem_my_pe() == 0)
		shmem_putmem(&local, &sym, sizeof(local), shmem_n_pes() - 1);
	if (!strcmp(what, "pe") && shmem_my_pe() == 0)
		shmem_long_p(&sym, 1, shmem_n_pes());
	if (!strcmp(what, "free"))
		shmem_free(&sym);
	if (!strcmp(what, "cmp"))
		shmem_int_wait_until(&x, 42, 0);
	if (!strcmp(what, "exit") && shmem_my_pe() == shmem_n_pes() - 1)
		shmem_global_exit(5);
	shmem_barrier_all();
	printf("bad: '%s' did not fail\n", what);
	shmem_finalize();
	return 0;
}
