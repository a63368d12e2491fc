// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi unit tests: the model's parameter file (coll_model.c) -
 * a good file, and truncated, garbage, wrong-version and out-of-range
 * ones refused with the file's name and the problem - and its
 * predictions and choices, worked out by hand from a small file.
 * TAP on stdout; each test in a forked child (lib/tests/tap_unit.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_internal.h"
#include "coll_model.h"
#include "../../tests/tap_unit.h"

/* Two sizes, two job sizes: every figure below follows by hand. */
static const char good[] =
	"percs-mpi-model 1\n"
	"# written by hand for the unit tests\n"
	"sizes 0 1024\n"
	"l same_hub 3 4\n"
	"l other_supernode 5 6   # a comment after the values\n"
	"g 1 2\n"
	"o 0.5\n"
	"gamma 0.001\n"
	"round 2 10 20\n"
	"round 4 20 40\n"
	"cau 2 5\n"
	"cau 4 6\n"
	"cau_packet 1\n";

static struct mpi_model m;

static void load_good(void)
{
	char err[256] = "";

	if (mpi_model_parse(good, "good", &m, err, sizeof(err)))
		t_fail(__FILE__, __LINE__, "good file refused: %s", err);
}

#define CHECK_NEAR(a, b) do {						\
	double _a = (a), _b = (b);					\
	if (fabs(_a - _b) > 1e-9)					\
		t_fail(__FILE__, __LINE__, "%s is %g, expected %g",	\
		       #a, _a, _b);					\
} while (0)

static void t_good(void)
{
	load_good();
	CHECK_EQ(m.nsizes, 2);
	CHECK_EQ(m.size[1], 1024);
	CHECK(m.have_l[MPI_MODEL_SAME_HUB]);
	CHECK(!m.have_l[MPI_MODEL_SAME_SUPERNODE]);
	CHECK(m.have_l[MPI_MODEL_OTHER_SUPERNODE]);
	CHECK_NEAR(m.l[MPI_MODEL_OTHER_SUPERNODE][1], 6);
	CHECK_NEAR(m.o, 0.5);
	CHECK_NEAR(m.gamma, 0.001);
	CHECK_EQ(m.nranks, 2);
	CHECK_EQ(m.ranks[1], 4);
	CHECK_NEAR(m.round[1][1], 40);
	CHECK(m.have_cau);
	CHECK_NEAR(m.cau[0], 5);
	CHECK_NEAR(m.cau_packet, 1);
}

/* @text must be refused with a message containing @msg. */
static void refused(const char *text, const char *msg, int line)
{
	char err[256] = "";
	struct mpi_model x;

	if (!mpi_model_parse(text, "/etc/f", &x, err, sizeof(err)))
		t_fail(__FILE__, line, "accepted, wanted \"%s\"", msg);
	else if (!strstr(err, msg) || strncmp(err, "/etc/f: ", 8))
		t_fail(__FILE__, line, "message \"%s\", wanted \"%s\"", err, msg);
}
#define REFUSED(text, msg) refused(text, msg, __LINE__)

static void t_truncated(void)
{
	char cut[sizeof(good)];
	const char *at = strstr(good, "round 4 20");

	/* Cut in the middle of a line: a value short. */
	memcpy(cut, good, (size_t)(at - good) + 10);
	cut[at - good + 10] = 0;
	REFUSED(cut, "line 10: round: 1 values, 'sizes' wants 2");
	/* Cut before the required lines. */
	REFUSED("percs-mpi-model 1\nsizes 0 8\n", "no 'g' line (a truncated file?)");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 1\no 1\ngamma 0\n",
		"no 'round' line");
	REFUSED("percs-mpi-model 1\n", "no 'sizes' line");
	REFUSED("", "not a percs MPI model file");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 1\ngamma 0\nround 2 1 1\n",
		"no 'o' line");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 1\no 1\ngamma 0\nround 2 1 1\ncau 2 3\n",
		"'cau' lines without 'cau_packet'");
}

static void t_garbage(void)
{
	REFUSED("\x7f" "ELF\x02\x01\x01", "not a percs MPI model file");
	REFUSED("percs-mpi-model one\n", "not a percs MPI model file");
	REFUSED("percs-mpi-model 1\nsizes 0 8\nbogus 1\n", "line 3: unknown item 'bogus'");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 x\n", "line 3: g: 'x' is not a number");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 2 3\n",
		"g: more than the 2 values of 'sizes'");
	REFUSED("percs-mpi-model 1\nsizes 8 0\n", "sizes: 0 after 8: not ascending");
	REFUSED("percs-mpi-model 1\ng 1 2\n", "line 2: g before 'sizes'");
	REFUSED("percs-mpi-model 1\nsizes 0 8\nl far 1 2\n",
		"l: 'far' is no distance class");
	REFUSED("percs-mpi-model 1\nsizes 0 8\nround 4 1 1\nround 2 1 1\n",
		"round: 2 ranks after 4: not ascending");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ncau 2 1\n",
		"cau: 2 ranks: no 'round 2' line before it");
}

static void t_version(void)
{
	REFUSED("percs-mpi-model 2\nsizes 0 8\n",
		"format version 2, this library reads version 1");
	REFUSED("percs-mpi-model 0\n", "format version 0");
}

static void t_range(void)
{
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 1\no -1\n",
		"line 4: o: -1 is out of range (0 .. 1e+07 us)");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 nan\n", "g: nan is out of range");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 inf\n", "g: inf is out of range");
	REFUSED("percs-mpi-model 1\nsizes 0 8\ng 1 2e7\n", "g: 2e7 is out of range");
	REFUSED("percs-mpi-model 1\nsizes 0 2000000000\n",
		"sizes: 2000000000 is out of range");
	REFUSED("percs-mpi-model 1\nsizes 0 -8\n", "sizes: '-8' is not a whole number");
	REFUSED("percs-mpi-model 1\nsizes 0 8\nround 1 1 1\n",
		"round: 1 ranks: at least 2 wanted");
	REFUSED("percs-mpi-model 1\nsizes 0 8\nround 5000 1 1\n",
		"round: 5000 is out of range");
}

/* The file on disk: read back, and refused when unreadable or binary. */
static void t_load(void)
{
	char path[] = "/tmp/percs-model-XXXXXX", err[256] = "";
	struct mpi_model x;
	int fd = mkstemp(path);
	FILE *f;

	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f);
	fputs(good, f);
	fclose(f);
	load_good();
	CHECK(!mpi_model_load(path, &x, err, sizeof(err)));
	CHECK(!memcmp(&x, &m, sizeof(x)));
	f = fopen(path, "w");
	REQUIRE(f);
	fwrite("percs-mpi-model 1\n\0sizes", 1, 24, f);
	fclose(f);
	CHECK(mpi_model_load(path, &x, err, sizeof(err)));
	CHECK(strstr(err, "not a text file") && strstr(err, path));
	unlink(path);
	CHECK(mpi_model_load(path, &x, err, sizeof(err)));
	CHECK(strstr(err, "No such file or directory") && strstr(err, path));
}

static double pred(int kind, int algo, int p, size_t bytes)
{
	return mpi_model_predict(&m, kind, algo, p, bytes);
}

static void t_predict(void)
{
	load_good();
	/* ceil(log2 4) x R(4, 0) */
	CHECK_NEAR(pred(MPI_COLL_BARRIER, BARRIER_DISSEMINATION, 4, 0), 40);
	/* (floor(log2 3) + 2) x R(3, 0), R(3, 0) between 10 and 20 */
	CHECK_NEAR(pred(MPI_COLL_BARRIER, BARRIER_RECURSIVE_DOUBLING, 3, 0), 45);
	/* R(4, 0) + 2 g(0), then 2 R(4, 0) */
	CHECK_NEAR(pred(MPI_COLL_BARRIER, BARRIER_GATHER_BCAST, 4, 0), 62);
	CHECK_NEAR(pred(MPI_COLL_BARRIER, BARRIER_CAU, 4, 0), 6);
	CHECK_NEAR(pred(MPI_COLL_BCAST, BCAST_BINOMIAL, 4, 1024), 80);
	/* R beyond the last size: the last segment's slope */
	CHECK_NEAR(pred(MPI_COLL_BCAST, BCAST_BINOMIAL, 2, 2048), 30);
	/* 2 x (R(4, 1024) + gamma 1024) */
	CHECK_NEAR(pred(MPI_COLL_ALLREDUCE, ALLREDUCE_RECURSIVE_DOUBLING, 4, 1024),
		   82.048);
	/* (2 R(4, 512) + 0.512) + (2 R(4, 256) + 0.256) */
	CHECK_NEAR(pred(MPI_COLL_ALLREDUCE, ALLREDUCE_RABENSEIFNER, 4, 1024),
		   110.768);
	CHECK_NEAR(pred(MPI_COLL_ALLREDUCE, ALLREDUCE_REDUCE_BCAST, 4, 1024),
		   162.048);
	/* cau(4) + 15 further packets */
	CHECK_NEAR(pred(MPI_COLL_ALLREDUCE, ALLREDUCE_CAU, 4, 1024), 21);
	/* R(4, 512) + 2 g(512) + 3 gamma 512 */
	CHECK_NEAR(pred(MPI_COLL_REDUCE, REDUCE_LINEAR, 4, 512), 30 + 3 + 1.536);
	CHECK_NEAR(pred(MPI_COLL_ALLGATHER, ALLGATHER_RECURSIVE_DOUBLING, 4, 512), 70);
	CHECK_NEAR(pred(MPI_COLL_ALLGATHER, ALLGATHER_RING, 4, 512), 90);
	/* No power of two: recursive doubling is the ring. */
	CHECK_NEAR(pred(MPI_COLL_ALLGATHER, ALLGATHER_RECURSIVE_DOUBLING, 3, 512),
		   pred(MPI_COLL_ALLGATHER, ALLGATHER_RING, 3, 512));
	/* No equation: alltoall; no CAU figures: no CAU prediction. */
	CHECK(pred(MPI_COLL_ALLTOALL, ALLTOALL_PAIRWISE, 4, 8) < 0);
	m.have_cau = false;
	CHECK(pred(MPI_COLL_BARRIER, BARRIER_CAU, 4, 0) < 0);
}

static void t_choose(void)
{
	load_good();
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_BARRIER, 4, 0, true, true),
		 BARRIER_CAU);
	/* A tie goes to the lower index. */
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_BARRIER, 4, 0, true, false),
		 BARRIER_DISSEMINATION);
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLREDUCE, 4, 1024, true, false),
		 ALLREDUCE_RECURSIVE_DOUBLING);
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLREDUCE, 4, 1024, true, true),
		 ALLREDUCE_CAU);
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLGATHER, 4, 512, true, true),
		 ALLGATHER_RECURSIVE_DOUBLING);
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLTOALL, 4, 8, true, true), -1);
	/* Rabenseifner only for operations that commute. */
	m.round[1][1] = 1000;
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLREDUCE, 4, 1024, true, false),
		 ALLREDUCE_RABENSEIFNER);
	CHECK_EQ(mpi_model_choose(&m, MPI_COLL_ALLREDUCE, 4, 1024, false, false),
		 ALLREDUCE_RECURSIVE_DOUBLING);
}

static const struct unit_test model_tests[] = {
	{ "model file: a good file is read whole", t_good },
	{ "model file: truncated files refused, file and line named", t_truncated },
	{ "model file: garbage refused", t_garbage },
	{ "model file: another format version refused", t_version },
	{ "model file: values out of range refused", t_range },
	{ "model file: read from disk; missing or binary refused", t_load },
	{ "model: predictions of the seed's equations, by hand", t_predict },
	{ "model: the choice is the least predicted", t_choose },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	static const struct unit_test *const suites[] = { model_tests };

	return unit_main(argc, argv, suites, 1, 30);
}
