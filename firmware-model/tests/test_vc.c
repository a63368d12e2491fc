// SPDX-License-Identifier: GPL-2.0
/*
 * Deadlock freedom: the channel dependency graph of every route of every
 * mode has no cycle.  A channel is (link, direction, VC); a route that
 * leaves one channel for the next makes the second a dependency of the
 * first (Dally and Towles).  Kahn's algorithm finds a topological order
 * or proves a cycle.
 */
#include "fm_topo_util.h"

#define MODES (PERCS_ROUTE_MAX + 1)

struct cdg {
	u32 nr_nodes;
	u64 *edges;		/* open-addressing set of (from << 32 | to) + 1 */
	u32 cap, nr_edges;
	bool zero_vcs;		/* the negative control: every hop on VC 0 */
};

static u32 channel(const struct cdg *g, const struct fm_hop *h)
{
	return (h->link * 2 + (h->from_hub > h->to_hub)) * FM_L_VCS +
	       (g->zero_vcs ? 0 : h->vc);
}

static void cdg_add(struct cdg *g, u32 from, u32 to)
{
	u64 key = ((u64)from << 32 | to) + 1, i;

	if (2 * (g->nr_edges + 1) > g->cap) {
		u64 *old = g->edges;
		u32 oldcap = g->cap, k;

		g->cap = g->cap ? 2 * g->cap : 1024;
		g->edges = calloc(g->cap, sizeof(u64));
		g->nr_edges = 0;
		for (k = 0; k < oldcap; k++)
			if (old[k])
				cdg_add(g, (old[k] - 1) >> 32,
					(u32)(old[k] - 1));
		free(old);
	}
	for (i = key * 0x9e3779b97f4a7c15ULL % g->cap; g->edges[i];
	     i = (i + 1) % g->cap)
		if (g->edges[i] == key)
			return;
	g->edges[i] = key;
	g->nr_edges++;
}

static void cdg_route(struct cdg *g, const struct fm_route *r)
{
	unsigned int k;

	for (k = 1; k < r->nr_hops; k++)
		cdg_add(g, channel(g, &r->hop[k - 1]), channel(g, &r->hop[k]));
}

/* Add every route of every mode between every pair of hubs. */
static void cdg_all_routes(struct cdg *g, const struct fm_topology *t)
{
	u32 s, d, m, H = t->hubs_per_sn;
	unsigned int mode;
	struct fm_route r;

	for (s = 0; s < t->nr_hubs; s++) {
		for (d = 0; d < t->nr_hubs; d++) {
			for (mode = 0; mode < MODES; mode++) {
				for (m = 0; m < t->nr_supernodes; m++) {
					struct fm_route_iter it = { 0 };

					if (mode != PERCS_ROUTE_SW_INDIRECT &&
					    m)
						break;
					if (mode == PERCS_ROUTE_SW_INDIRECT &&
					    (m == s / H || m == d / H))
						continue;
					while (!fm_route_next(t, s, d, mode, m,
							      &it, &r))
						cdg_route(g, &r);
				}
			}
		}
	}
}

/* Kahn's algorithm: true if the graph has a cycle. */
static bool cdg_has_cycle(const struct cdg *g)
{
	u32 *indeg = calloc(g->nr_nodes, sizeof(u32));
	u32 *start = calloc(g->nr_nodes + 1, sizeof(u32));
	u32 *adj = calloc(g->nr_edges + 1, sizeof(u32));
	u32 *queue = calloc(g->nr_nodes, sizeof(u32));
	u32 *fill = calloc(g->nr_nodes, sizeof(u32));
	u32 k, head = 0, tail = 0, done = 0, n = g->nr_nodes;
	bool cycle;

	for (k = 0; k < g->cap; k++) {
		if (g->edges[k]) {
			u64 e = g->edges[k] - 1;

			start[(e >> 32) + 1]++;
			indeg[(u32)e]++;
		}
	}
	for (k = 0; k < n; k++)
		start[k + 1] += start[k];
	for (k = 0; k < g->cap; k++) {
		if (g->edges[k]) {
			u64 e = g->edges[k] - 1;
			u32 from = e >> 32;

			adj[start[from] + fill[from]++] = (u32)e;
		}
	}
	for (k = 0; k < n; k++)
		if (!indeg[k])
			queue[tail++] = k;
	while (head < tail) {
		u32 v = queue[head++];

		done++;
		for (k = start[v]; k < start[v + 1]; k++)
			if (!--indeg[adj[k]])
				queue[tail++] = adj[k];
	}
	cycle = done < n;
	free(indeg);
	free(start);
	free(adj);
	free(queue);
	free(fill);
	return cycle;
}

static bool cdg_check(const char *spec, u32 percent_down, bool zero_vcs,
		      u32 *nr_edges)
{
	struct fm_topology *t = tu_topo(spec);
	struct cdg g = { 0 };
	u32 x = 1234, id;
	bool cycle;

	for (id = 0; id < t->nr_links && percent_down; id++)
		if (tu_rand(&x) % 100 < percent_down)
			CHECK(!fm_link_set_state(t, id, false));
	g.nr_nodes = t->nr_links * 2 * FM_L_VCS;
	g.zero_vcs = zero_vcs;
	cdg_all_routes(&g, t);
	cycle = cdg_has_cycle(&g);
	*nr_edges = g.nr_edges;
	free(g.edges);
	tu_free(t);
	return cycle;
}

FM_TEST(vc_channel_dependencies_acyclic)
{
	static const struct {
		const char *spec;
		u32 down;
	} cases[] = {
		{ "2x4", 0 }, { "3x2", 0 }, { "5x4", 0 }, { "4x8,dpair=2", 0 },
		{ "9x12", 0 }, { "17x1", 0 }, { "7x2,dpair=2", 0 },
		{ "3x32", 0 }, { "5x4", 20 }, { "9x2", 30 },
	};
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(cases); i++) {
		u32 edges;
		bool cycle = cdg_check(cases[i].spec, cases[i].down, false,
				       &edges);

		CHECK_CTX(!cycle, "%s, %u%% down: a cycle (%u edges)",
			  cases[i].spec, cases[i].down, edges);
		CHECK_CTX(edges > 0, "%s: no edges", cases[i].spec);
	}
}

/*
 * The same graphs with every hop on one VC do have cycles: the check
 * above can fail, and it is the VCs by hop position that break them.
 */
FM_TEST(vc_single_channel_would_deadlock)
{
	static const char *const specs[] = { "3x2", "5x4", "9x12" };
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(specs); i++) {
		u32 edges;

		CHECK_CTX(cdg_check(specs[i], 0, true, &edges),
			  "%s: no cycle with one VC (%u edges)", specs[i],
			  edges);
	}
}
