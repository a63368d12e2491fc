// SPDX-License-Identifier: GPL-2.0
/*
 * ring: a token goes round the ring ROUNDS times, each rank adding its
 * rank; rank 0 checks the sum.  Then every rank passes an array to its
 * right neighbour with MPI_Sendrecv_replace, in a vector datatype.
 */
#include <stdlib.h>
#include "check.h"

#define ROUNDS 20

int main(int argc, char **argv)
{
	int rank, size, r, token = 0, right, left, i, a[8];
	MPI_Datatype every_other;
	MPI_Status st;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;
	for (r = 0; r < ROUNDS; r++) {
		if (rank == 0) {
			CHECK_MPI(MPI_Send(&token, 1, MPI_INT, right, r, MPI_COMM_WORLD));
			CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, left, r, MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE == left && st.MPI_TAG == r,
			      "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
		} else {
			CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, left, r, MPI_COMM_WORLD, &st));
			token += rank;
			CHECK_MPI(MPI_Send(&token, 1, MPI_INT, right, r, MPI_COMM_WORLD));
		}
	}
	if (rank == 0)
		CHECK(token == ROUNDS * size * (size - 1) / 2, "token %d", token);

	/* a[0], a[2], a[4], a[6] travel; the odd ones stay. */
	CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
	CHECK_MPI(MPI_Type_commit(&every_other));
	for (i = 0; i < 8; i++)
		a[i] = rank * 100 + i;
	CHECK_MPI(MPI_Sendrecv_replace(a, 1, every_other, right, 7, left, 7,
				       MPI_COMM_WORLD, &st));
	for (i = 0; i < 8; i++)
		CHECK(a[i] == (i % 2 ? rank : left) * 100 + i, "a[%d] = %d", i, a[i]);
	CHECK_MPI(MPI_Type_free(&every_other));
	if (rank == 0)
		printf("ring: %d rounds over %d ranks, token %d\n", ROUNDS, size, token);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
