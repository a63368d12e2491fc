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
 *   sigop    shmem_putmem_signal with an unknown signal operation
 *   sigaddr  shmem_putmem_signal with a signal word on the stack
 *   ctxpe    shmem_ctx_long_p on a context of PE 0's one-PE team, to
 *            the team's PE 1
 *   config   shmem_team_split_strided with an unknown config_mask bit
 */
#include <stdint.h>
#include <string.h>
#include "check.h"

static long sym;
static uint64_t sigword;

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long local = 1;
	int x = 0;
	uint64_t stack_sig = 0;

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
	if (!strcmp(what, "sigop") && shmem_my_pe() == 0)
		shmem_putmem_signal(&sym, &local, sizeof(local), &sigword, 1, 7,
				    1);
	if (!strcmp(what, "sigaddr") && shmem_my_pe() == 0)
		shmem_putmem_signal(&sym, &local, sizeof(local), &stack_sig, 1,
				    SHMEM_SIGNAL_SET, 1);
	if (!strcmp(what, "ctxpe")) {
		shmem_team_t me_only;
		shmem_ctx_t ctx;

		shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0,
					 &me_only);
		if (shmem_my_pe() == 0 &&
		    !shmem_team_create_ctx(me_only, 0, &ctx))
			shmem_ctx_long_p(ctx, &sym, 1, 1);
	}
	if (!strcmp(what, "config")) {
		shmem_team_config_t cfg = { .num_contexts = 1 };
		shmem_team_t t;

		shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, &cfg,
					 SHMEM_TEAM_NUM_CONTEXTS | 4, &t);
	}
	shmem_barrier_all();
	printf("bad: '%s' did not fail\n", what);
	shmem_finalize();
	return 0;
}
