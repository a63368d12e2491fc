// SPDX-License-Identifier: GPL-2.0
/*
 * bsend: buffered sends complete whatever the receiver does.  Each rank
 * attaches a buffer, MPI_Bsends messages (small and rendezvous-sized) to
 * its right neighbour before that one receives anything, then receives
 * from its left one after a barrier; a message larger than the attached
 * buffer gets MPI_ERR_BUFFER; detach returns the buffer.  Then Testsome and
 * Reduce_scatter with per-rank counts.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define MSGS 6

static int len_of(int i)
{
	return i % 2 ? 100000 : 10 + i;	/* rendezvous and eager sizes */
}

int main(int argc, char **argv)
{
	int rank, size, right, left, i, j, need = 0, sz, n, idx[2], *counts;
	int *in, out = -1, expect;
	char *bufs[MSGS], *got, *att, *det;
	MPI_Request rq[2];

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;
	for (i = 0; i < MSGS; i++)
		need += len_of(i) + MPI_BSEND_OVERHEAD;
	att = malloc(need);
	got = malloc(100000);
	CHECK(att && got, "out of memory");
	CHECK_MPI(MPI_Buffer_attach(att, need));
	for (i = 0; i < MSGS; i++) {
		bufs[i] = malloc(len_of(i));
		CHECK(bufs[i], "out of memory");
		for (j = 0; j < len_of(i); j++)
			bufs[i][j] = (char)(rank + i + j);
		CHECK_MPI(MPI_Bsend(bufs[i], len_of(i), MPI_CHAR, right, i, MPI_COMM_WORLD));
		/* The user's buffer is free at once. */
		memset(bufs[i], 0, len_of(i));
	}
	/* A message larger than the whole buffer never fits. */
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	{
		int e = MPI_Bsend(got, need, MPI_CHAR, right, 99, MPI_COMM_WORLD), c = -1;

		MPI_Error_class(e, &c);
		CHECK(c == MPI_ERR_BUFFER, "bsend beyond the buffer gave %d", e);
	}
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < MSGS; i++) {
		MPI_Status st;

		CHECK_MPI(MPI_Recv(got, 100000, MPI_CHAR, left, i, MPI_COMM_WORLD, &st));
		CHECK_MPI(MPI_Get_count(&st, MPI_CHAR, &n));
		CHECK(n == len_of(i), "message %d: %d bytes", i, n);
		for (j = 0; j < n; j++)
			CHECK(got[j] == (char)(left + i + j), "message %d byte %d", i, j);
	}
	CHECK_MPI(MPI_Buffer_detach(&det, &sz));
	CHECK(det == att && sz == need, "detach gave %p/%d", (void *)det, sz);

	/* Testsome until both of a send and a receive are in. */
	{
		int x = rank, y = -1, left_done = 2, k;

		CHECK_MPI(MPI_Irecv(&y, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]));
		CHECK_MPI(MPI_Isend(&x, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]));
		for (k = 0; k < 10000000 && left_done > 0; k++) {
			CHECK_MPI(MPI_Testsome(2, rq, &n, idx, MPI_STATUSES_IGNORE));
			CHECK(n != MPI_UNDEFINED && n >= 0 && n <= 2, "testsome %d", n);
			left_done -= n;
		}
		CHECK(left_done == 0 && y == left, "testsome: %d left, got %d", left_done, y);
		CHECK_MPI(MPI_Testsome(2, rq, &n, idx, MPI_STATUSES_IGNORE));
		CHECK(n == MPI_UNDEFINED, "testsome on nulls %d", n);
	}

	/* Reduce_scatter: rank r gets r + 1 elements of the sum. */
	counts = malloc(sizeof(int) * size);
	CHECK(counts, "out of memory");
	for (i = 0, n = 0; i < size; i++) {
		counts[i] = i + 1;
		n += i + 1;
	}
	in = malloc(sizeof(int) * n);
	CHECK(in, "out of memory");
	for (i = 0; i < n; i++)
		in[i] = i * 10 + rank;
	{
		int *res = malloc(sizeof(int) * (rank + 1)), first = rank * (rank + 1) / 2;

		CHECK(res, "out of memory");
		CHECK_MPI(MPI_Reduce_scatter(in, res, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (i = 0; i <= rank; i++) {
			expect = (first + i) * 10 * size + size * (size - 1) / 2;
			CHECK(res[i] == expect, "reduce_scatter [%d] = %d, want %d", i, res[i],
			      expect);
		}
		out = res[0];
		free(res);
	}
	if (rank == 0)
		printf("bsend: buffered sends, testsome, reduce_scatter checked (%d)\n", out);
	for (i = 0; i < MSGS; i++)
		free(bufs[i]);
	free(att);
	free(got);
	free(in);
	free(counts);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
