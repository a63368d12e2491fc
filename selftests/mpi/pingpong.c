// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: ranks 0 and 1 bounce messages of 0 B to 1 MiB (the others
 * just take part in the final barrier); the bounced bytes are checked
 * every round.  Prints one row per size: half round trip in us and
 * bandwidth in MB/s.  Argument: iterations for small sizes (default 100).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MAX_SIZE (1 << 20)

static void fill(unsigned char *b, int n, int seed)
{
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 31 + i * 7);
}

int main(int argc, char **argv)
{
	int rank, size, iters = 100, n, i;
	unsigned char *buf, *want;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (argc > 1)
		iters = atoi(argv[1]);
	CHECK(size >= 2 && iters > 0, "needs 2 ranks and iterations > 0");
	buf = malloc(MAX_SIZE);
	want = malloc(MAX_SIZE);
	CHECK(buf && want, "out of memory");
	if (rank == 0)
		printf("%10s %12s %12s\n", "bytes", "latency_us", "MB/s");
	for (n = 0; n <= MAX_SIZE; n = n ? n * 2 : 1) {
		int it = n >= 65536 ? (iters + 9) / 10 : iters;
		double t0 = 0;

		if (rank > 1)
			continue;
		for (i = -it / 10 - 1; i < it; i++) {	/* warm-up first */
			if (i == 0)
				t0 = MPI_Wtime();
			if (rank == 0) {
				fill(buf, n, i);
				CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, 1, i & 0xff, MPI_COMM_WORLD));
				CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, 1, i & 0xff, MPI_COMM_WORLD,
						   MPI_STATUS_IGNORE));
				fill(want, n, i);
				CHECK(!memcmp(buf, want, n), "size %d round %d: bytes differ", n, i);
			} else {
				CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, 0, i & 0xff, MPI_COMM_WORLD,
						   MPI_STATUS_IGNORE));
				CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, 0, i & 0xff, MPI_COMM_WORLD));
			}
		}
		if (rank == 0) {
			double half = (MPI_Wtime() - t0) / it / 2;

			printf("%10d %12.2f %12.2f\n", n, half * 1e6,
			       n ? n / half / 1e6 : 0.0);
		}
	}
	free(buf);
	free(want);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	CHECK_MPI(MPI_Finalize());
	return 0;
}
