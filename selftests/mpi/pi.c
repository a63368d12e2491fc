// SPDX-License-Identifier: GPL-2.0
/*
 * pi: the integral of 4 / (1 + x^2) over [0, 1] by the midpoint rule,
 * the intervals dealt out round-robin; the sum by MPI_Reduce at the last
 * rank and by MPI_Allreduce everywhere (the same bits: one combination
 * order), checked against PI.
 */
#include <stdlib.h>
#include "check.h"

#define PI 3.14159265358979323846

static double dabs(double x)
{
	return x < 0 ? -x : x;
}

int main(int argc, char **argv)
{
	const long n = argc > 1 ? atol(argv[1]) : 1000000;
	double h = 1.0 / n, part = 0, at_root = 0, all = 0;
	int rank, size;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	for (long i = rank; i < n; i += size) {
		double x = h * (i + 0.5);

		part += 4.0 / (1.0 + x * x);
	}
	part *= h;
	CHECK_MPI(MPI_Reduce(&part, &at_root, 1, MPI_DOUBLE, MPI_SUM, size - 1,
			     MPI_COMM_WORLD));
	CHECK_MPI(MPI_Allreduce(&part, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	CHECK(dabs(all - PI) < 1e-9, "pi is %.15f, off by %g", all, all - PI);
	if (rank == size - 1) {
		CHECK(at_root == all, "Reduce %.17g, Allreduce %.17g", at_root, all);
		printf("pi: %.12f on %d ranks, %ld intervals, error %.1e\n", all,
		       size, n, dabs(all - PI));
	}
	CHECK_MPI(MPI_Finalize());
	return 0;
}
