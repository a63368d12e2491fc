/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs-bench project: barrier and 8-byte allreduce projected to full
 * scale from the collectives' measured model (projection.c).
 */
#ifndef PERCS_PROJECTION_H
#define PERCS_PROJECTION_H

#include <stdbool.h>

#include "coll_model.h"
#include "topology.h"

/* Software algorithms of barrier and allreduce (BARRIER_* less the CAU). */
#define PROJ_SW_ALGOS	3
/* Deepest tree a row describes level by level. */
#define PROJ_MAX_DEPTH	32

/**
 * struct proj_system - a system and how a job sits on it
 * @topo: the topology (fm_topo_init_spec(); no route tables needed)
 * @spread: percs-run's default placement (rank i on supernode i mod S,
 *	that supernode's hubs in turn); false: block (rank i on hub i)
 * @fanout: the CAU tree's fan-out, 0 for the library's default
 * @sn_aware: shape the tree by supernode (what percs-bench coll and
 *	OpenSHMEM pass); false: as MPI does (no topology)
 */
struct proj_system {
	struct fm_topology topo;
	bool spread;
	unsigned int fanout;
	bool sn_aware;
};

/**
 * struct proj_costs - the model's figures decomposed (design.rst,
 *	"Projecting to full scale"); per size of the model's @size
 * @base: L(m) on one hub: a message's software path, no link crossed
 * @hop_l: each L-link hop's cost on top of @base
 * @hop_d: each D-link hop's cost on top of @base
 * @extra: a butterfly round's cost beyond its slowest pair's L(m), from
 *	the 2-rank round (the contention and the round's own work)
 * @cau_fixed: a CAU collective's cost at the members, whatever the tree
 * @cau_level: a tree level crossed once (up or down), links aside
 * @fitted: @cau_fixed was fitted (two tree depths among the fit points),
 *	not taken as @base at 8 bytes or given
 * @fit_points: CAU figures the fit used
 */
struct proj_costs {
	double base[MPI_MODEL_MAX_SIZES];
	double hop_l[MPI_MODEL_MAX_SIZES];
	double hop_d[MPI_MODEL_MAX_SIZES];
	double extra[MPI_MODEL_MAX_SIZES];
	double cau_fixed;
	double cau_level;
	bool fitted;
	int fit_points;
};

/**
 * struct proj_row - one job size projected
 * @p: ranks
 * @supernodes: supernodes the ranks are on
 * @hubs: hubs the ranks are on (the tree's members)
 * @per_hub: most ranks on one hub
 * @depth: the CAU tree's depth; -1 without a tree (one hub, or more hubs
 *	than %PERCS_CAU_MAX_MEMBERS: the library runs software)
 * @level_hops: per level (1 .. @depth), the most link hops of its edges
 * @level_d: per level, whether an edge crosses supernodes
 * @round_us: the projected butterfly round R(p, 8 B)
 * @cau_us: CAU time (barrier and 8-byte allreduce alike); < 0 without
 * @sw_us: [0] barrier, [1] allreduce: each software algorithm's time
 * @best: [0] barrier, [1] allreduce: the fastest software algorithm
 */
struct proj_row {
	int p;
	int supernodes;
	int hubs;
	int per_hub;
	int depth;
	int level_hops[PROJ_MAX_DEPTH + 1];
	bool level_d[PROJ_MAX_DEPTH + 1];
	double round_us;
	double cau_us;
	double sw_us[2][PROJ_SW_ALGOS];
	int best[2];
};

int proj_system_init(struct proj_system *s, const char *spec, bool spread,
		     unsigned int fanout, bool sn_aware, char *err,
		     size_t errlen);
int proj_costs(const struct mpi_model *m, const struct proj_system *calib,
	       const int *fit, int nfit, double fixed, struct proj_costs *c,
	       char *err, size_t errlen);
int proj_row(const struct mpi_model *m, const struct proj_costs *c,
	     const struct proj_system *s, int p, struct proj_row *row);
const char *proj_algo_name(int kind, int algo);

#endif /* PERCS_PROJECTION_H */
