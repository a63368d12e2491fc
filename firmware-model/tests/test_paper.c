// SPDX-License-Identifier: GPL-2.0
/*
 * Section VII.A of the paper, from the routes: full supernodes of 32 hubs
 * whose hubs each have d D links to d distinct supernodes (spec "dN",
 * 32d + 1 supernodes).  Under alltoall with direct routes every LL and LR
 * link carries c(LL) = c(LR) = 1 + 64d paths and every D link c(D) =
 * 1024; the D links limit the alltoall for d < 8, the LR links from d = 8
 * on, where the effective alltoall bandwidth per node is (155 + 5120d) /
 * (1 + 64d) (channel bandwidths LL 24, LR 5, D 10 per direction).
 * Indirect random routing about halves it, and cuts the congestion of 32
 * nodes of one supernode sending to 32 of another from 32 on one D link.
 *
 * The wiring and the routes look the same from every supernode
 * (route_rotation_symmetry), so a link's alltoall load is the sum, over
 * the links of its orbit under a -> a + k, of the loads the 32 sources of
 * supernode 0 alone put on them: an L link's orbit is named by its hub
 * indices, a D link's by its hub index and the distance to the supernode
 * it leads to.
 */
#include <math.h>

#include "fm_topo_util.h"

struct orbit_loads {
	u32 H, S;
	double *l;	/* [from index][to index] */
	double *d;	/* [distance * d + copy] */
	double max[FM_LINK_NR_CLASSES], sum[FM_LINK_NR_CLASSES];
	u32 n[FM_LINK_NR_CLASSES];
};

static void orbit_add(const struct fm_topology *t, struct orbit_loads *o,
		      const struct fm_route *r, double w)
{
	unsigned int k;

	for (k = 0; k < r->nr_hops; k++) {
		const struct fm_hop *h = &r->hop[k];
		u32 fs = h->from_hub / o->H, ts = h->to_hub / o->H;

		if (h->link_class == FM_LINK_D)
			o->d[fm_sn_distance(t, fs, ts) * t->d_links_per_pair +
			     h->d_copy] += w;
		else
			o->l[h->from_hub % o->H * o->H + h->to_hub % o->H] += w;
	}
}

/* Route flows from the hubs of supernode 0, @w each, spread over routes. */
static void orbit_flow(const struct fm_topology *t, struct orbit_loads *o,
		       u32 s, u32 dst, unsigned int mode, double w)
{
	struct fm_route_iter it = { 0 };
	struct fm_route r;
	int n = fm_route_count(t, s, dst, mode, 0);

	CHECK_CTX(n > 0, "%u->%u mode %u: %d routes", s, dst, mode, n);
	while (!fm_route_next(t, s, dst, mode, 0, &it, &r))
		orbit_add(t, o, &r, w / n);
}

static void orbit_stats(const struct fm_topology *t, struct orbit_loads *o)
{
	u32 i, j, H = o->H;

	memset(o->max, 0, sizeof(o->max));
	memset(o->sum, 0, sizeof(o->sum));
	memset(o->n, 0, sizeof(o->n));
	for (i = 0; i < H; i++) {
		for (j = 0; j < H; j++) {
			int c = i == j ? -1 :
				(i / 8 == j / 8 ? FM_LINK_LL : FM_LINK_LR);
			double v = o->l[i * H + j];

			if (c < 0)
				continue;
			o->n[c]++;
			o->sum[c] += v;
			if (v > o->max[c])
				o->max[c] = v;
		}
	}
	for (i = 0; i < (o->S - 1) * t->d_links_per_pair; i++) {
		o->n[FM_LINK_D]++;
		o->sum[FM_LINK_D] += o->d[i];
		if (o->d[i] > o->max[FM_LINK_D])
			o->max[FM_LINK_D] = o->d[i];
	}
}

/* Rate of every flow when all progress together: min of bw / max load. */
static double flow_rate(const struct orbit_loads *o, int *bottleneck)
{
	double rate = 0;
	unsigned int c;

	*bottleneck = -1;
	for (c = 0; c < FM_LINK_NR_CLASSES; c++) {
		double r;

		if (!o->max[c])
			continue;
		r = fm_link_class_bw(c) / o->max[c];
		if (*bottleneck < 0 || r < rate) {
			rate = r;
			*bottleneck = c;
		}
	}
	return rate;
}

static struct orbit_loads *orbit_alltoall(const struct fm_topology *t,
					  unsigned int mode)
{
	struct orbit_loads *o = calloc(1, sizeof(*o));
	u32 s, dst;

	o->H = t->hubs_per_sn;
	o->S = t->nr_supernodes;
	o->l = calloc(o->H * o->H, sizeof(double));
	o->d = calloc(o->S * t->d_links_per_pair, sizeof(double));
	for (s = 0; s < o->H; s++)
		for (dst = 0; dst < t->nr_hubs; dst++)
			if (dst != s)
				orbit_flow(t, o, s, dst, mode, 1);
	orbit_stats(t, o);
	return o;
}

static void orbit_free(struct orbit_loads *o)
{
	free(o->l);
	free(o->d);
	free(o);
}

static void check_direct_alltoall(u32 d)
{
	char spec[8];
	struct fm_topology *t;
	struct orbit_loads *o;
	double rate, bw, want;
	int bottleneck;
	u32 i;

	snprintf(spec, sizeof(spec), "d%u", d);
	t = tu_topo(spec);
	o = orbit_alltoall(t, PERCS_ROUTE_DIRECT);
	/* every L link carries 1 + 64d paths, every D link 1024 */
	for (i = 0; i < 32 * 32; i++)
		CHECK_CTX(o->l[i] == (i / 32 == i % 32 ? 0 : 1 + 64 * d),
			  "d=%u: L %u->%u carries %g", d, i / 32, i % 32,
			  o->l[i]);
	for (i = 0; i < 32 * d; i++)
		CHECK_CTX(o->d[i] == 1024, "d=%u: D distance %u carries %g", d,
			  i, o->d[i]);
	CHECK_EQ(o->n[FM_LINK_LL], 32 * 7);
	CHECK_EQ(o->n[FM_LINK_LR], 32 * 24);
	CHECK_EQ(o->max[FM_LINK_LL], 1 + 64 * d);
	CHECK_EQ(o->max[FM_LINK_LR], 1 + 64 * d);
	CHECK_EQ(o->max[FM_LINK_D], 1024);
	/* D links limit the alltoall below d = 8, LR links from 8 on */
	rate = flow_rate(o, &bottleneck);
	CHECK_CTX(bottleneck == (d < 8 ? FM_LINK_D : FM_LINK_LR),
		  "d=%u: bottleneck %s", d, fm_link_class_name(bottleneck));
	/* each node sends to 31 + 1024d others (all the others) */
	CHECK_EQ(t->nr_hubs - 1, 31 + 1024 * d);
	bw = (t->nr_hubs - 1) * rate;
	want = d >= 8 ? (155.0 + 5120.0 * d) / (1 + 64 * d) :
			(31.0 + 1024.0 * d) * 10 / 1024;
	CHECK_CTX(bw > want * (1 - 1e-12) && bw < want * (1 + 1e-12),
		  "d=%u: %.6f per node, paper %.6f", d, bw, want);
	orbit_free(o);
	tu_free(t);
}

FM_TEST(paper_alltoall_direct_path_counts)
{
	static const u32 ds[] = { 1, 2, 4, 7, 8, 9, 12, 16 };
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(ds); i++)
		check_direct_alltoall(ds[i]);
}

/* The same figures on the whole system, every source routed: d = 1, 2. */
FM_TEST(paper_alltoall_direct_every_source)
{
	u32 d;

	for (d = 1; d <= 2; d++) {
		char spec[8];
		struct fm_topology *t;
		u32 *load, s, dst, id, k;
		struct fm_link_info li;
		struct fm_route r;

		snprintf(spec, sizeof(spec), "d%u", d);
		t = tu_topo(spec);
		load = calloc(2 * t->nr_links, sizeof(u32));
		for (s = 0; s < t->nr_hubs; s++) {
			for (dst = 0; dst < t->nr_hubs; dst++) {
				CHECK(!fm_route_direct(t, s, dst, &r));
				for (k = 0; k < r.nr_hops; k++)
					load[2 * r.hop[k].link +
					     (r.hop[k].from_hub >
					      r.hop[k].to_hub)]++;
			}
		}
		for (id = 0; id < t->nr_links; id++) {
			fm_link_info(t, id, &li);
			for (k = 0; k < 2; k++)
				CHECK_CTX(load[2 * id + k] ==
					  (li.link_class == FM_LINK_D ?
					   1024 : 1 + 64 * d),
					  "d=%u link %u dir %u: %u", d, id, k,
					  load[2 * id + k]);
		}
		free(load);
		tu_free(t);
	}
}

/* Indirect random routing: about half the alltoall bandwidth. */
FM_TEST(paper_alltoall_indirect_halves)
{
	u32 d;

	for (d = 1; d <= 2; d++) {
		char spec[8];
		struct fm_topology *t;
		struct orbit_loads *dir, *ind;
		double ratio;
		int b1, b2;

		snprintf(spec, sizeof(spec), "d%u", d);
		t = tu_topo(spec);
		dir = orbit_alltoall(t, PERCS_ROUTE_DIRECT);
		ind = orbit_alltoall(t, PERCS_ROUTE_HW_INDIRECT);
		ratio = flow_rate(ind, &b2) / flow_rate(dir, &b1);
		CHECK_CTX(ratio > 0.45 && ratio < 0.55 && b1 == FM_LINK_D &&
			  b2 == FM_LINK_D, "d=%u: indirect/direct %.3f (%s, %s)",
			  d, ratio, fm_link_class_name(b1),
			  fm_link_class_name(b2));
		/*
		 * every flow crosses two D links instead of one (none within
		 * a supernode): twice the D load of the flows between
		 * supernodes, plus the 31 within
		 */
		CHECK_EQ(dir->sum[FM_LINK_D], 32.0 * 1024 * d);
		CHECK_CTX(fabs(ind->sum[FM_LINK_D] -
			       2.0 * 32 * (t->nr_hubs - 1)) < 1e-6,
			  "d=%u: D load %g", d, ind->sum[FM_LINK_D]);
		orbit_free(dir);
		orbit_free(ind);
		tu_free(t);
	}
}

/*
 * 32 nodes of supernode A send to 32 distinct nodes of supernode B: 32
 * flows on the one D link between them with direct routes; with indirect
 * random routing each bounces at one of the 31 other supernodes and no D
 * link carries more than about one.
 */
FM_TEST(paper_sn_to_sn_congestion)
{
	struct fm_topology *t = tu_topo("d1");
	double *load = calloc(2 * t->nr_links, sizeof(double));
	double direct_max = 0, indirect_max = 0;
	unsigned int pass;
	u32 i, id;

	for (pass = 0; pass < 2; pass++) {
		unsigned int mode = pass ? PERCS_ROUTE_HW_INDIRECT :
					   PERCS_ROUTE_DIRECT;
		double *max = pass ? &indirect_max : &direct_max;

		memset(load, 0, 2 * t->nr_links * sizeof(double));
		for (i = 0; i < 32; i++) {
			u32 s = 3 * 32 + i, dst = 20 * 32 + i;
			int n = fm_route_count(t, s, dst, mode, 0);
			struct fm_route_iter it = { 0 };
			struct fm_route r;
			unsigned int k;

			while (!fm_route_next(t, s, dst, mode, 0, &it, &r))
				for (k = 0; k < r.nr_hops; k++)
					if (r.hop[k].link_class == FM_LINK_D)
						load[2 * r.hop[k].link +
						     (r.hop[k].from_hub >
						      r.hop[k].to_hub)] +=
							1.0 / n;
		}
		for (id = 0; id < 2 * t->nr_links; id++)
			if (load[id] > *max)
				*max = load[id];
	}
	CHECK_CTX(direct_max == 32, "direct: %g", direct_max);
	CHECK_CTX(indirect_max > 1 && indirect_max < 32.0 / 31 + 1e-9,
		  "indirect: %g", indirect_max);
	free(load);
	tu_free(t);
}
