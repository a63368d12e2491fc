// SPDX-License-Identifier: GPL-2.0
/*
 * matvec: c = A x b as the Cell MPI paper does it (seed 001): A
 * distributed by rows (ceil(N / ranks) rows a rank, the last block padded
 * when N does not divide), b and c replicated, MPI_Allgather of the row
 * blocks the only communication; iterated with b taken from c, and
 * checked against the same product computed by every rank alone.  The
 * values are small integers in doubles, so the check is equality.
 */
#include <stdlib.h>
#include "check.h"

static double a_at(int i, int j)
{
	return (double)((i * 7 + j * 3) % 11) - 5;
}

int main(int argc, char **argv)
{
	const int n = argc > 1 ? atoi(argv[1]) : 203, iters = 4;
	int rank, size, blk, first, it, i, j;
	double *b, *c, *ref, *tmp, *mine;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	blk = (n + size - 1) / size;
	first = rank * blk;
	b = malloc(sizeof(double) * n);
	c = malloc(sizeof(double) * blk * size);
	ref = malloc(sizeof(double) * n);
	tmp = malloc(sizeof(double) * n);
	mine = malloc(sizeof(double) * blk);
	CHECK(b && c && ref && tmp && mine, "out of memory");
	for (i = 0; i < n; i++)
		b[i] = ref[i] = (double)(i % 5) - 2;
	for (it = 0; it < iters; it++) {
		/* My rows (zeros past row N - 1), then everyone's. */
		for (i = 0; i < blk; i++) {
			mine[i] = 0;
			for (j = 0; j < n && first + i < n; j++)
				mine[i] += a_at(first + i, j) * b[j];
		}
		CHECK_MPI(MPI_Allgather(mine, blk, MPI_DOUBLE, c, blk, MPI_DOUBLE,
					MPI_COMM_WORLD));
		/* The reference, alone. */
		for (i = 0; i < n; i++) {
			tmp[i] = 0;
			for (j = 0; j < n; j++)
				tmp[i] += a_at(i, j) * ref[j];
		}
		for (i = 0; i < n; i++)
			CHECK(c[i] == tmp[i], "iteration %d: c[%d] = %g, want %g",
			      it, i, c[i], tmp[i]);
		/* Small exact numbers again: c mod 97, centred. */
		for (i = 0; i < n; i++)
			b[i] = ref[i] = (double)(((long)c[i] % 97 + 97) % 97) - 48;
	}
	if (rank == 0)
		printf("matvec: %d x %d, %d iterations on %d ranks\n", n, n,
		       iters, size);
	free(b);
	free(c);
	free(ref);
	free(tmp);
	free(mine);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
