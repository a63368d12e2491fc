// SPDX-License-Identifier: GPL-2.0
/*
 * hello: every rank says hello; the environment calls answer what they
 * should and an allreduce of the ranks gives n(n-1)/2.
 */
#include <string.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, flag = 0, provided = -1, v, sv, len, sum = 0, *ub;
	char name[MPI_MAX_PROCESSOR_NAME];
	double t0, t1;

	CHECK_MPI(MPI_Initialized(&flag));
	CHECK(flag == 0, "initialized before MPI_Init");
	CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
	CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
	CHECK_MPI(MPI_Initialized(&flag));
	CHECK(flag == 1, "not initialized after MPI_Init");
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK_MPI(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && (int)strlen(name) == len, "name '%s' len %d", name, len);
	CHECK_MPI(MPI_Get_version(&v, &sv));
	CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v, sv);
	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
	CHECK(flag && *ub >= 32767, "MPI_TAG_UB %d", flag ? *ub : -1);
	t0 = MPI_Wtime();
	CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	t1 = MPI_Wtime();
	CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
	CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1, "clock");
	printf("hello from rank %d of %d on %s\n", rank, size, name);
	CHECK_MPI(MPI_Finalize());
	CHECK_MPI(MPI_Finalized(&flag));
	return flag ? 0 : 1;
}
