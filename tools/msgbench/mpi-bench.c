// SPDX-License-Identifier: GPL-2.0
/*
 * percs-mpi-bench: OSU micro-benchmark style point-to-point figures of
 * the MPI layer, between ranks 0 and 1 of a percs-run job (the other
 * ranks wait in the final barrier).
 *
 *   latency  ping-pong, half round trip, median over the iterations;
 *            at 8 B in rounds alternating with the raw immediate-send
 *            ping-pong between windows of the ranks' own on the same
 *            HFIs (raw.c): rows raw_latency and pair_round (each
 *            round's MPI median over its raw median), and the
 *            messaging layer's floor in the same rounds (the raw
 *            ping-pong plus its header and one match): floor_latency
 *   bw       streaming: a window of 64 MPI_Isend then one reply, bytes
 *            per second at the receiver
 *   bibw     both directions at once
 *
 * Sizes 1 B .. 4 MiB (powers of two, and 0), after a warm-up of a tenth
 * of the iterations.  One line per size and test on stdout, as JSON:
 *   {"test":"latency","bytes":8,"value":3.35,"unit":"us"}
 * Arguments: [--quick] (fewer iterations), [--latency] (the latency
 * rows only).  The received bytes of every
 * latency round are checked (exit 1 and a message when wrong).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "raw.h"

#define MAX_SIZE	(4 << 20)
#define WINDOW		64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int iters_for(int bytes, int base)
{
	if (bytes >= (1 << 20))
		return base / 20 > 2 ? base / 20 : 2;
	if (bytes >= (64 << 10))
		return base / 5 > 4 ? base / 5 : 4;
	return base;
}

static void row(const char *test, int bytes, double value, const char *unit)
{
	printf("{\"test\":\"%s\",\"bytes\":%d,\"value\":%.3f,\"unit\":\"%s\"}\n",
	       test, bytes, value, unit);
	fflush(stdout);
}

/* @n MPI ping-pongs of @bytes; half round trips to @samples (or none). */
static int mpi_pingpong(int rank, int bytes, int n, unsigned char *buf,
			double *samples)
{
	int i, peer = !rank;

	for (i = 0; i < n; i++) {
		double t = MPI_Wtime();

		if (rank == 0) {
			memset(buf, i & 0xff, bytes);
			MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (int j = 0; j < bytes; j += 4093)
				if (buf[j] != (unsigned char)(i & 0xff)) {
					fprintf(stderr, "percs-mpi-bench: %d B: byte %d wrong\n",
						bytes, j);
					return 1;
				}
		} else {
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
		if (samples)
			samples[i] = (MPI_Wtime() - t) / 2;
	}
	return 0;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return v[n / 2];
}

static int latency(int rank, int bytes, int iters, unsigned char *buf,
		   double *samples)
{
	if (mpi_pingpong(rank, bytes, iters / 10 + 1, buf, NULL) ||
	    mpi_pingpong(rank, bytes, iters, buf, samples))
		return 1;
	if (rank == 0)
		row("latency", bytes, median(samples, iters) * 1e6, "us");
	return 0;
}

/*
 * The 8-byte MPI ping-pong, the raw immediate-send one on the same HFIs
 * and the floor (raw_floor_pingpong(): the raw one plus the messaging
 * layer's header and one match), in alternating blocks of @iters round
 * trips (PAIR_ROUNDS of each, after a warm-up of all), so that the host's
 * load, which changes by the second on a shared machine, weighs on all
 * alike.  Rows: "latency", "raw_latency" and "floor_latency" (medians over
 * all rounds) and "pair_round" (each round's MPI median over its raw
 * median).
 */
#define PAIR_ROUNDS	8
static int latency_pair(int rank, struct raw_pair *raw, int iters,
			unsigned char *buf, double *samples)
{
	double *mpi_s = samples, *raw_s = samples + PAIR_ROUNDS * iters;
	double *floor_s = raw_s + PAIR_ROUNDS * iters;
	int k, warm = iters / 10 + 1;

	if (mpi_pingpong(rank, 8, warm, buf, NULL) ||
	    raw_pingpong(raw, rank, 8, warm, NULL) ||
	    raw_floor_pingpong(raw, rank, 8, warm, NULL))
		return 1;
	for (k = 0; k < PAIR_ROUNDS; k++)
		if (raw_pingpong(raw, rank, 8, iters, raw_s + k * iters) ||
		    raw_floor_pingpong(raw, rank, 8, iters,
				       floor_s + k * iters) ||
		    mpi_pingpong(rank, 8, iters, buf, mpi_s + k * iters))
			return 1;
	if (rank)
		return 0;
	for (k = 0; k < PAIR_ROUNDS; k++) {
		double m = median(mpi_s + k * iters, iters);

		row("pair_round", 8, m / median(raw_s + k * iters, iters), "x");
	}
	row("latency", 8, median(mpi_s, PAIR_ROUNDS * iters) * 1e6, "us");
	row("raw_latency", 8, median(raw_s, PAIR_ROUNDS * iters) * 1e6, "us");
	row("floor_latency", 8, median(floor_s, PAIR_ROUNDS * iters) * 1e6, "us");
	return 0;
}

/* Streaming, one way (@both 0) or both ways (1). */
static void bandwidth(int rank, int bytes, int iters, unsigned char *sbuf,
		      unsigned char *rbuf, int both)
{
	MPI_Request rq[2 * WINDOW];
	int i, w, peer = !rank, ack = 0, warm = iters / 10 + 1, n;
	double t0 = 0;

	for (i = -warm; i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		n = 0;
		if (rank == 0 || both)
			for (w = 0; w < WINDOW; w++)
				MPI_Isend(sbuf, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
					  &rq[n++]);
		if (rank == 1 || both)
			for (w = 0; w < WINDOW; w++)
				MPI_Irecv(rbuf, bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
					  &rq[n++]);
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		/* The reply closes the window. */
		if (rank == 1)
			MPI_Send(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
		else
			MPI_Recv(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	}
	if (rank == 0) {
		double s = MPI_Wtime() - t0;

		row(both ? "bibw" : "bw", bytes,
		    (double)bytes * WINDOW * iters * (both ? 2 : 1) / s / 1e6, "MB/s");
	}
}

int main(int argc, char **argv)
{
	int rank, size, base = 1000, bytes, bad = 0, lat_only = 0, i;
	unsigned char *sbuf, *rbuf;
	struct raw_pair *raw = NULL;
	double *samples;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			base = 100;
		} else if (!strcmp(argv[i], "--latency")) {
			lat_only = 1;
		} else {
			if (rank == 0)
				fprintf(stderr, "percs-mpi-bench: unknown argument '%s'\n"
					"usage: percs-run -n 2 percs-mpi-bench [--quick] [--latency]\n",
					argv[i]);
			MPI_Finalize();
			return 2;
		}
	}
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "percs-mpi-bench: needs 2 ranks (percs-run -n 2)\n");
		MPI_Finalize();
		return 2;
	}
	sbuf = malloc(MAX_SIZE);
	rbuf = malloc(MAX_SIZE);
	/* The pair phase keeps every round's samples, MPI, raw and floor. */
	samples = malloc(sizeof(double) * base * 3 * PAIR_ROUNDS);
	if (!sbuf || !rbuf || !samples) {
		fprintf(stderr, "percs-mpi-bench: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(sbuf, 1, MAX_SIZE);
	if (rank < 2 && raw_open(rank, &raw))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank < 2) {
		for (bytes = 0; bytes <= MAX_SIZE && !bad; bytes = bytes ? bytes * 2 : 1)
			bad = bytes == 8 ?
			      latency_pair(rank, raw, base, rbuf, samples) :
			      latency(rank, bytes, iters_for(bytes, base), rbuf, samples);
		for (bytes = 1; bytes <= MAX_SIZE && !bad && !lat_only; bytes *= 2)
			bandwidth(rank, bytes, iters_for(bytes, base / 10 > 2 ? base / 10 : 2),
				  sbuf, rbuf, 0);
		for (bytes = 1; bytes <= MAX_SIZE && !bad && !lat_only; bytes *= 2)
			bandwidth(rank, bytes, iters_for(bytes, base / 10 > 2 ? base / 10 : 2),
				  sbuf, rbuf, 1);
	}
	if (bad)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	raw_close(raw);
	free(sbuf);
	free(rbuf);
	free(samples);
	MPI_Finalize();
	return 0;
}
