// SPDX-License-Identifier: GPL-2.0
/*
 * rndvfail: a rendezvous whose receiver cannot read the data fails on
 * both sides, under MPI_ERRORS_RETURN, and neither waits; the endpoints
 * go on working.  Two real failures, nothing injected:
 *
 *  - the read cannot start: rank 1 receives into a read-only mapping,
 *    which cannot be registered for the HFI to write (EFAULT): its
 *    MPI_Recv fails with MPI_ERR_BUFFER, rank 0's MPI_Send with
 *    MPI_ERR_OTHER;
 *  - the read fails in flight: rank 0 unmaps its send buffer after
 *    MPI_Isend sent the request to send (an erroneous program: the
 *    registration cache's registrations end with their mapping), then
 *    tells rank 1 to receive; rank 1's read finds the registration gone,
 *    its MPI_Recv fails, and so does rank 0's MPI_Wait.
 *
 * After each, a correct rendezvous message goes through, bytes checked.
 * With argument "fatal" rank 0's failed MPI_Send runs under
 * MPI_ERRORS_ARE_FATAL: the job ends with a message naming the call and
 * the cause.
 */
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include "check.h"

/* Far above the eager limit (one packet): always a rendezvous. */
#define BIG	(256 * 1024)

#define EXPECT_CLASS(call, cls) do {					\
	int __e = (call), __c = -1;					\
	MPI_Error_class(__e, &__c);					\
	CHECK(__c == (cls), "%s gave class %d, want %s", #call, __c, #cls); \
} while (0)

static unsigned char *map_big(void)
{
	void *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap of %d bytes failed", BIG);
	return p;
}

static void fill(unsigned char *p, int seed)
{
	for (int i = 0; i < BIG; i++)
		p[i] = (unsigned char)(i * 7 + seed);
}

/* A correct rendezvous from rank 0 to rank 1 still arrives intact. */
static void still_works(int rank, unsigned char *buf, int seed)
{
	MPI_Status st;
	int count;

	if (rank == 0) {
		fill(buf, seed);
		CHECK_MPI(MPI_Send(buf, BIG, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
		return;
	}
	memset(buf, 0, BIG);
	CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &st));
	CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
	CHECK(count == BIG, "received %d bytes, want %d", count, BIG);
	for (int i = 0; i < BIG; i++)
		CHECK(buf[i] == (unsigned char)(i * 7 + seed),
		      "byte %d is %u after a failed rendezvous", i, buf[i]);
}

/* Rank 1's buffer cannot take the data: the read never starts. */
static void cannot_start(int rank, unsigned char *buf, bool fatal)
{
	if (rank == 0) {
		fill(buf, 1);
		if (fatal)
			MPI_Comm_set_errhandler(MPI_COMM_WORLD,
						MPI_ERRORS_ARE_FATAL);
		EXPECT_CLASS(MPI_Send(buf, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD),
			     MPI_ERR_OTHER);
		return;
	}
	CHECK(!mprotect(buf, BIG, PROT_READ), "mprotect failed");
	EXPECT_CLASS(MPI_Recv(buf, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
	CHECK(!mprotect(buf, BIG, PROT_READ | PROT_WRITE), "mprotect failed");
}

/* Rank 0's buffer goes after the request to send: the read fails. */
static void fails_in_flight(int rank, unsigned char *buf)
{
	MPI_Request rq;
	int go = 1;

	if (rank == 0) {
		unsigned char *gone = map_big();

		fill(gone, 2);
		CHECK_MPI(MPI_Isend(gone, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
				    &rq));
		CHECK(!munmap(gone, BIG), "munmap failed");
		CHECK_MPI(MPI_Send(&go, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
		EXPECT_CLASS(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
		return;
	}
	/* The request to send came first: it waits, unexpected. */
	CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 3, MPI_COMM_WORLD,
			   MPI_STATUS_IGNORE));
	EXPECT_CLASS(MPI_Recv(buf, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
			      MPI_STATUS_IGNORE), MPI_ERR_OTHER);
}

int main(int argc, char **argv)
{
	bool fatal = argc > 1 && !strcmp(argv[1], "fatal");
	unsigned char *buf;
	int rank, size;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size == 2, "run on 2 ranks, not %d", size);
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	buf = map_big();

	cannot_start(rank, buf, fatal);
	still_works(rank, buf, 3);
	fails_in_flight(rank, buf);
	still_works(rank, buf, 4);

	CHECK(!munmap(buf, BIG), "munmap failed");
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rndvfail: both sides saw each failed rendezvous\n");
	CHECK_MPI(MPI_Finalize());
	return 0;
}
