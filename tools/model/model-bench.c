// SPDX-License-Identifier: GPL-2.0
/*
 * percs-mpi-model: the measurements of the collectives' PLogP model
 * (lib/mpi/coll_model.c), an MPI program run by percs-run; percs-bench
 * model (tools/model/percs-bench-model) launches it and writes or checks
 * the parameter file from its JSON rows on stdout.
 *
 *   pingpong CLASS   2 ranks: L(m), half the ping-pong round trip, per size
 *                    (the launcher places the ranks in the distance CLASS)
 *   calibrate        at this job's size n: R(n, m), a butterfly round
 *                    (every rank exchanging m bytes with a distinct
 *                    partner, seed 004's contention pattern), and the CAU
 *                    allreduce of 8 B and 1 KiB (timed as validate
 *                    times it); rank 0 of a 2-rank job
 *                    also g(m) (back-to-back sends), o (posting a send)
 *                    and gamma (MPI_SUM over doubles, per byte)
 *   validate SIZES   every algorithm of barrier, bcast, reduce, allreduce
 *                    and allgather at each of SIZES (comma-separated
 *                    bytes), measured, beside the model's prediction and
 *                    choice from the file MPI_Init read (PERCS_MPI_MODEL)
 *
 * Every figure is the fastest of ROUNDS measurements, each the mean of
 * enough calls to last about 2 ms (at least 3), the slowest rank's;
 * PERCS_MODEL_BRIEF=1 makes that 3 measurements of at least 1 ms, and
 * calibration measures 3 sizes only (the tests' structural check, not
 * figures);
 * in validate, and for the CAU in calibrate, the algorithms of one point
 * take turns within each round, so the host's load weighs on all of them
 * alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "mpi_internal.h"
#include "coll_model.h"

/*
 * A call here takes microseconds, or milliseconds when the ranks fall
 * into waiting for timer ticks (a rank asleep in poll(2), deferred work
 * on a busy vCPU) - a state that, once in, lasts for many calls.  The
 * model is of the first: each figure is the fastest of ROUNDS short
 * rounds of about TARGET_S, so one round free of stalls is enough.
 */
#define ROUNDS		25
#define TARGET_S	0.002
#define MAX_ITERS	2000
#define MAX_BYTES	(1 << 20)
#define MAX_ALGOS	4

static const size_t cal_sizes[] = { 0, 8, 64, 512, 4096, 32768, 262144 };
#define NCAL	(sizeof(cal_sizes) / sizeof(cal_sizes[0]))

static int rank, size, rounds = ROUNDS;
/* Sizes of cal_sizes measured: all, or the first 3 when brief. */
static int ncal = (int)NCAL;
static double target_s = TARGET_S;
static double *sbuf, *rbuf, *tmp;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The fastest round (see ROUNDS). */
static double best(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[0];
}

/* The slowest rank's figure (the default allreduce, never a forced one). */
static double slowest(double t)
{
	double all;

	MPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

typedef void (*op_fn)(size_t bytes, int arg);

/* Mean time of @iters calls of @fn, the slowest rank's. */
static double timed(op_fn fn, size_t bytes, int arg, int iters)
{
	double t;
	int i;

	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (i = 0; i < iters; i++)
		fn(bytes, arg);
	return slowest((MPI_Wtime() - t) / iters);
}

/* Calls that make about TARGET_S, agreed by all ranks. */
static int iters_for(op_fn fn, size_t bytes, int arg)
{
	double t = timed(fn, bytes, arg, 2);
	int n = t > 0 ? (int)(target_s / t) : MAX_ITERS;

	return n < 3 ? 3 : n > MAX_ITERS ? MAX_ITERS : n;
}

static void row_begin(const char *what)
{
	printf("{\"what\":\"%s\",\"p\":%d", what, size);
}

/* ---- every algorithm of a collective, timed in turns ------------------ */

static const int nalgos[] = {
	[MPI_COLL_BARRIER] = 4, [MPI_COLL_BCAST] = 3, [MPI_COLL_REDUCE] = 4,
	[MPI_COLL_ALLREDUCE] = 4, [MPI_COLL_ALLGATHER] = 3,
};
static const char *const coll_names[] = {
	[MPI_COLL_BARRIER] = "barrier", [MPI_COLL_BCAST] = "bcast",
	[MPI_COLL_REDUCE] = "reduce", [MPI_COLL_ALLREDUCE] = "allreduce",
	[MPI_COLL_ALLGATHER] = "allgather",
};

/* One call of collective @kind moving @bytes (a block for allgather). */
static void one_call(size_t bytes, int kind)
{
	int n = (int)(bytes / sizeof(double));

	switch (kind) {
	case MPI_COLL_BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case MPI_COLL_BCAST:
		MPI_Bcast(sbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		break;
	case MPI_COLL_REDUCE:
		MPI_Reduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		break;
	case MPI_COLL_ALLREDUCE:
		MPI_Allreduce(sbuf, rbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		break;
	case MPI_COLL_ALLGATHER:
		MPI_Allgather(sbuf, n, MPI_DOUBLE, tmp, n, MPI_DOUBLE,
			      MPI_COMM_WORLD);
		break;
	}
}

/* Time of algorithm @a of @kind: @n calls, the slowest rank's mean. */
static double algo_time(int kind, int a, size_t bytes, int n)
{
	double t;

	mpi_coll_force(kind, a);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < n; i++)
		one_call(bytes, kind);
	t = MPI_Wtime() - t;
	mpi_coll_force(kind, -1);
	return slowest(t / n);
}

/*
 * @t[a]: algorithm a of @kind at @bytes, the fastest of ROUNDS rounds in
 * which every algorithm of @kind takes its turn, so that the host's load
 * weighs on all of them alike.  A call of each comes first, untimed: the
 * first CAU call makes the communicator's tree (milliseconds), which
 * would otherwise count in the probe that sizes the rounds and leave them
 * at 3 calls, short enough for one slow call (a rank waking from
 * ppoll(2)) to weigh a third in every round.
 */
static void algo_rounds(int kind, size_t bytes, double *t)
{
	double v[MAX_ALGOS][ROUNDS];
	int iters[MAX_ALGOS], a, r;

	for (a = 0; a < nalgos[kind]; a++) {
		mpi_coll_force(kind, a);
		one_call(bytes, kind);
		iters[a] = iters_for(one_call, bytes, kind);
		mpi_coll_force(kind, -1);
	}
	for (r = 0; r < rounds; r++)
		for (a = 0; a < nalgos[kind]; a++)
			v[a][r] = algo_time(kind, a, bytes, iters[a]);
	for (a = 0; a < nalgos[kind]; a++)
		t[a] = best(v[a], rounds);
}

/* ---- calibration ------------------------------------------------------ */

/* Half a ping-pong between ranks 0 and 1. */
static void pingpong(size_t bytes, int arg)
{
	(void)arg;
	if (rank == 0) {
		MPI_Send(sbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(sbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
	}
}

/*
 * One butterfly round: partner rank ^ mask, the mask cycling over the
 * powers of two below the job's size (@arg the call's number); a rank
 * without a partner (odd sizes) sits the round out, as in the
 * algorithms' folds.
 */
static void butterfly(size_t bytes, int arg)
{
	int bits = 0, mask, peer;

	while ((2 << bits) <= size)
		bits++;
	mask = 1 << (bits ? arg % bits : 0);
	peer = rank ^ mask;
	if (peer >= size)
		return;
	MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, peer, 2, rbuf, (int)bytes,
		     MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static double measure(op_fn fn, size_t bytes)
{
	double v[ROUNDS];
	int r, n = iters_for(fn, bytes, 0), i;

	for (r = 0; r < rounds; r++) {
		double t;

		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (i = 0; i < n; i++)
			fn(bytes, i);
		v[r] = slowest((MPI_Wtime() - t) / n);
	}
	return best(v, rounds);
}

/* Rank 0 streams @bytes to rank 1: the time between sends, g(m). */
static double gap(size_t bytes)
{
	enum { WINDOW = 32 };
	MPI_Request rq[WINDOW];
	double v[ROUNDS], t;
	int r, w, ack = 0;

	for (r = -1; r < rounds; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (w = 0; w < WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(sbuf, (int)bytes, MPI_BYTE, 1, 3,
					  MPI_COMM_WORLD, &rq[w]);
			else
				MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, 0, 3,
					  MPI_COMM_WORLD, &rq[w]);
		}
		MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
		if (rank == 1)
			MPI_Send(&ack, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
		else
			MPI_Recv(&ack, 1, MPI_INT, 1, 4, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		if (r >= 0)
			v[r] = slowest((MPI_Wtime() - t) / WINDOW);
	}
	return best(v, rounds);
}

/* o: posting one 8-byte send (rank 0), its completion not counted. */
static double overhead(void)
{
	enum { N = 64 };
	MPI_Request rq[N];
	double v[ROUNDS], t, post;
	int r, i;

	for (r = -1; r < rounds; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		post = 0;
		for (i = 0; i < N; i++) {
			if (rank == 0) {
				t = MPI_Wtime();
				MPI_Isend(sbuf, 8, MPI_BYTE, 1, 5, MPI_COMM_WORLD,
					  &rq[i]);
				post += MPI_Wtime() - t;
			} else {
				MPI_Irecv(rbuf, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
					  &rq[i]);
			}
		}
		MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
		if (r >= 0)
			v[r] = slowest(rank == 0 ? post / N : 0);
	}
	return best(v, rounds);
}

/* gamma: the schedules' combine (MPI_SUM, 256 KiB of doubles), per byte. */
static double combine_cost(void)
{
	int n = 32768, r, i, reps = 20;
	double v[ROUNDS], t;

	for (r = 0; r < rounds; r++) {
		t = MPI_Wtime();
		for (i = 0; i < reps; i++)
			mpi_op_combine(MPI_SUM, MPI_DOUBLE, n, rbuf, sbuf);
		v[r] = (MPI_Wtime() - t) / reps / (n * sizeof(double));
	}
	return best(v, rounds);
}

static void print_values(const char *what, const char *cls, const double *v,
			 int n)
{
	int i;

	if (rank)
		return;
	row_begin(what);
	if (cls)
		printf(",\"class\":\"%s\"", cls);
	printf(",\"sizes\":[");
	for (i = 0; i < n; i++)
		printf("%s%zu", i ? "," : "", cal_sizes[i]);
	printf("],\"us\":[");
	for (i = 0; i < n; i++)
		printf("%s%.4f", i ? "," : "", v[i] * 1e6);
	printf("]}\n");
	fflush(stdout);
}

static void print_one(const char *what, size_t bytes, double s)
{
	if (rank)
		return;
	row_begin(what);
	printf(",\"bytes\":%zu,\"us\":%.6f}\n", bytes, s * 1e6);
	fflush(stdout);
}

static int run_pingpong(const char *cls)
{
	double v[NCAL];
	int i;

	if (size != 2) {
		if (!rank)
			fprintf(stderr, "percs-mpi-model: pingpong needs 2 ranks\n");
		return 2;
	}
	for (i = 0; i < ncal; i++)
		v[i] = measure(pingpong, cal_sizes[i]) / 2;
	print_values("l", cls, v, ncal);
	return 0;
}

static int run_calibrate(void)
{
	double v[NCAL];
	int i;

	for (i = 0; i < ncal; i++)
		v[i] = measure(butterfly, cal_sizes[i]);
	print_values("round", NULL, v, ncal);
	/* As validate measures it: the other allreduces taking turns. */
	for (i = 0; i < 2; i++) {
		size_t bytes = i ? 1024 : 8;
		double t[MAX_ALGOS];

		algo_rounds(MPI_COLL_ALLREDUCE, bytes, t);
		print_one("cau", bytes, t[ALLREDUCE_CAU]);
	}
	if (size != 2)
		return 0;
	for (i = 0; i < ncal; i++)
		v[i] = gap(cal_sizes[i]);
	print_values("g", NULL, v, ncal);
	print_one("o", 8, overhead());
	print_one("gamma", 1, combine_cost());
	return 0;
}

/* ---- validation ------------------------------------------------------- */

static void validate_point(const struct mpi_model *m, int kind, size_t bytes)
{
	double t[MAX_ALGOS];
	int a;

	algo_rounds(kind, bytes, t);
	if (rank)
		return;
	for (a = 0; a < nalgos[kind]; a++) {
		row_begin("point");
		printf(",\"coll\":\"%s\",\"algo\":\"%s\",\"bytes\":%zu,\"measured_us\":%.4f,\"predicted_us\":%.4f,\"model_choice\":\"%s\"}\n",
		       coll_names[kind], mpi_coll_algo_name(kind, a), bytes,
		       t[a] * 1e6,
		       mpi_model_predict(m, kind, a, size, bytes),
		       mpi_coll_algo_name(kind, mpi_model_choose(m, kind, size,
								 bytes, true,
								 true)));
	}
	fflush(stdout);
}

static int run_validate(const char *list)
{
	const struct mpi_model *m = mpi_coll_model();
	size_t sizes[32], n = 0;
	const char *s = list;
	char *end;
	int kind;

	if (!m) {
		if (!rank)
			fprintf(stderr, "percs-mpi-model: no model file was read (PERCS_MPI_MODEL)\n");
		return 1;
	}
	while (*s && n < 32) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v > MAX_BYTES / 16 || v % sizeof(double) ||
		    (*end && *end != ',')) {
			if (!rank)
				fprintf(stderr, "percs-mpi-model: sizes '%s': want multiples of 8 up to %d, comma-separated\n",
					list, MAX_BYTES / 16);
			return 2;
		}
		sizes[n++] = v;
		s = *end ? end + 1 : end;
	}
	validate_point(m, MPI_COLL_BARRIER, 0);
	for (kind = MPI_COLL_BCAST; kind <= MPI_COLL_ALLGATHER; kind++)
		for (size_t i = 0; i < n; i++)
			validate_point(m, kind, sizes[i]);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (getenv("PERCS_MODEL_BRIEF")) {
		rounds = 3;
		target_s = 0.001;
		ncal = 3;
	}
	sbuf = calloc(MAX_BYTES / sizeof(double), sizeof(double));
	rbuf = calloc(MAX_BYTES / sizeof(double), sizeof(double));
	tmp = calloc((size_t)size * MAX_BYTES / 16 / sizeof(double),
		     sizeof(double));
	if (!sbuf || !rbuf || !tmp) {
		fprintf(stderr, "percs-mpi-model: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (argc == 3 && !strcmp(argv[1], "pingpong"))
		ret = run_pingpong(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "calibrate"))
		ret = run_calibrate();
	else if (argc == 3 && !strcmp(argv[1], "validate"))
		ret = run_validate(argv[2]);
	else if (!rank)
		fprintf(stderr, "usage: percs-run -n P percs-mpi-model pingpong CLASS | calibrate | validate SIZES\n");
	MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(tmp);
	MPI_Finalize();
	return ret;
}
