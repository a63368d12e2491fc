// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-mpi: which algorithm runs a collective.
 *
 * PERCS_MPI_COLL_<COLL> (BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER,
 * ALLTOALL, REDUCE_SCATTER) names the algorithm every call of that collective uses, or
 * "auto"; it is read once, at MPI_Init, and a name it does not know stops
 * MPI_Init with a message listing the valid ones (a typo must not fall
 * back silently to another algorithm). "cau" (barrier, bcast, reduce,
 * allreduce: coll_cau.c) runs on the CAU what it can and the rest in
 * software, the default choice's algorithm. Unforced, barrier and
 * allreduces of at most 64 bytes on more than two ranks go to the CAU
 * (where a tree spans several hubs); otherwise the choice follows the
 * communicator's size and the data's: latency-bound algorithms (fewest
 * rounds) for short data, bandwidth-bound ones (least data per rank) for
 * long, the cross-over points being the usual ones of MPICH's defaults.
 *
 * With a model file (PERCS_MPI_MODEL=FILE, else MPI_MODEL_DEFAULT_PATH;
 * written by percs-bench model --calibrate), barrier, bcast, reduce,
 * allreduce and allgather take instead the algorithm of least predicted
 * time (coll_model.c); alltoall and reduce_scatter keep the rules above.
 * A file that is refused leaves the rules above in force; that is said
 * once, on rank 0's stderr, when PERCS_MPI_MODEL named the file or
 * PERCS_MPI_STATS is set (a default file is otherwise optional).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_internal.h"
#include "coll_model.h"

#define MAX_ALGOS	4

static const char *const coll_names[MPI_COLL_KINDS] = {
	[MPI_COLL_BARRIER] = "BARRIER",
	[MPI_COLL_BCAST] = "BCAST",
	[MPI_COLL_REDUCE] = "REDUCE",
	[MPI_COLL_ALLREDUCE] = "ALLREDUCE",
	[MPI_COLL_ALLGATHER] = "ALLGATHER",
	[MPI_COLL_ALLTOALL] = "ALLTOALL",
	[MPI_COLL_REDUCE_SCATTER] = "REDUCE_SCATTER",
};

/* Indexed by the BARRIER_* ... ALLTOALL_* constants of mpi_internal.h. */
static const char *const algo_names[MPI_COLL_KINDS][MAX_ALGOS] = {
	[MPI_COLL_BARRIER] = { "dissemination", "recursive_doubling",
			       "gather_bcast", "cau" },
	[MPI_COLL_BCAST] = { "binomial", "pipelined", "cau" },
	[MPI_COLL_REDUCE] = { "linear", "binomial", "rabenseifner", "cau" },
	[MPI_COLL_ALLREDUCE] = { "recursive_doubling", "rabenseifner",
				 "reduce_bcast", "cau" },
	[MPI_COLL_ALLGATHER] = { "ring", "recursive_doubling",
				 "gather_bcast" },
	[MPI_COLL_ALLTOALL] = { "pairwise", "bruck", "linear" },
	[MPI_COLL_REDUCE_SCATTER] = { "reduce_scatterv", "pairwise" },
};

/* The forced algorithm of each collective, -1 for the default choice. */
static int forced[MPI_COLL_KINDS];

/* The parameters of the model, when a file was read. */
static struct mpi_model model;
static bool model_loaded;

const struct mpi_model *mpi_coll_model(void)
{
	return model_loaded ? &model : NULL;
}

/*
 * Read the model's file.  Never fatal: without a model the fixed rules
 * choose.  "off" as PERCS_MPI_MODEL reads none.
 */
static void model_init(void)
{
	const char *path = getenv("PERCS_MPI_MODEL");
	const char *rank = getenv("PERCS_RANK");
	bool asked = path && *path;
	char err[256];

	model_loaded = false;
	if (asked && !strcmp(path, "off"))
		return;
	if (!asked) {
		path = MPI_MODEL_DEFAULT_PATH;
		if (access(path, F_OK))
			return;
	}
	if (!mpi_model_load(path, &model, err, sizeof(err))) {
		model_loaded = true;
		return;
	}
	if ((asked || getenv("PERCS_MPI_STATS")) && (!rank || !strcmp(rank, "0")))
		fprintf(stderr, "percs-mpi: model file refused, the fixed rules choose the collectives' algorithms: %s\n",
			err);
}

void mpi_coll_force(enum mpi_coll_kind kind, int algo)
{
	forced[kind] = algo;
}

const char *mpi_coll_algo_name(enum mpi_coll_kind kind, int algo)
{
	if (kind >= MPI_COLL_KINDS || algo < 0 || algo >= MAX_ALGOS ||
	    !algo_names[kind][algo])
		return "?";
	return algo_names[kind][algo];
}

static int parse(enum mpi_coll_kind kind)
{
	char var[40], valid[160];
	const char *val;
	int a;

	forced[kind] = -1;
	snprintf(var, sizeof(var), "PERCS_MPI_COLL_%s", coll_names[kind]);
	val = getenv(var);
	if (!val || !strcmp(val, "auto"))
		return MPI_SUCCESS;
	strcpy(valid, "auto");
	for (a = 0; a < MAX_ALGOS && algo_names[kind][a]; a++) {
		if (!strcmp(val, algo_names[kind][a])) {
			forced[kind] = a;
			return MPI_SUCCESS;
		}
		strcat(valid, ", ");
		strcat(valid, algo_names[kind][a]);
	}
	return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Init",
			 "%s='%s' is no algorithm of %s (valid: %s)", var, val,
			 coll_names[kind], valid);
}

int mpi_coll_select_init(void)
{
	int k, ret;

	for (k = 0; k < MPI_COLL_KINDS; k++) {
		ret = parse(k);
		if (ret)
			return ret;
	}
	model_init();
	return MPI_SUCCESS;
}

static bool pow2(int p)
{
	return !(p & (p - 1));
}

bool mpi_coll_forced(enum mpi_coll_kind kind)
{
	return forced[kind] >= 0;
}

int mpi_coll_algo(enum mpi_coll_kind kind, int p, size_t bytes, bool commute)
{
	int a;

	if (forced[kind] >= 0)
		return forced[kind];
	if (model_loaded) {
		a = mpi_model_choose(&model, kind, p, bytes, commute, true);
		if (a >= 0)
			return a;
	}
	/*
	 * The CAU where it was measured to win (mpi-peer, 3..16 ranks one
	 * a hub: 8-byte allreduce and barrier, Documentation/design.rst):
	 * what one CAU packet carries.  Not for two ranks: software is one
	 * message each way there, which a trip up the tree and back cannot
	 * beat.  coll.c runs software instead when the communicator has no
	 * tree or one hub only.
	 */
	if (p > 2 && (kind == MPI_COLL_BARRIER ||
		      (kind == MPI_COLL_ALLREDUCE && bytes <= PERCS_CAU_PAYLOAD)))
		return kind == MPI_COLL_BARRIER ? BARRIER_CAU : ALLREDUCE_CAU;
	return mpi_coll_sw_algo(kind, p, bytes, commute);
}

int mpi_coll_sw_algo(enum mpi_coll_kind kind, int p, size_t bytes,
		     bool commute)
{
	int a = model_loaded ?
		mpi_model_choose(&model, kind, p, bytes, commute, false) : -1;

	if (a >= 0)
		return a;
	switch (kind) {
	case MPI_COLL_BARRIER:
		return BARRIER_DISSEMINATION;
	case MPI_COLL_BCAST:
		return bytes >= 65536 && p > 2 ? BCAST_PIPELINED :
		       BCAST_BINOMIAL;
	case MPI_COLL_REDUCE:
		return commute && bytes >= 32768 ? REDUCE_RABENSEIFNER :
		       REDUCE_BINOMIAL;
	case MPI_COLL_ALLREDUCE:
		return commute && bytes >= 32768 ? ALLREDUCE_RABENSEIFNER :
		       ALLREDUCE_RECURSIVE_DOUBLING;
	case MPI_COLL_ALLGATHER:
		return pow2(p) && bytes * p < 81920 ?
		       ALLGATHER_RECURSIVE_DOUBLING : ALLGATHER_RING;
	case MPI_COLL_ALLTOALL:
		return bytes <= 256 && p >= 8 ? ALLTOALL_BRUCK :
		       ALLTOALL_PAIRWISE;
	case MPI_COLL_REDUCE_SCATTER:
		/* @bytes: the whole vector, which the root's reduce moves. */
		return bytes >= 32768 && p > 2 ? REDUCE_SCATTER_PAIRWISE :
		       REDUCE_SCATTER_REDUCE_SCATTERV;
	default:
		return 0;
	}
}
