// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench project: the arithmetic of the full-scale projection.
 *
 * The collectives' model (lib/mpi/coll_model.c) was measured on a small
 * system; here its figures are split into what a job's size does not
 * change (a message's software path, a CAU collective's cost at the
 * members, a CAU level, a round's contention) and what the topology
 * decides (link hops of each route, L or D, from the firmware model's
 * fm_route_direct(); the CAU tree's depth and the hops of its edges, from
 * libpercs's percs_cau_shape_kary(), the shape MPI builds).  A job of p
 * ranks on another system is then priced by putting those parts back
 * together, and its software algorithms by the model's own equations
 * (mpi_model_predict()) fed a butterfly round projected to that system.
 * Documentation/design.rst, "Projecting to full scale", states the
 * decomposition and its assumptions.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "percs.h"
#include "mpi_internal.h"
#include "projection.h"

#define PROJ_MSG_BYTES	8	/* the allreduce's vector (one double) */

/* Link hops of a route: L (LL or LR) and D; at most 3 + 2 direct. */
struct hops {
	int l;
	int d;
};

static const int sw_algo[2][PROJ_SW_ALGOS] = {
	{ BARRIER_DISSEMINATION, BARRIER_RECURSIVE_DOUBLING,
	  BARRIER_GATHER_BCAST },
	{ ALLREDUCE_RECURSIVE_DOUBLING, ALLREDUCE_RABENSEIFNER,
	  ALLREDUCE_REDUCE_BCAST },
};

const char *proj_algo_name(int kind, int algo)
{
	static const char *const names[2][PROJ_SW_ALGOS] = {
		{ "dissemination", "recursive_doubling", "gather_bcast" },
		{ "recursive_doubling", "rabenseifner", "reduce_bcast" },
	};

	if (kind < 0 || kind > 1 || algo < 0 || algo >= PROJ_SW_ALGOS)
		return "?";
	return names[kind][algo];
}

int proj_system_init(struct proj_system *s, const char *spec, bool spread,
		     unsigned int fanout, bool sn_aware, char *err,
		     size_t errlen)
{
	struct fm_topo_spec ts;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = fm_topo_parse(spec, &ts, err, errlen);
	if (!ret)
		ret = fm_topo_init_spec(&s->topo, &ts, err, errlen);
	if (ret)
		return ret;
	if (fanout > PERCS_CAU_MAX_FANOUT) {
		snprintf(err, errlen, "fan-out %u: at most %u", fanout,
			 PERCS_CAU_MAX_FANOUT);
		return -EINVAL;
	}
	s->spread = spread;
	s->fanout = fanout;
	s->sn_aware = sn_aware;
	return 0;
}

/* Rank @i's hub: percs-run's spread placement, or block. */
static u32 hub_of(const struct proj_system *s, int i)
{
	u32 sn = s->topo.nr_supernodes, hps = s->topo.hubs_per_sn;

	if (!s->spread)
		return (u32)i % s->topo.nr_hubs;
	return ((u32)i % sn) * hps + ((u32)i / sn) % hps;
}

static struct hops route_hops(const struct proj_system *s, u32 a, u32 b)
{
	struct hops h = { 0, 0 };
	struct fm_route r;

	if (a == b || fm_route_direct(&s->topo, a, b, &r))
		return h;
	for (int i = 0; i < r.nr_hops; i++) {
		if (r.hop[i].link_class == FM_LINK_D)
			h.d++;
		else
			h.l++;
	}
	return h;
}

/* @v (per size of @m) at @bytes: linear between sizes, flat beyond. */
static double at_size(const struct mpi_model *m, const double *v, double bytes)
{
	int i = 1;

	if (bytes <= (double)m->size[0])
		return v[0];
	while (i < m->nsizes - 1 && bytes > (double)m->size[i])
		i++;
	if (bytes >= (double)m->size[i])
		return v[i];
	return v[i - 1] + (v[i] - v[i - 1]) * (bytes - (double)m->size[i - 1]) /
	       (double)(m->size[i] - m->size[i - 1]);
}

static double link_cost(const struct proj_costs *c, struct hops h, int j)
{
	return h.l * c->hop_l[j] + h.d * c->hop_d[j];
}

/* The link part of a route at @bytes (CAU edges carry no software). */
static double link_cost_at(const struct mpi_model *m,
			   const struct proj_costs *c, struct hops h,
			   double bytes)
{
	return h.l * at_size(m, c->hop_l, bytes) +
	       h.d * at_size(m, c->hop_d, bytes);
}

/**
 * struct proj_tree - where a job's CAU tree puts its members
 * @hubs: distinct hubs of the job (the tree's members, in leader order)
 * @per_hub: most ranks on one hub
 * @supernodes: distinct supernodes
 * @depth: the tree's depth, -1 without a tree
 * @d: per member, its depth
 * @e: per member, the link cost of the path from the root (us)
 * @level_hops, @level_d: as &struct proj_row
 */
struct proj_tree {
	int hubs;
	int per_hub;
	int supernodes;
	int depth;
	int *d;
	double *e;
	int level_hops[PROJ_MAX_DEPTH + 1];
	bool level_d[PROJ_MAX_DEPTH + 1];
};

/*
 * The job's leaders (the lowest rank of each hub, as lib/mpi/coll_cau.c
 * groups them) and, when they are 2 .. PERCS_CAU_MAX_MEMBERS, the tree
 * percs_cau_shape_kary() gives them, rooted at rank 0's hub.
 */
static int tree_build(const struct mpi_model *m, const struct proj_costs *c,
		      const struct proj_system *s, int p, struct proj_tree *t)
{
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned int *count = calloc(s->topo.nr_hubs, sizeof(*count));
	bool *sn_seen = calloc(s->topo.nr_supernodes, sizeof(*sn_seen));
	struct percs_cau_member *mem = NULL;
	struct percs_addr *wins = NULL;
	int i, ret = -ENOMEM;

	memset(t, 0, sizeof(*t));
	t->depth = -1;
	if (!count || !sn_seen)
		goto out;
	wins = calloc((size_t)p, sizeof(*wins));
	if (!wins)
		goto out;
	for (i = 0; i < p; i++) {
		u32 h = hub_of(s, i), sn = fm_hub_supernode(&s->topo, h);

		if (!count[h]++)
			wins[t->hubs++] = (struct percs_addr){ .hub = h };
		if ((int)count[h] > t->per_hub)
			t->per_hub = (int)count[h];
		if (!sn_seen[sn]) {
			sn_seen[sn] = true;
			t->supernodes++;
		}
	}
	ret = 0;
	if (t->hubs < 2 || t->hubs > PERCS_CAU_MAX_MEMBERS)
		goto out;
	mem = calloc((size_t)t->hubs, sizeof(*mem));
	t->d = calloc((size_t)t->hubs, sizeof(*t->d));
	t->e = calloc((size_t)t->hubs, sizeof(*t->e));
	ret = -ENOMEM;
	if (!mem || !t->d || !t->e)
		goto out;
	info.hubs_per_supernode = s->topo.hubs_per_sn;
	ret = percs_cau_shape_kary(wins, (unsigned int)t->hubs, 0, s->fanout,
				   s->sn_aware ? &info : NULL, mem);
	if (ret)
		goto out;
	for (i = 0; i < t->hubs; i++) {
		u32 j = (u32)i;

		/* Up to the root, adding each edge's hops. */
		while (mem[j].parent != PERCS_CAU_ROOT) {
			u32 up = mem[j].parent;
			struct hops h = route_hops(s, mem[j].win.hub,
						   mem[up].win.hub);

			t->d[i]++;
			t->e[i] += link_cost_at(m, c, h, PROJ_MSG_BYTES);
			j = up;
		}
		if (t->d[i] > t->depth)
			t->depth = t->d[i];
	}
	for (i = 0; i < t->hubs; i++) {
		u32 up = mem[i].parent;
		struct hops h;

		if (up == PERCS_CAU_ROOT || t->d[i] > PROJ_MAX_DEPTH)
			continue;
		h = route_hops(s, mem[i].win.hub, mem[up].win.hub);
		if (h.l + h.d > t->level_hops[t->d[i]])
			t->level_hops[t->d[i]] = h.l + h.d;
		if (h.d)
			t->level_d[t->d[i]] = true;
	}
out:
	if (ret) {
		free(t->d);
		free(t->e);
		t->d = NULL;
		t->e = NULL;
		t->depth = -1;
	}
	free(count);
	free(sn_seen);
	free(wins);
	free(mem);
	return ret;
}

static void tree_free(struct proj_tree *t)
{
	free(t->d);
	free(t->e);
}

/*
 * The hub's own step of the hierarchical CAU collective (coll_cau.c):
 * the other ranks of the busiest hub send to their leader one after the
 * other and get the result back the same way - Table 1's one-to-all
 * twice, on one hub.
 */
static double local_step(const struct mpi_model *m, const struct proj_costs *c,
			 int per_hub)
{
	double b = PROJ_MSG_BYTES, msg;

	if (per_hub < 2)
		return 0;
	msg = at_size(m, c->base, b) + at_size(m, c->extra, b);
	return 2 * (msg + (per_hub - 2) * at_size(m, m->g, b)) +
	       (per_hub - 1) * m->gamma * b;
}

/* The slowest member's path: levels and links, both ways. */
static double tree_time(const struct proj_costs *c, const struct proj_tree *t)
{
	double worst = 0;

	for (int i = 0; i < t->hubs; i++)
		if (t->d[i] * c->cau_level + t->e[i] > worst)
			worst = t->d[i] * c->cau_level + t->e[i];
	return c->cau_fixed + 2 * worst;
}

/*
 * A butterfly round at p ranks (every rank with rank ^ 2^k, k cycling
 * over floor(log2 p) values, as percs-mpi-model measures R(n, m)): its
 * contention and work (@extra) plus its slowest pair's L(m), averaged
 * over the rounds; per size of the model.
 */
static void round_times(const struct mpi_model *m, const struct proj_costs *c,
			const struct proj_system *s, int p, double *out)
{
	int rounds = 0, k, i, j;

	for (j = 0; j < m->nsizes; j++)
		out[j] = 0;
	for (k = 0; (2 << k) <= p; k++) {
		bool seen[FM_MAX_HOPS + 1][FM_MAX_HOPS + 1] = { { false } };

		for (i = 0; i < p; i++) {
			int peer = i ^ (1 << k);
			struct hops h;

			if (peer >= p || peer < i)
				continue;
			h = route_hops(s, hub_of(s, i), hub_of(s, peer));
			seen[h.l][h.d] = true;
		}
		for (j = 0; j < m->nsizes; j++) {
			double worst = 0;

			for (int l = 0; l <= FM_MAX_HOPS; l++)
				for (int d = 0; d <= FM_MAX_HOPS; d++)
					if (seen[l][d] &&
					    link_cost(c, (struct hops){ l, d }, j) > worst)
						worst = link_cost(c, (struct hops){ l, d }, j);
			out[j] += c->base[j] + c->extra[j] + worst;
		}
		rounds++;
	}
	for (j = 0; j < m->nsizes && rounds; j++)
		out[j] /= rounds;
}

/**
 * proj_costs() - decompose the model's figures (see struct proj_costs)
 * @m: the model
 * @calib: the system it was measured on (spread placement, as percs-run)
 * @fit: job sizes whose CAU figures give the CAU's two costs
 * @nfit: entries of @fit
 * @fixed: the CAU's cost at the members (us), or < 0: fitted when the
 *	fit's trees have two depths or more, else a one-hub message's L(8)
 * @c: out
 * @err: the problem, on failure
 * @errlen: size of @err
 *
 * Return: 0, or -EINVAL (a figure the decomposition needs is missing),
 * -ENOMEM.
 */
int proj_costs(const struct mpi_model *m, const struct proj_system *calib,
	       const int *fit, int nfit, double fixed, struct proj_costs *c,
	       char *err, size_t errlen)
{
	u32 hps = calib->topo.hubs_per_sn;
	struct hops sn_pair, far_pair, two;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int i, j, r2 = -1;

	memset(c, 0, sizeof(*c));
	if (!m->have_l[MPI_MODEL_SAME_HUB]) {
		snprintf(err, errlen, "the model has no 'l same_hub' line (percs-bench model --calibrate measures it)");
		return -EINVAL;
	}
	for (i = 0; i < m->nranks; i++)
		if (m->ranks[i] == 2)
			r2 = i;
	if (r2 < 0) {
		snprintf(err, errlen, "the model has no 'round 2' line (percs-bench model --calibrate measures it)");
		return -EINVAL;
	}
	if (!m->have_cau) {
		snprintf(err, errlen, "the model has no 'cau' lines (calibrate where the CAU runs)");
		return -EINVAL;
	}
	/* The pairs percs-bench model --calibrate measured L(m) between. */
	sn_pair = route_hops(calib, 0, hps > 1 ? 1 : 0);
	far_pair = route_hops(calib, 0, calib->topo.nr_supernodes > 1 ? hps : 0);
	for (j = 0; j < m->nsizes; j++) {
		c->base[j] = m->l[MPI_MODEL_SAME_HUB][j];
		if (m->have_l[MPI_MODEL_SAME_SUPERNODE] && sn_pair.l)
			c->hop_l[j] = fmax(0, m->l[MPI_MODEL_SAME_SUPERNODE][j] -
					      c->base[j]) / sn_pair.l;
		if (m->have_l[MPI_MODEL_OTHER_SUPERNODE] && far_pair.d)
			c->hop_d[j] = fmax(0, m->l[MPI_MODEL_OTHER_SUPERNODE][j] -
					      c->base[j] - far_pair.l * c->hop_l[j]) /
				      far_pair.d;
		else
			c->hop_d[j] = c->hop_l[j];
	}
	two = route_hops(calib, hub_of(calib, 0), hub_of(calib, 1));
	for (j = 0; j < m->nsizes; j++)
		c->extra[j] = fmax(0, m->round[r2][j] - c->base[j] -
				      link_cost(c, two, j));

	/* The CAU: cau(n) = local + fixed + 2 (depth level + links). */
	for (i = 0; i < nfit; i++) {
		struct proj_tree t;
		int k, best = 0;
		double x, y;

		for (k = 0; k < m->nranks && m->ranks[k] != fit[i]; k++)
			;
		if (k == m->nranks) {
			snprintf(err, errlen, "the model has no CAU figure at %d ranks", fit[i]);
			return -EINVAL;
		}
		if (tree_build(m, c, calib, fit[i], &t)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (t.depth < 1) {
			tree_free(&t);
			snprintf(err, errlen, "%d ranks on the calibration system (%s placement) share one hub: no CAU tree to fit",
				 fit[i], calib->spread ? "spread" : "block");
			return -EINVAL;
		}
		/* The deepest member, the one with the most link cost among them. */
		for (int v = 1; v < t.hubs; v++)
			if (t.d[v] > t.d[best] ||
			    (t.d[v] == t.d[best] && t.e[v] > t.e[best]))
				best = v;
		x = 2.0 * t.d[best];
		y = m->cau[k] - local_step(m, c, t.per_hub) - 2 * t.e[best];

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		tree_free(&t);
	}
	c->fit_points = nfit;
	if (fixed >= 0) {
		c->cau_fixed = fixed;
		c->cau_level = (sy - nfit * fixed) / sx;
	} else if (nfit * sxx - sx * sx > 1e-9) {
		/* Two depths or more: least squares for both. */
		c->cau_level = (nfit * sxy - sx * sy) / (nfit * sxx - sx * sx);
		c->cau_fixed = (sy - c->cau_level * sx) / nfit;
		c->fitted = true;
	} else {
		/* One depth: the members' part taken as a one-hub message. */
		c->cau_fixed = at_size(m, c->base, PROJ_MSG_BYTES);
		c->cau_level = nfit ? (sy - nfit * c->cau_fixed) / sx : 0;
	}
	c->cau_fixed = fmax(0, c->cau_fixed);
	c->cau_level = fmax(0, c->cau_level);
	return 0;
}

int proj_row(const struct mpi_model *m, const struct proj_costs *c,
	     const struct proj_system *s, int p, struct proj_row *row)
{
	struct mpi_model *mp;
	struct proj_tree t;
	int ret, kind, a;

	if (p < 2)
		return -EINVAL;
	ret = tree_build(m, c, s, p, &t);
	if (ret)
		return ret;
	mp = malloc(sizeof(*mp));
	if (!mp) {
		tree_free(&t);
		return -ENOMEM;
	}
	memset(row, 0, sizeof(*row));
	row->p = p;
	row->supernodes = t.supernodes;
	row->hubs = t.hubs;
	row->per_hub = t.per_hub;
	row->depth = t.depth;
	memcpy(row->level_hops, t.level_hops, sizeof(row->level_hops));
	memcpy(row->level_d, t.level_d, sizeof(row->level_d));

	/* The model at this one job size: its round and its CAU projected. */
	*mp = *m;
	mp->nranks = 1;
	mp->ranks[0] = p;
	round_times(m, c, s, p, mp->round[0]);
	mp->have_cau = t.depth >= 1;
	mp->cau[0] = mp->have_cau ?
		     local_step(m, c, t.per_hub) + tree_time(c, &t) : 0;
	row->round_us = at_size(m, mp->round[0], PROJ_MSG_BYTES);
	row->cau_us = mp->have_cau ?
		      mpi_model_predict(mp, MPI_COLL_ALLREDUCE, ALLREDUCE_CAU, p,
					PROJ_MSG_BYTES) : -1;
	for (kind = 0; kind < 2; kind++) {
		row->best[kind] = 0;
		for (a = 0; a < PROJ_SW_ALGOS; a++) {
			row->sw_us[kind][a] = mpi_model_predict(mp,
				kind ? MPI_COLL_ALLREDUCE : MPI_COLL_BARRIER,
				sw_algo[kind][a], p, kind ? PROJ_MSG_BYTES : 0);
			if (row->sw_us[kind][a] < row->sw_us[kind][row->best[kind]])
				row->best[kind] = a;
		}
	}
	free(mp);
	tree_free(&t);
	return 0;
}
