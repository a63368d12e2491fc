// SPDX-License-Identifier: GPL-2.0
/*
 * collfail: a rank dies while the others are inside a collective.
 *
 *   collfail COLL HOW HANDLER
 *
 * COLL: barrier, bcast, reduce, allreduce, allgather or alltoall (the
 * algorithm is whatever PERCS_MPI_COLL_<COLL> forces).  Every rank runs
 * COLL in a loop (a first round that completes is checked against its
 * reference); after the first, rank 1 - the victim - waits 50 ms, so the
 * others are surely waiting inside the next collective, and then HOW: "kill" (SIGKILL) or
 * "exit" (returns from main without MPI_Finalize).
 *
 * HANDLER "return" (MPI_ERRORS_RETURN): each survivor's collective must
 * return MPI_ERR_PROC_ABORTED within a few calls (a rooted collective
 * may still complete on a rank whose part did not involve the victim,
 * before it hears of the death: it has 5 s to fail), then a
 * receive from the victim and another collective must fail at once too;
 * the survivor prints one line and finalizes.  HANDLER "fatal": the first
 * failing call aborts the job with the fatal handler's message.  Either
 * way percs-run must exit with the victim's status, naming it; a hang
 * fails on the runner's timeout.
 */
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define VICTIM	1
#define COUNT	64

static int run(const char *coll, int *sbuf, int *rbuf, int size)
{
	if (!strcmp(coll, "barrier"))
		return MPI_Barrier(MPI_COMM_WORLD);
	if (!strcmp(coll, "bcast"))
		return MPI_Bcast(sbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
	if (!strcmp(coll, "reduce"))
		return MPI_Reduce(sbuf, rbuf, COUNT, MPI_INT, MPI_SUM, 0,
				  MPI_COMM_WORLD);
	if (!strcmp(coll, "allreduce"))
		return MPI_Allreduce(sbuf, rbuf, COUNT, MPI_INT, MPI_SUM,
				     MPI_COMM_WORLD);
	if (!strcmp(coll, "allgather"))
		return MPI_Allgather(sbuf, COUNT / size, MPI_INT, rbuf,
				     COUNT / size, MPI_INT, MPI_COMM_WORLD);
	if (!strcmp(coll, "alltoall"))
		return MPI_Alltoall(sbuf, COUNT / size, MPI_INT, rbuf,
				    COUNT / size, MPI_INT, MPI_COMM_WORLD);
	return -1;
}

/* The first round's answer, where it is easy to state. */
static void check_first(const char *coll, const int *sbuf, const int *rbuf,
			int rank, int size)
{
	int i;

	if (!strcmp(coll, "bcast"))
		for (i = 0; i < COUNT; i++)
			CHECK(sbuf[i] == i, "bcast: element %d is %d", i, sbuf[i]);
	if (!strcmp(coll, "allreduce") || (!strcmp(coll, "reduce") && !rank))
		for (i = 0; i < COUNT; i++)
			CHECK(rbuf[i] == size * i + size * (size - 1) / 2,
			      "%s: element %d is %d", coll, i, rbuf[i]);
}

int main(int argc, char **argv)
{
	int sbuf[COUNT * 16], rbuf[COUNT * 16], rank, size, i, ret = 0, x;
	double t0;
	const char *coll, *how;
	bool fatal;
	char name[MPI_MAX_ERROR_STRING];

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(argc == 4 && size > VICTIM && size <= 16,
	      "usage: collfail COLL kill|exit return|fatal, 2 .. 16 ranks");
	coll = argv[1];
	how = argv[2];
	fatal = !strcmp(argv[3], "fatal");
	if (!fatal)
		CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD,
						  MPI_ERRORS_RETURN));
	for (i = 0; i < COUNT * 16; i++)
		sbuf[i] = i + (strcmp(coll, "bcast") ? rank : 0);
	if (rank == VICTIM) {
		CHECK(run(coll, sbuf, rbuf, size) == MPI_SUCCESS,
		      "%s failed before any rank died", coll);
		check_first(coll, sbuf, rbuf, rank, size);
		usleep(50000);
		if (!strcmp(how, "kill"))
			raise(SIGKILL);
		return 0;	/* "exit": no MPI_Finalize */
	}
	/*
	 * A survivor still in the first round when it hears of the death
	 * may fail it too (its peers may have given up): that is allowed.
	 */
	t0 = MPI_Wtime();
	for (i = 0; MPI_Wtime() - t0 < 5; i++) {
		ret = run(coll, sbuf, rbuf, size);
		if (ret != MPI_SUCCESS)
			break;
		if (i == 0)
			check_first(coll, sbuf, rbuf, rank, size);
	}
	CHECK(ret == MPI_ERR_PROC_ABORTED,
	      "%s returned %d after %d calls, not MPI_ERR_PROC_ABORTED", coll,
	      ret, i + 1);
	/* Known now: the next calls fail at once. */
	CHECK(run(coll, sbuf, rbuf, size) == MPI_ERR_PROC_ABORTED,
	      "a second %s did not fail", coll);
	CHECK(MPI_Recv(&x, 1, MPI_INT, VICTIM, 0, MPI_COMM_WORLD,
		       MPI_STATUS_IGNORE) == MPI_ERR_PROC_ABORTED,
	      "a receive from the dead rank did not fail");
	MPI_Error_string(ret, name, &x);
	printf("collfail: rank %d: %s failed after %d call(s): %s\n", rank,
	       coll, i + 1, name);
	fflush(stdout);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
