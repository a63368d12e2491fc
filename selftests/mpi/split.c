// SPDX-License-Identifier: GPL-2.0
/*
 * split: MPI_COMM_WORLD as a ROWS x COLS grid, split into its rows (key:
 * the column) and its columns (key: the row, reversed); each row sums its
 * ranks at its last member, each column broadcasts from its bottom
 * member and scans; sizes, ranks, Comm_compare and the results checked.
 */
#include "check.h"

int main(int argc, char **argv)
{
	MPI_Comm row, col, dup;
	int rank, size, rows, cols, r, c, rrank, rsize, crank, csize, x, sum, res;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	for (cols = 1; (cols + 1) * (cols + 1) <= size; cols++)
		;
	while (size % cols)
		cols--;
	rows = size / cols;
	r = rank / cols;
	c = rank % cols;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, r, c, &row));
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, c, -r, &col));
	CHECK_MPI(MPI_Comm_rank(row, &rrank));
	CHECK_MPI(MPI_Comm_size(row, &rsize));
	CHECK_MPI(MPI_Comm_rank(col, &crank));
	CHECK_MPI(MPI_Comm_size(col, &csize));
	CHECK(rrank == c && rsize == cols, "row rank %d of %d", rrank, rsize);
	CHECK(crank == rows - 1 - r && csize == rows, "column rank %d of %d",
	      crank, csize);
	/* A row's sum of world ranks at its last member. */
	sum = -1;
	CHECK_MPI(MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cols - 1, row));
	if (rrank == cols - 1)
		CHECK(sum == r * cols * cols + cols * (cols - 1) / 2,
		      "row %d sum %d", r, sum);
	/* A column's bottom member (column rank 0) broadcasts its world rank. */
	x = rank;
	CHECK_MPI(MPI_Bcast(&x, 1, MPI_INT, 0, col));
	CHECK(x == (rows - 1) * cols + c, "column %d got %d", c, x);
	/* Inclusive scan of 1s: my column rank + 1. */
	x = 1;
	CHECK_MPI(MPI_Scan(&x, &sum, 1, MPI_INT, MPI_SUM, col));
	CHECK(sum == crank + 1, "column scan %d", sum);
	CHECK_MPI(MPI_Comm_dup(row, &dup));
	CHECK_MPI(MPI_Comm_compare(row, dup, &res));
	CHECK(res == MPI_CONGRUENT, "row vs its dup: %d", res);
	CHECK_MPI(MPI_Comm_compare(row, col, &res));
	CHECK(res == (rows == 1 && cols == 1 ? MPI_CONGRUENT : MPI_UNEQUAL) ||
	      (size == 1), "row vs column: %d", res);
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK_MPI(MPI_Comm_free(&row));
	CHECK_MPI(MPI_Comm_free(&col));
	if (rank == 0)
		printf("split: %d x %d grid, rows and columns\n", rows, cols);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
