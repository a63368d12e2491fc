// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-ring: an MPI program built outside the tree with an installed
 * percs-cc (or pkg-config --cflags --libs percs-mpi), run with percs-run.
 * Each rank passes its rank round the ring with MPI_Sendrecv, then
 * MPI_Allreduce sums the ranks; rank 0 prints one line when every rank
 * got the right answers, and a wrong one ends the job with MPI_Abort.
 */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, size, left, right, got = -1, sum = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;

	MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (got != left) {
		fprintf(stderr, "mpi-ring: rank %d got %d from %d\n", rank, got, left);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (sum != size * (size - 1) / 2) {
		fprintf(stderr, "mpi-ring: rank %d: sum of ranks %d\n", rank, sum);
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi-ring: %d ranks, ring and allreduce right\n", size);
	MPI_Finalize();
	return 0;
}
