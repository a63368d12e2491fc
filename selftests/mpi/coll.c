// SPDX-License-Identifier: GPL-2.0
/*
 * coll: every collective against a reference computed locally, on
 * MPI_COMM_WORLD with every root, in place where MPI allows it, and on
 * the row and column communicators of a split (and a dup).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define COUNT 37	/* not a power of two, crosses no boundary on purpose */

static int val(int rank, int i)
{
	return rank * 1000 + i * 3 - 50;
}

static void check_comm(MPI_Comm comm, const char *name)
{
	int rank, size, root, i, r;
	int *in, *out, *all, *ref;

	CHECK_MPI(MPI_Comm_rank(comm, &rank));
	CHECK_MPI(MPI_Comm_size(comm, &size));
	in = malloc(sizeof(int) * COUNT);
	out = malloc(sizeof(int) * COUNT * size);
	all = malloc(sizeof(int) * COUNT * size);
	ref = malloc(sizeof(int) * COUNT * size);
	CHECK(in && out && all && ref, "out of memory");
	for (i = 0; i < COUNT; i++)
		in[i] = val(rank, i);
	CHECK_MPI(MPI_Barrier(comm));

	for (root = 0; root < size; root++) {
		/* bcast */
		for (i = 0; i < COUNT; i++)
			out[i] = rank == root ? val(root, i) : 0;
		CHECK_MPI(MPI_Bcast(out, COUNT, MPI_INT, root, comm));
		for (i = 0; i < COUNT; i++)
			CHECK(out[i] == val(root, i), "%s bcast root %d [%d]", name, root, i);
		/* reduce SUM and MAX, then in place */
		CHECK_MPI(MPI_Reduce(in, out, COUNT, MPI_INT, MPI_SUM, root, comm));
		if (rank == root)
			for (i = 0; i < COUNT; i++) {
				int s = 0;

				for (r = 0; r < size; r++)
					s += val(r, i);
				CHECK(out[i] == s, "%s reduce root %d [%d] %d != %d",
				      name, root, i, out[i], s);
			}
		memcpy(out, in, sizeof(int) * COUNT);
		CHECK_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : in, out, COUNT,
				     MPI_INT, MPI_MAX, root, comm));
		if (rank == root)
			for (i = 0; i < COUNT; i++)
				CHECK(out[i] == val(size - 1, i), "%s reduce in place", name);
		/* gather, scatter */
		CHECK_MPI(MPI_Gather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, root, comm));
		if (rank == root)
			for (r = 0; r < size; r++)
				for (i = 0; i < COUNT; i++)
					CHECK(all[r * COUNT + i] == val(r, i),
					      "%s gather root %d from %d", name, root, r);
		for (r = 0; r < size; r++)
			for (i = 0; i < COUNT; i++)
				ref[r * COUNT + i] = val(root, i) + r;
		CHECK_MPI(MPI_Scatter(ref, COUNT, MPI_INT, out, COUNT, MPI_INT, root, comm));
		for (i = 0; i < COUNT; i++)
			CHECK(out[i] == val(root, i) + rank, "%s scatter root %d", name, root);
	}
	/* allreduce (also in place, also doubles), allgather, alltoall */
	CHECK_MPI(MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_MIN, comm));
	for (i = 0; i < COUNT; i++)
		CHECK(out[i] == val(0, i), "%s allreduce min", name);
	{
		double d = rank + 0.5, dsum = 0;

		CHECK_MPI(MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, comm));
		CHECK(dsum == size * size / 2.0, "%s allreduce double %g", name, dsum);
		d = rank;
		CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, comm));
		CHECK(d == size - 1, "%s allreduce in place", name);
	}
	CHECK_MPI(MPI_Allgather(in, COUNT, MPI_INT, all, COUNT, MPI_INT, comm));
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			CHECK(all[r * COUNT + i] == val(r, i), "%s allgather", name);
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			ref[r * COUNT + i] = rank * 100 + r;	/* to rank r */
	CHECK_MPI(MPI_Alltoall(ref, COUNT, MPI_INT, all, COUNT, MPI_INT, comm));
	for (r = 0; r < size; r++)
		for (i = 0; i < COUNT; i++)
			CHECK(all[r * COUNT + i] == r * 100 + rank, "%s alltoall", name);
	free(in);
	free(out);
	free(all);
	free(ref);
}

int main(int argc, char **argv)
{
	int rank, size, cols, rrank, rsize, cmp;
	MPI_Comm dup, row, col;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	check_comm(MPI_COMM_WORLD, "world");
	check_comm(MPI_COMM_SELF, "self");

	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	CHECK_MPI(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
	CHECK(cmp == MPI_CONGRUENT, "dup compares %d", cmp);
	check_comm(dup, "dup");

	/* A grid of rows of 2 (the last row may be short); reversed keys. */
	cols = 2;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank / cols, -rank, &row));
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % cols, rank, &col));
	CHECK_MPI(MPI_Comm_rank(row, &rrank));
	CHECK_MPI(MPI_Comm_size(row, &rsize));
	CHECK(rsize == (rank / cols == (size - 1) / cols ? size - rank / cols * cols : cols),
	      "row size %d", rsize);
	CHECK(rrank == rsize - 1 - rank % cols, "row rank %d", rrank);
	check_comm(row, "row");
	check_comm(col, "col");
	CHECK_MPI(MPI_Comm_free(&row));
	CHECK_MPI(MPI_Comm_free(&col));
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK(row == MPI_COMM_NULL, "freed comm not null");
	if (rank == 0)
		printf("coll: every collective checked on %d ranks\n", size);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
