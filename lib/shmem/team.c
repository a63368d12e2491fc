// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: teams.
 *
 * A team is a strided set of world PEs with a messaging context of its
 * own.  When its members are on different hubs (percs-run's spread
 * placement, up to one PE per hub) it also gets a CAU tree of their RMA
 * windows: barriers and the reductions the CAU's ALU has run there;
 * otherwise (PEs sharing a hub, no free CAU entry) everything runs in
 * software over the messaging endpoint.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "team.h"

static struct percs_shmem_team world_team, shared_team;
shmem_team_t percs_shmem_team_world;
shmem_team_t percs_shmem_team_shared;

struct percs_shmem_team *shmem_team_world_ptr(void)
{
	return &world_team;
}

struct percs_shmem_team *shmem_team_get(const char *call, shmem_team_t team)
{
	shmem_need_init(call);
	if (team == SHMEM_TEAM_INVALID)
		shmem_die(call, "SHMEM_TEAM_INVALID is not a team");
	return team;
}

int shmem_group_tag(struct shmem_group *g)
{
	g->tag = (g->tag + 1) & PERCS_MSG_TAG_MAX;
	return g->tag;
}

/* Members on distinct hubs?  Then a CAU tree can take them. */
static bool distinct_hubs(const struct shmem_pes *s)
{
	for (int i = 0; i < s->size; i++)
		for (int j = 0; j < i; j++)
			if (shmem_g.wins[shmem_pes_pe(s, i)].hub ==
			    shmem_g.wins[shmem_pes_pe(s, j)].hub)
				return false;
	return true;
}

/*
 * Member 0 creates the tree and tells the others its id (0: none, all
 * use software).  Collective over @g.
 */
static int group_cau(struct shmem_group *g)
{
	struct percs_cau_member *mem = NULL;
	struct percs_addr *wins = NULL;
	struct percs_hfi_info info;
	uint32_t id = 0;
	int n = g->set.size, ret;

	if (n < 2 || getenv("PERCS_SHMEM_NO_CAU") || !distinct_hubs(&g->set))
		return 0;
	mem = calloc((size_t)n, sizeof(*mem));
	wins = calloc((size_t)n, sizeof(*wins));
	if (!mem || !wins) {
		free(mem);
		free(wins);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		wins[i] = shmem_g.wins[shmem_pes_pe(&g->set, i)];
	ret = percs_hfi_info(shmem_g.hfi, &info);
	if (!ret)
		ret = percs_cau_shape_kary(wins, (unsigned int)n, 0, 0, &info,
					   mem);
	if (!ret && g->me == 0 &&
	    !percs_cau_tree_create(shmem_g.w, mem, (unsigned int)n, 0, &g->cau))
		id = percs_cau_tree_id(g->cau);
	if (!ret)
		ret = shmem_xchg_bcast(&g->set, n, g->me, 0, &id, sizeof(id),
				       g->ctx, shmem_group_tag(g));
	if (!ret && id && g->me != 0)
		ret = percs_cau_tree_join(shmem_g.w, id, mem, (unsigned int)n,
					  0, &g->cau);
	free(mem);
	free(wins);
	return ret;
}

int shmem_team_init(void)
{
	world_team.g.set = (struct shmem_pes){ 0, 1, shmem_g.npes };
	world_team.g.me = shmem_g.me;
	world_team.g.ctx = SHMEM_CTX_TEAM;
	world_team.predefined = true;
	shared_team.g.set = (struct shmem_pes){ shmem_g.me, 1, 1 };
	shared_team.g.me = 0;
	shared_team.g.ctx = SHMEM_CTX_TEAM | 0xffff;
	shared_team.predefined = true;
	percs_shmem_team_world = &world_team;
	percs_shmem_team_shared = &shared_team;
	return group_cau(&world_team.g);
}

void shmem_team_fini(void)
{
	percs_cau_tree_destroy(world_team.g.cau);
	world_team.g.cau = NULL;
	percs_shmem_team_world = NULL;
	percs_shmem_team_shared = NULL;
}

void shmem_team_barrier(const char *call, struct percs_shmem_team *t)
{
	struct shmem_group *g = &t->g;
	int ret;

	if (g->cau)
		ret = percs_cau_barrier(g->cau);
	else
		ret = shmem_xchg_barrier(&g->set, g->set.size, g->me, g->ctx,
					 shmem_group_tag(g));
	if (ret)
		shmem_die(call, "barrier: %s", percs_strerror(ret));
}

int shmem_team_my_pe(shmem_team_t team)
{
	if (team == SHMEM_TEAM_INVALID || !shmem_g.initialized)
		return -1;
	return team->g.me;
}

int shmem_team_n_pes(shmem_team_t team)
{
	if (team == SHMEM_TEAM_INVALID || !shmem_g.initialized)
		return -1;
	return team->g.set.size;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe,
			    shmem_team_t dest_team)
{
	if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID ||
	    src_pe < 0 || src_pe >= src_team->g.set.size)
		return -1;
	return shmem_pes_index(&dest_team->g.set,
			       shmem_pes_pe(&src_team->g.set, src_pe));
}

static int split_strided(const char *call, shmem_team_t parent, int start,
			 int stride, int size, shmem_team_t *new_team)
{
	struct percs_shmem_team *p = shmem_team_get(call, parent), *t;
	struct shmem_pes set;
	int idx, ret;
	uint32_t x;

	if (!new_team)
		shmem_die(call, "NULL new_team");
	*new_team = SHMEM_TEAM_INVALID;
	if (p->g.me < 0)
		shmem_die(call, "PE %d is not in the parent team", shmem_g.me);
	p->splits++;
	if (shmem_pes_split(&p->g.set, start, stride, size, &set)) {
		/* Every member of the parent says so: still synchronized. */
		shmem_team_barrier(call, p);
		return -1;
	}
	shmem_team_barrier(call, p);
	idx = shmem_pes_index(&set, shmem_g.me);
	if (idx < 0)
		return 0;	/* not a member */
	t = calloc(1, sizeof(*t));
	if (!t)
		shmem_die(call, "out of memory");
	t->g.set = set;
	t->g.me = idx;
	/* The same on every member: they split the same parent, in order. */
	x = ((p->g.ctx & 0xffff) * 131 + p->splits * 7919) % 0xfffe;
	t->g.ctx = SHMEM_CTX_TEAM | (x ? x : 1);
	ret = group_cau(&t->g);
	if (ret)
		shmem_die(call, "building the team's CAU tree: %s",
			  percs_strerror(ret));
	*new_team = t;
	return 0;
}

/* A config and mask a split may be given; checked before the split. */
void shmem_team_check_config(const char *call,
			     const shmem_team_config_t *config,
			     long config_mask)
{
	if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS)
		shmem_die(call, "unknown bits 0x%lx in config_mask",
			  config_mask & ~SHMEM_TEAM_NUM_CONTEXTS);
	if (config_mask && !config)
		shmem_die(call, "config_mask 0x%lx with a NULL config",
			  config_mask);
	if ((config_mask & SHMEM_TEAM_NUM_CONTEXTS) && config->num_contexts < 0)
		shmem_die(call, "num_contexts %d", config->num_contexts);
}

/*
 * What @new_team was created with, for shmem_team_get_config().  The
 * contexts are made on demand, so num_contexts is kept, not reserved.
 */
static void keep_config(shmem_team_t new_team,
			const shmem_team_config_t *config, long config_mask)
{
	if (new_team == SHMEM_TEAM_INVALID)
		return;
	if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
		new_team->config.num_contexts = config->num_contexts;
}

int shmem_team_split_strided(shmem_team_t parent, int start, int stride,
			     int size, const shmem_team_config_t *config,
			     long config_mask, shmem_team_t *new_team)
{
	const char *call = "shmem_team_split_strided";
	int ret;

	shmem_team_check_config(call, config, config_mask);
	ret = split_strided(call, parent, start, stride, size, new_team);
	keep_config(*new_team, config, config_mask);
	return ret;
}

int shmem_team_get_config(shmem_team_t team, long config_mask,
			  shmem_team_config_t *config)
{
	const char *call = "shmem_team_get_config";

	shmem_need_init(call);
	if (team == SHMEM_TEAM_INVALID)
		return -1;
	if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS)
		shmem_die(call, "unknown bits 0x%lx in config_mask",
			  config_mask & ~SHMEM_TEAM_NUM_CONTEXTS);
	if (!config)
		shmem_die(call, "NULL config");
	if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
		config->num_contexts = team->config.num_contexts;
	return 0;
}

/*
 * Parent PE i is (x, y) = (i % xrange, i / xrange): its x-axis team is its
 * row (the PEs of its y, numbered by x), its y-axis team its column.  One
 * strided split per row and per column, every parent member taking part
 * in each (collective), each keeping the one it belongs to.
 */
int shmem_team_split_2d(shmem_team_t parent, int xrange,
			const shmem_team_config_t *xaxis_config,
			long xaxis_mask, shmem_team_t *xaxis_team,
			const shmem_team_config_t *yaxis_config,
			long yaxis_mask, shmem_team_t *yaxis_team)
{
	const char *call = "shmem_team_split_2d";
	struct percs_shmem_team *p = shmem_team_get(call, parent);
	int n = p->g.set.size, rows, ret = 0;
	shmem_team_t t;

	if (!xaxis_team || !yaxis_team)
		shmem_die(call, "NULL xaxis_team or yaxis_team");
	shmem_team_check_config(call, xaxis_config, xaxis_mask);
	shmem_team_check_config(call, yaxis_config, yaxis_mask);
	*xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
	if (xrange < 1) {
		/* Every member of the parent says so: still synchronized. */
		shmem_team_barrier(call, p);
		return -1;
	}
	if (xrange > n)
		xrange = n;
	rows = (n + xrange - 1) / xrange;
	for (int y = 0; y < rows; y++) {
		int size = n - y * xrange < xrange ? n - y * xrange : xrange;

		ret |= split_strided(call, parent, y * xrange, 1, size, &t);
		if (t != SHMEM_TEAM_INVALID)
			*xaxis_team = t;
	}
	for (int x = 0; x < xrange; x++) {
		ret |= split_strided(call, parent, x, xrange,
				     (n - x + xrange - 1) / xrange, &t);
		if (t != SHMEM_TEAM_INVALID)
			*yaxis_team = t;
	}
	keep_config(*xaxis_team, xaxis_config, xaxis_mask);
	keep_config(*yaxis_team, yaxis_config, yaxis_mask);
	return ret ? -1 : 0;
}

int shmem_team_sync(shmem_team_t team)
{
	if (team == SHMEM_TEAM_INVALID)
		return -1;
	shmem_team_barrier("shmem_team_sync", shmem_team_get("shmem_team_sync", team));
	return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
	if (team == SHMEM_TEAM_INVALID)
		return;
	shmem_need_init("shmem_team_destroy");
	if (team->predefined)
		shmem_die("shmem_team_destroy",
			  "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed");
	/* Every member is done with the tree before it ends (in software). */
	if (team->g.cau) {
		int ret = shmem_xchg_barrier(&team->g.set, team->g.set.size,
					     team->g.me, team->g.ctx,
					     shmem_group_tag(&team->g));

		if (ret)
			shmem_die("shmem_team_destroy", "barrier: %s",
				  percs_strerror(ret));
	}
	percs_cau_tree_destroy(team->g.cau);
	free(team);
}

void shmem_aset_group(const char *call, int start, int log, int size,
		      struct shmem_group *g)
{
	memset(g, 0, sizeof(*g));
	g->me = shmem_aset_check(call, start, log, size, &g->set);
	g->ctx = shmem_aset_ctx(start, log, size);
}
