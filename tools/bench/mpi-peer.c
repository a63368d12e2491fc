// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-peer: the MPI figures of percs-bench's peer comparison
 * (tools/bench/peers.sh), plain MPI so that the one source is built twice,
 * with Open MPI's mpicc and with percs-cc, and both builds measure the
 * same thing.
 *
 *   mpi-peer [--quick] p2p|coll...   (each word in turn)
 *
 *   p2p   ranks 0 and 1 (the others wait): 8-byte ping-pong, half round
 *         trip, median; one-way streaming of 1 MiB messages (a window of
 *         16 MPI_Isend, then one reply), bytes/s at the receiver
 *   coll  every rank: MPI_Allreduce of one 64-bit integer (MPI_SUM) and
 *         MPI_Barrier, each call timed, the slowest rank's median
 *
 * One JSON line per figure on rank 0's stdout:
 *   {"test":"latency","bytes":8,"ranks":2,"value":1.234,"unit":"us"}
 * Every ping-pong message and every allreduce sum is checked: a wrong one
 * is a message on stderr and exit status 1; bad usage exits 2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define BW_BYTES	(1 << 20)
#define BW_WINDOW	16

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void row(const char *test, int bytes, int ranks, double value,
		const char *unit)
{
	printf("{\"test\":\"%s\",\"bytes\":%d,\"ranks\":%d,\"value\":%.3f,\"unit\":\"%s\"}\n",
	       test, bytes, ranks, value, unit);
	fflush(stdout);
}

/* 8-byte ping-pong between ranks 0 and 1; 0 or 1 when a reply was wrong. */
static int latency(int rank, int iters)
{
	double *samples = malloc(sizeof(double) * iters);
	int i, peer = !rank, warm = iters / 10 + 1, bad = 0;
	uint64_t v;

	if (!samples) {
		fprintf(stderr, "mpi-peer: out of memory\n");
		return 1;
	}
	for (i = -warm; i < iters && !bad; i++) {
		double t = MPI_Wtime();

		if (rank == 0) {
			v = (uint64_t)i * 3 + 1;
			MPI_Send(&v, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(&v, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			/* The peer adds one before it replies. */
			if (v != (uint64_t)i * 3 + 2) {
				fprintf(stderr, "mpi-peer: ping-pong %d: got %llu\n",
					i, (unsigned long long)v);
				bad = 1;
			}
		} else {
			MPI_Recv(&v, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			v++;
			MPI_Send(&v, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
		if (i >= 0)
			samples[i] = (MPI_Wtime() - t) / 2;
	}
	if (!bad) {
		qsort(samples, iters, sizeof(double), cmp_double);
		if (rank == 0)
			row("latency", 8, 2, samples[iters / 2] * 1e6, "us");
	}
	free(samples);
	return bad;
}

/* One-way streaming of BW_BYTES messages from rank 0 to rank 1. */
static int bandwidth(int rank, int iters)
{
	unsigned char *buf = malloc(BW_BYTES);
	MPI_Request rq[BW_WINDOW];
	int i, w, peer = !rank, ack = 0;
	double t0 = 0;

	if (!buf) {
		fprintf(stderr, "mpi-peer: out of memory\n");
		return 1;
	}
	memset(buf, rank + 1, BW_BYTES);
	for (i = -1; i < iters; i++) {	/* one round of warm-up */
		if (i == 0)
			t0 = MPI_Wtime();
		for (w = 0; w < BW_WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(buf, BW_BYTES, MPI_BYTE, peer, 2,
					  MPI_COMM_WORLD, &rq[w]);
			else
				MPI_Irecv(buf, BW_BYTES, MPI_BYTE, peer, 2,
					  MPI_COMM_WORLD, &rq[w]);
		}
		MPI_Waitall(BW_WINDOW, rq, MPI_STATUSES_IGNORE);
		/* The reply closes the window: every byte has arrived. */
		if (rank == 1)
			MPI_Send(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
		else
			MPI_Recv(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	}
	if (rank == 0)
		row("bw", BW_BYTES, 2, (double)BW_BYTES * BW_WINDOW * iters /
		    (MPI_Wtime() - t0), "B/s");
	/* Rank 1 received what rank 0 sent. */
	if (rank == 1 && (buf[0] != 1 || buf[BW_BYTES - 1] != 1)) {
		fprintf(stderr, "mpi-peer: streamed bytes wrong\n");
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

/* The median of @n samples (sorts them). */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

/*
 * MPI_Allreduce of one uint64 and MPI_Barrier: @iters calls each after a
 * warm-up, each timed; the figure is the slowest rank's median call.
 * Medians, because a vCPU the host does not run for a while stretches a
 * few calls by milliseconds, which would swamp a mean.
 */
static int collectives(int rank, int size, int iters)
{
	double *v = malloc(sizeof(double) * iters), t, mine, worst;
	uint64_t in, out, want;
	int i, bad = 0, any;

	if (!v) {
		fprintf(stderr, "mpi-peer: out of memory\n");
		return 1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = -(iters / 10 + 1); i < iters; i++) {
		in = (uint64_t)rank * 1000 + (uint64_t)(i + 100);
		t = MPI_Wtime();
		MPI_Allreduce(&in, &out, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		if (i >= 0)
			v[i] = MPI_Wtime() - t;
		want = (uint64_t)size * (size - 1) / 2 * 1000 +
		       (uint64_t)size * (uint64_t)(i + 100);
		if (out != want && !bad) {
			fprintf(stderr, "mpi-peer: rank %d allreduce %d: %llu, expected %llu\n",
				rank, i, (unsigned long long)out,
				(unsigned long long)want);
			bad = 1;
		}
	}
	mine = median(v, iters);
	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		row("allreduce", 8, size, worst * 1e6, "us");

	for (i = -(iters / 10 + 1); i < iters; i++) {
		t = MPI_Wtime();
		MPI_Barrier(MPI_COMM_WORLD);
		if (i >= 0)
			v[i] = MPI_Wtime() - t;
	}
	mine = median(v, iters);
	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		row("barrier", 0, size, worst * 1e6, "us");
	free(v);
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return any;
}

int main(int argc, char **argv)
{
	int rank, size, quick = 0, bad = 0, a = 1, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (a < argc && !strcmp(argv[a], "--quick")) {
		quick = 1;
		a++;
	}
	/* Check every word before measuring anything. */
	for (i = a; i < argc; i++)
		if (strcmp(argv[i], "p2p") && strcmp(argv[i], "coll"))
			break;
	if (a == argc || i < argc) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi-peer [--quick] p2p|coll...\n");
		MPI_Finalize();
		return 2;
	}
	for (i = a; i < argc && !bad; i++) {
		if (!strcmp(argv[i], "coll")) {
			bad = collectives(rank, size, quick ? 50 : 100);
			continue;
		}
		if (size < 2) {
			if (rank == 0)
				fprintf(stderr, "mpi-peer: p2p needs 2 ranks\n");
			MPI_Finalize();
			return 2;
		}
		if (rank < 2)
			bad = latency(rank, quick ? 100 : 5000);
		if (rank < 2 && !bad)
			bad = bandwidth(rank, quick ? 2 : 20);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (bad)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
