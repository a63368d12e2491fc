// SPDX-License-Identifier: GPL-2.0
/*
 * torture: every rank sends MSGS messages to pseudo-random peers, of
 * random sizes across the eager/rendezvous threshold (0 B .. 96 KiB, some
 * 1 MiB), with Isend and Issend, all before receiving
 * anything (so they pile up as unexpected messages at the receivers and
 * exercise the flow control); then each rank receives what the common
 * plan says it gets with ANY_SOURCE/ANY_TAG, the tag being the sender's
 * message number: per-sender tags must come in increasing order
 * (non-overtaking, under the network's reorder knob), each payload must
 * be its pattern.  Then a probe, a cancel and Waitany/Waitsome/Testall
 * rounds.  Arguments: messages per rank (default 200); "slow": rank 0
 * sleeps a second after sending, before it receives anything, so the
 * others' messages to it pile up (the flow control must hold them back
 * without losing any or blocking the other pairs).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define MAXLEN (1 << 20)

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Message @i of rank @s: its destination and length (the common plan). */
static void plan(int s, int i, int size, int *dst, int *len)
{
	uint64_t h = mix((uint64_t)s << 32 | (unsigned int)i);

	*dst = (int)((s + 1 + h % (size - 1)) % size);
	h >>= 20;
	if (h % 50 == 0)
		*len = MAXLEN;
	else if (h % 3 == 0)
		*len = (int)(h % 64);			/* immediate sends */
	else
		*len = (int)((h >> 8) % (96 * 1024));
}

static unsigned char pat(int s, int i, int j)
{
	return (unsigned char)(s * 131 + i * 7 + j);
}

static void wait_families(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int x = rank, got[4] = { -1, -1, -1, -1 }, idx, n, flag = 0, k, ids[4];
	MPI_Request rq[4];
	MPI_Status st[4];

	/* Waitany/Waitsome/Testall over two receives and two sends. */
	CHECK_MPI(MPI_Irecv(&got[0], 1, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
	CHECK_MPI(MPI_Irecv(&got[1], 1, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[1]));
	CHECK_MPI(MPI_Isend(&x, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[2]));
	CHECK_MPI(MPI_Issend(&x, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[3]));
	CHECK_MPI(MPI_Waitany(4, rq, &idx, &st[0]));
	CHECK(idx >= 0 && idx < 4 && rq[idx] == MPI_REQUEST_NULL, "waitany %d", idx);
	CHECK_MPI(MPI_Waitsome(4, rq, &n, ids, st));
	CHECK(n >= 1 || n == MPI_UNDEFINED, "waitsome %d", n);
	for (k = 0; k < 1000000 && !flag; k++)
		CHECK_MPI(MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE));
	CHECK(flag, "testall never true");
	CHECK(got[0] == left && got[1] == right, "got %d %d", got[0], got[1]);
}

static void probe_and_cancel(int rank, int size)
{
	int v = 0, count = -1, flag = 0, dst = (rank + 1) % size;
	int src = (rank + size - 1) % size, big[100], in[100];
	MPI_Request rq;
	MPI_Status st;

	/* A receive nobody will match, cancelled. */
	CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq));
	CHECK_MPI(MPI_Cancel(&rq));
	CHECK_MPI(MPI_Wait(&rq, &st));
	CHECK_MPI(MPI_Test_cancelled(&st, &flag));
	CHECK(flag == 1, "receive not cancelled");

	/* Probe tells source, tag and count before the receive. */
	memset(big, 0, sizeof(big));
	big[99] = rank;
	CHECK_MPI(MPI_Isend(big, 100, MPI_INT, dst, 55, MPI_COMM_WORLD, &rq));
	CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, 55, MPI_COMM_WORLD, &st));
	CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 55 && count == 100,
	      "probe: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
	CHECK_MPI(MPI_Iprobe(src, 55, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	CHECK(flag, "iprobe after probe");
	/* Not into big: the Isend may still be reading it (rendezvous). */
	CHECK_MPI(MPI_Recv(in, 100, MPI_INT, src, 55, MPI_COMM_WORLD, &st));
	CHECK(in[99] == src, "probed message %d", in[99]);
	CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	/* PROC_NULL: completes at once, empty. */
	CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
	CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0, "proc null");
}

int main(int argc, char **argv)
{
	int rank, size, msgs = 200, i, s, dst, len, expect = 0, *last, slow;
	unsigned char **sbuf, *rbuf;
	MPI_Request *rq;

	CHECK_MPI(MPI_Init(&argc, &argv));
	CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (argc > 1)
		msgs = atoi(argv[1]);
	slow = argc > 2 && !strcmp(argv[2], "slow");
	CHECK(size >= 2 && msgs > 0, "needs 2 ranks");
	sbuf = calloc(msgs, sizeof(*sbuf));
	rq = calloc(msgs, sizeof(*rq));
	last = calloc(size, sizeof(*last));
	rbuf = malloc(MAXLEN);
	CHECK(sbuf && rq && last && rbuf, "out of memory");

	for (i = 0; i < msgs; i++) {
		plan(rank, i, size, &dst, &len);
		sbuf[i] = malloc(len ? len : 1);
		CHECK(sbuf[i], "out of memory");
		for (int j = 0; j < len; j++)
			sbuf[i][j] = pat(rank, i, j);
		rq[i] = MPI_REQUEST_NULL;
		if (i % 4 == 1)
			CHECK_MPI(MPI_Issend(sbuf[i], len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &rq[i]));
		else
			CHECK_MPI(MPI_Isend(sbuf[i], len, MPI_BYTE, dst, i, MPI_COMM_WORLD, &rq[i]));
	}
	if (slow && rank == 0)
		sleep(1);
	for (s = 0; s < size; s++) {
		last[s] = -1;
		for (i = 0; i < msgs; i++) {
			plan(s, i, size, &dst, &len);
			expect += dst == rank;
		}
	}
	for (i = 0; i < expect; i++) {
		MPI_Status st;
		int n, pd, plen, tag;

		CHECK_MPI(MPI_Recv(rbuf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
				   MPI_COMM_WORLD, &st));
		s = st.MPI_SOURCE;
		tag = st.MPI_TAG;
		CHECK(s >= 0 && s < size && s != rank, "source %d", s);
		CHECK(tag > last[s], "from %d: message %d after %d (overtaken)", s, tag, last[s]);
		plan(s, tag, size, &pd, &plen);
		CHECK(pd == rank, "message %d of %d was not for me", tag, s);
		/* Every message of s to me between last[s] and tag arrived before? */
		for (int k = last[s] + 1; k < tag; k++) {
			int d2, l2;

			plan(s, k, size, &d2, &l2);
			CHECK(d2 != rank, "from %d: message %d skipped before %d", s, k, tag);
		}
		last[s] = tag;
		CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
		CHECK(n == plen, "from %d message %d: %d bytes, want %d", s, tag, n, plen);
		for (int j = 0; j < n; j++)
			CHECK(rbuf[j] == pat(s, tag, j), "from %d message %d byte %d", s, tag, j);
	}
	CHECK_MPI(MPI_Waitall(msgs, rq, MPI_STATUSES_IGNORE));
	for (i = 0; i < msgs; i++)
		free(sbuf[i]);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	wait_families(rank, size);
	probe_and_cancel(rank, size);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("torture: %d ranks x %d messages checked\n", size, msgs);
	free(sbuf);
	free(rq);
	free(last);
	free(rbuf);
	CHECK_MPI(MPI_Finalize());
	return 0;
}
