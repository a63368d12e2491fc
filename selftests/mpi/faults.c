// SPDX-License-Identifier: GPL-2.0
/*
 * faults: a rank that fails mid-job.  Argument "kill": after a first
 * exchange rank 1 kills itself with SIGKILL while the others wait for a
 * message from it.  "exit": rank 1 returns without MPI_Finalize.
 * "abort": rank 1 calls MPI_Abort(7).  In every case percs-run must end
 * the others and exit non-zero naming rank 1; a test that hangs fails on
 * the runner's timeout.
 */
#include <signal.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, x = 1;
	const char *how = argc > 1 ? argv[1] : "kill";

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (rank == 1) {
		if (!strcmp(how, "kill"))
			raise(SIGKILL);
		if (!strcmp(how, "abort"))
			MPI_Abort(MPI_COMM_WORLD, 7);
		return 0;	/* "exit": no MPI_Finalize */
	}
	/* Wait for a message rank 1 never sends. */
	MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
