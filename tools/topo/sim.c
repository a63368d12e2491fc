// SPDX-License-Identifier: GPL-2.0
/*
 * percs-topo: route a pattern and add up the load of every channel (one
 * direction of a link).  A flow that a mode may send over n routes (the
 * list fm_route_next() gives) puts 1/n of itself on each: the average
 * load of the hardware's round robin or pseudo-random choice.
 *
 * Engines:
 *  - per flow: every flow, every route (any pattern; --per-flow forces it).
 *  - alltoall by symmetry (hw_direct, hw_direct_striped, hw_indirect): the
 *    wiring and the routes look the same from every supernode, so the
 *    load of a channel is the sum, over its orbit under a -> a + k, of the
 *    loads the sources of supernode 0 alone put on it.  Indirect routes
 *    are further split into their two parts: the part from source s to
 *    supernode m depends on s and m only and is routed once with the
 *    weight of all flows that take it; the part from the intermediate hub
 *    y to destination t is routed once per (y, t) with the weight of the
 *    sources that reach m at y.  Blue Waters size (513 x 32, 2.7e8 flows,
 *    1.4e11 indirect routes) becomes 0.5 M + 8.4 M route computations.
 *  - alltoall with sw_indirect: the same two-part split without symmetry.
 * The engines give the same loads (the tests compare them).
 */
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define TOPO_MAX_ROUTES	(FM_MAX_D_PER_PAIR + FM_MAX_SUPERNODES)

static void topo_add(struct topo_sim *sim, const struct fm_route *r, double w)
{
	unsigned int k;

	for (k = 0; k < r->nr_hops; k++)
		sim->load[2 * r->hop[k].link +
			  (r->hop[k].from_hub > r->hop[k].to_hub)] += w;
}

/* Route one flow of weight @w over every route of the mode. */
static void topo_flow(struct topo_sim *sim, u32 s, u32 d, double w,
		      struct fm_route *buf)
{
	struct fm_route_iter it = { 0 };
	int n = 0, ret = 0, i;

	while (n < TOPO_MAX_ROUTES &&
	       !(ret = fm_route_next(sim->t, s, d, sim->mode, sim->arg, &it,
				     &buf[n])))
		n++;
	sim->routes += n;
	if (!n || (ret && ret != -ENOENT)) {
		sim->unroutable += w;
		return;
	}
	for (i = 0; i < n; i++)
		topo_add(sim, &buf[i], w / n);
	sim->sent[s] += w;
	sim->flows += w;
}

static void topo_per_flow(struct topo_sim *sim, const struct topo_pattern *p)
{
	struct fm_route *buf = topo_calloc(TOPO_MAX_ROUTES, sizeof(*buf));
	const struct fm_topology *t = sim->t;
	size_t i;
	u32 s, d;

	sim->engine = "per flow";
	if (p->kind != TOPO_ALLTOALL) {
		for (i = 0; i < p->nr_flows; i++) {
			topo_flow(sim, p->flows[i].src, p->flows[i].dst, 1,
				  buf);
			if (!(i & 1023))
				topo_progress(sim->progress, i, p->nr_flows);
		}
	} else {
		for (s = 0; s < t->nr_hubs; s++) {
			for (d = 0; d < t->nr_hubs; d++)
				if (d != s)
					topo_flow(sim, s, d, 1, buf);
			topo_progress(sim->progress, s + 1, t->nr_hubs);
		}
	}
	free(buf);
}

/* Loads of the orbits of channels under the rotation a -> a + k. */
struct topo_orbits {
	const struct fm_topology *t;
	double *l;	/* [from index * H + to index] */
	double *d;	/* [distance * d + copy] */
};

static void topo_orbit_add(struct topo_orbits *o, const struct fm_route *r,
			   double w)
{
	const struct fm_topology *t = o->t;
	u32 H = t->hubs_per_sn;
	unsigned int k;

	for (k = 0; k < r->nr_hops; k++) {
		const struct fm_hop *h = &r->hop[k];

		if (h->link_class == FM_LINK_D)
			o->d[fm_sn_distance(t, h->from_hub / H, h->to_hub / H) *
			     t->d_links_per_pair + h->d_copy] += w;
		else
			o->l[h->from_hub % H * H + h->to_hub % H] += w;
	}
}

/* Every channel's load is its orbit's. */
static void topo_orbits_expand(struct topo_sim *sim, struct topo_orbits *o)
{
	const struct fm_topology *t = sim->t;
	u32 H = t->hubs_per_sn, d = t->d_links_per_pair, id;
	struct fm_link_info li;

	for (id = 0; id < t->nr_links; id++) {
		fm_link_info(t, id, &li);
		if (li.link_class == FM_LINK_D) {
			u32 a = li.hub[0] / H, b = li.hub[1] / H;

			sim->load[2 * id] =
				o->d[fm_sn_distance(t, a, b) * d + li.copy];
			sim->load[2 * id + 1] =
				o->d[fm_sn_distance(t, b, a) * d + li.copy];
		} else {
			u32 i = li.hub[0] % H, j = li.hub[1] % H;

			sim->load[2 * id] = o->l[i * H + j];
			sim->load[2 * id + 1] = o->l[j * H + i];
		}
	}
}

static void topo_alltoall_symmetric(struct topo_sim *sim)
{
	const struct fm_topology *t = sim->t;
	u32 H = t->hubs_per_sn, S = t->nr_supernodes, N = t->nr_hubs;
	u32 d = t->d_links_per_pair, s, dst, m, i;
	struct topo_orbits o = { t, NULL, NULL };
	u32 nd_inter, nd_intra, nv_inter, nv_intra, per_src;
	double w_inter, w_intra;
	struct fm_route r, *legs;
	u32 *ys;

	o.l = topo_calloc((size_t)H * H, sizeof(double));
	o.d = topo_calloc((size_t)S * (d ? d : 1), sizeof(double));
	legs = topo_calloc(H, sizeof(*legs));
	ys = topo_calloc(H, sizeof(u32));
	sim->engine = "alltoall by symmetry";
	/* routes per flow between / within supernodes (every link is up) */
	nd_inter = sim->mode == PERCS_ROUTE_DIRECT ? 1 :
		   sim->mode == PERCS_ROUTE_DIRECT_STRIPED ? d : 0;
	nd_intra = sim->mode != PERCS_ROUTE_HW_INDIRECT;
	nv_inter = sim->mode == PERCS_ROUTE_DIRECT || S < 2 ? 0 : S - 2;
	nv_intra = sim->mode == PERCS_ROUTE_DIRECT ? 0 : S - 1;
	w_inter = nd_inter + nv_inter ? 1.0 / (nd_inter + nv_inter) : 0;
	w_intra = nd_intra + nv_intra ? 1.0 / (nd_intra + nv_intra) : 0;

	/* the direct routes of the flows from supernode 0 */
	for (s = 0; s < H; s++) {
		for (dst = 0; dst < N; dst++) {
			double w = dst < H ? w_intra : w_inter;
			struct fm_route_iter it = { 0 };

			if (dst == s || !(dst < H ? nd_intra : nd_inter))
				continue;
			if (sim->mode == PERCS_ROUTE_DIRECT) {
				fm_route_direct(t, s, dst, &r);
				topo_orbit_add(&o, &r, w);
				sim->routes++;
				continue;
			}
			while (!fm_route_next(t, s, dst, sim->mode, 0, &it, &r) &&
			       r.via_sn == FM_NO_SN) {
				topo_orbit_add(&o, &r, w);
				sim->routes++;
			}
		}
		topo_progress(sim->progress, s + 1, H + (nv_intra ? S : 0));
	}

	/* the indirect routes, through each supernode m in two parts */
	for (m = 1; m < S && nv_intra; m++) {
		double w1 = (double)(N - 2 * H) * w_inter + (H - 1) * w_intra;

		for (s = 0; s < H; s++) {
			fm_route_to_sn(t, s, m, &legs[s]);
			ys[s] = legs[s].hop[legs[s].nr_hops - 1].to_hub;
			topo_orbit_add(&o, &legs[s], w1);
			sim->routes++;
		}
		for (s = 0; s < H; s++) {
			u32 y = ys[s], cnt = 0;

			for (i = 0; i < H; i++) {
				if (ys[i] == y && i < s)
					break;
				cnt += ys[i] == y;
			}
			if (i < s)
				continue;	/* y done already */
			for (dst = 0; dst < N; dst++) {
				double w;

				if (dst / H == m)
					continue;
				w = dst < H ? (cnt - (ys[dst] == y)) * w_intra :
					      cnt * w_inter;
				if (w == 0)
					continue;
				fm_route_direct(t, y, dst, &r);
				topo_orbit_add(&o, &r, w);
				sim->routes++;
			}
		}
		topo_progress(sim->progress, H + m, H + S);
	}

	topo_orbits_expand(sim, &o);
	per_src = (nd_inter + nv_inter ? N - H : 0) +
		  (nd_intra + nv_intra ? H - 1 : 0);
	for (s = 0; s < N; s++)
		sim->sent[s] = per_src;
	sim->flows = (double)N * per_src;
	sim->unroutable = (double)N * (N - 1) - sim->flows;
	free(o.l);
	free(o.d);
	free(legs);
	free(ys);
}

/* alltoall through one named supernode m: flows from or to m have none. */
static void topo_alltoall_sw_indirect(struct topo_sim *sim)
{
	const struct fm_topology *t = sim->t;
	u32 H = t->hubs_per_sn, N = t->nr_hubs, m = sim->arg, s, dst, yi;
	u32 *ys = topo_calloc(N, sizeof(u32)), *cnt = topo_calloc(H, sizeof(u32));
	struct fm_route r;

	sim->engine = "alltoall in two parts";
	for (s = 0; s < N; s++) {
		if (s / H == m)
			continue;
		fm_route_to_sn(t, s, m, &r);
		ys[s] = r.hop[r.nr_hops - 1].to_hub;
		cnt[ys[s] % H]++;
		topo_add(sim, &r, N - H - 1);
		sim->routes++;
		sim->sent[s] = N - H - 1;
		if (!(s & 255))
			topo_progress(sim->progress, s, N + N);
	}
	for (yi = 0; yi < H; yi++) {
		u32 y = m * H + yi;

		if (!cnt[yi])
			continue;
		for (dst = 0; dst < N; dst++) {
			u32 w;

			if (dst / H == m)
				continue;
			w = cnt[yi] - (ys[dst] == y);
			if (!w)
				continue;
			fm_route_direct(t, y, dst, &r);
			topo_add(sim, &r, w);
			sim->routes++;
		}
		topo_progress(sim->progress, N + (yi + 1) * N / H, N + N);
	}
	sim->flows = (double)(N - H) * (N - H - 1);
	sim->unroutable = (double)N * (N - 1) - sim->flows;
	free(ys);
	free(cnt);
}

/**
 * topo_simulate() - route a pattern, filling in @sim's loads
 * @sim: topology, mode and options set; loads are allocated here
 * @p: the pattern with its flows
 */
void topo_simulate(struct topo_sim *sim, const struct topo_pattern *p)
{
	const struct fm_topology *t = sim->t;

	sim->load = topo_calloc(2 * (size_t)t->nr_links + 1, sizeof(double));
	sim->sent = topo_calloc(t->nr_hubs, sizeof(double));
	topo_progress_start(sim->progress, "routing");
	if (p->kind != TOPO_ALLTOALL || sim->per_flow)
		topo_per_flow(sim, p);
	else if (sim->mode == PERCS_ROUTE_SW_INDIRECT)
		topo_alltoall_sw_indirect(sim);
	else
		topo_alltoall_symmetric(sim);
	topo_progress_end(sim->progress);
}
