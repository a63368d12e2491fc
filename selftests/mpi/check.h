/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the MPI test programs: CHECK() prints what failed, with the
 * rank, and ends the job through MPI_Abort (percs-run then exits non-zero
 * naming the rank).
 */
#ifndef PERCS_MPI_TEST_CHECK_H
#define PERCS_MPI_TEST_CHECK_H

#include <stdio.h>
#include <mpi.h>

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		int __r = -1;						\
		MPI_Comm_rank(MPI_COMM_WORLD, &__r);			\
		fprintf(stderr, "rank %d: %s:%d: check failed: %s: ",	\
			__r, __FILE__, __LINE__, #cond);		\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		MPI_Abort(MPI_COMM_WORLD, 3);				\
	}								\
} while (0)

#define CHECK_MPI(call) do {						\
	int __e = (call);						\
	CHECK(__e == MPI_SUCCESS, "%s returned %d", #call, __e);	\
} while (0)

#endif
