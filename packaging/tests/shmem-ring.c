// SPDX-License-Identifier: GPL-2.0
/*
 * shmem-ring: an OpenSHMEM program built outside the tree with an
 * installed percs-oshcc (or pkg-config --cflags --libs percs-shmem), run
 * with percs-oshrun.  Each PE puts its number into its right neighbour's
 * symmetric variable and adds one to a counter on PE 0; PE 0 prints one
 * line when every PE saw its left neighbour's number and the counter
 * reached the number of PEs.  Exit 1 on a wrong answer.
 */
#include <stdio.h>

#include <shmem.h>

static int from_left = -1;
static long counter;

int main(void)
{
	int me, n, left, bad;

	shmem_init();
	me = shmem_my_pe();
	n = shmem_n_pes();
	left = (me + n - 1) % n;

	shmem_int_p(&from_left, me, (me + 1) % n);
	shmem_long_atomic_fetch_add(&counter, 1, 0);
	shmem_barrier_all();

	bad = from_left != left || (me == 0 && counter != n);
	if (bad)
		fprintf(stderr, "shmem-ring: PE %d: from_left %d, counter %ld\n",
			me, from_left, counter);
	else if (me == 0)
		printf("shmem-ring: %d PEs, put and atomic add right\n", n);
	shmem_finalize();
	return bad;
}
