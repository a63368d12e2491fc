// SPDX-License-Identifier: GPL-2.0
/* Unit tests of firmware-model/route.c with every link up. */
#include "fm_topo_util.h"

/* Topologies small enough to check every route of every pair of hubs. */
static const char *const route_specs[] = {
	"1x1", "1x32", "2x1", "2x4", "2x4,dpair=1", "3x1", "17x1", "5x8",
	"9x12", "3x32", "7x2,dpair=2", "4x8,dpair=2", "33x2", "17x4",
};

#define MODES (PERCS_ROUTE_MAX + 1)

static bool same_hops(const struct fm_route *a, const struct fm_route *b)
{
	return a->nr_hops == b->nr_hops && a->via_sn == b->via_sn &&
	       !memcmp(a->hop, b->hop, sizeof(a->hop));
}

/* Check one pair in every mode; returns false after the first problem. */
static bool check_pair(const struct fm_topology *t, const char *spec, u32 s,
		       u32 d)
{
	u32 H = t->hubs_per_sn, S = t->nr_supernodes, a = s / H, b = d / H;
	u32 nvia = s == d ? 0 : S - 1 - (a != b), usable, m, k, n;
	struct fm_route r, list[1024];
	struct fm_route_cursor cur;
	struct fm_route_iter it;
	char why[128];
	int best, ret;
	u8 seen[FM_MAX_SUPERNODES];

	/* hw_direct: valid, direct, as short as the shortest */
	ret = fm_route(t, s, d, PERCS_ROUTE_DIRECT, 0, NULL, &r);
	best = s == d ? 0 : tu_shortest_direct(t, s, d, &usable);
	if (s == d)
		usable = 1;
	if (ret || !tu_route_ok(t, s, d, &r, why, sizeof(why)) ||
	    r.via_sn != FM_NO_SN || r.nr_hops != best ||
	    r.mode != PERCS_ROUTE_DIRECT) {
		FM_T_FAILF("%s %u->%u hw_direct: %d %s, %u hops, best %d",
			   spec, s, d, ret, why, r.nr_hops, best);
		return false;
	}

	/* hw_indirect's list: one route through each candidate */
	memset(seen, 0, sizeof(seen));
	memset(&it, 0, sizeof(it));
	n = 0;
	while (!(ret = fm_route_next(t, s, d, PERCS_ROUTE_HW_INDIRECT, 0,
				     &it, &r))) {
		if (!tu_route_ok(t, s, d, &r, why, sizeof(why)) ||
		    (s != d && (r.via_sn == FM_NO_SN || seen[r.via_sn]))) {
			FM_T_FAILF("%s %u->%u hw_indirect #%u: %s", spec, s, d,
				   n, why);
			return false;
		}
		if (s != d)
			seen[r.via_sn] = 1;
		n++;
	}
	if (ret != -ENOENT || n != (s == d ? 1 : nvia) ||
	    fm_route_count(t, s, d, PERCS_ROUTE_HW_INDIRECT, 0) != (int)n) {
		FM_T_FAILF("%s %u->%u hw_indirect: %u routes, %d", spec, s, d,
			   n, ret);
		return false;
	}

	/* sw_indirect through each candidate: the listed route */
	for (m = 0; m < S && s != d; m++) {
		ret = fm_route(t, s, d, PERCS_ROUTE_SW_INDIRECT, m, NULL, &r);
		if (m == a || m == b) {
			if (ret != -EINVAL || r.nr_hops) {
				FM_T_FAILF("%s %u->%u via own %u: %d", spec, s,
					   d, m, ret);
				return false;
			}
			continue;
		}
		if (ret || r.via_sn != m ||
		    !tu_route_ok(t, s, d, &r, why, sizeof(why))) {
			FM_T_FAILF("%s %u->%u via %u: %d %s", spec, s, d, m,
				   ret, why);
			return false;
		}
	}

	/* hw_direct_striped: every direct route, then every indirect one */
	memset(&it, 0, sizeof(it));
	n = 0;
	while (n < FM_ARRAY_SIZE(list) &&
	       !(ret = fm_route_next(t, s, d, PERCS_ROUTE_DIRECT_STRIPED, 0,
				     &it, &list[n]))) {
		bool direct = list[n].via_sn == FM_NO_SN;

		if (!tu_route_ok(t, s, d, &list[n], why, sizeof(why)) ||
		    (n < usable) != direct) {
			FM_T_FAILF("%s %u->%u striped #%u: %s", spec, s, d, n,
				   why);
			return false;
		}
		n++;
	}
	if (n != usable + nvia ||
	    fm_route_count(t, s, d, PERCS_ROUTE_DIRECT_STRIPED, 0) !=
	    (int)n) {
		FM_T_FAILF("%s %u->%u striped: %u routes, want %u + %u", spec,
			   s, d, n, usable, nvia);
		return false;
	}
	/* the round robin walks that list, twice over */
	fm_route_cursor_init(&cur, 1);
	for (k = 0; k < 2 * n; k++) {
		ret = fm_route(t, s, d, PERCS_ROUTE_DIRECT_STRIPED, 0, &cur,
			       &r);
		if (ret || !same_hops(&r, &list[k % n])) {
			FM_T_FAILF("%s %u->%u striped call %u: %d", spec, s, d,
				   k, ret);
			return false;
		}
	}
	/* hw_indirect with a cursor: one of its listed routes */
	for (k = 0; k < 3 && s != d; k++) {
		ret = fm_route(t, s, d, PERCS_ROUTE_HW_INDIRECT, 0, &cur, &r);
		if (nvia == 0 ? ret != -EHOSTUNREACH :
		    ret || r.via_sn == FM_NO_SN ||
		    !tu_route_ok(t, s, d, &r, why, sizeof(why))) {
			FM_T_FAILF("%s %u->%u hw_indirect call: %d %s", spec, s,
				   d, ret, why);
			return false;
		}
	}
	return true;
}

FM_TEST(route_every_mode_every_pair)
{
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(route_specs); i++) {
		struct fm_topology *t = tu_topo(route_specs[i]);
		u32 s, d;
		bool ok = true;

		for (s = 0; s < t->nr_hubs && ok; s++)
			for (d = 0; d < t->nr_hubs && ok; d++)
				ok = check_pair(t, route_specs[i], s, d);
		tu_free(t);
	}
}

/*
 * One D link per pair (2x4,dpair=1: copy 0 joins hub 0 and hub 4): the
 * four direct shapes and their virtual channels.
 */
FM_TEST(route_direct_shapes_and_vcs)
{
	struct fm_topology *t = tu_topo("2x4,dpair=1");
	struct fm_route r;

	CHECK_EQ(fm_route_direct(t, 2, 6, &r), 0);
	CHECK_EQ(r.nr_hops, 3);
	CHECK(r.hop[0].link_class == FM_LINK_LL && r.hop[0].vc == 0 &&
	      r.hop[0].from_hub == 2 && r.hop[0].to_hub == 0);
	CHECK(r.hop[1].link_class == FM_LINK_D && r.hop[1].vc == 0 &&
	      r.hop[1].from_hub == 0 && r.hop[1].to_hub == 4);
	CHECK(r.hop[2].link_class == FM_LINK_LL && r.hop[2].vc == 1 &&
	      r.hop[2].from_hub == 4 && r.hop[2].to_hub == 6);
	CHECK(r.hop[1].out_port == FM_PORT_D && r.hop[1].in_port == FM_PORT_D);
	CHECK(r.hop[0].out_port == FM_PORT_LL + 0 &&
	      r.hop[0].in_port == FM_PORT_LL + 1);
	/* D-L: the L hop after a D hop is on L vc 1 */
	CHECK_EQ(fm_route_direct(t, 0, 7, &r), 0);
	CHECK_EQ(r.nr_hops, 2);
	CHECK(r.hop[0].link_class == FM_LINK_D && r.hop[0].vc == 0);
	CHECK(r.hop[1].link_class == FM_LINK_LL && r.hop[1].vc == 1);
	/* L-D */
	CHECK_EQ(fm_route_direct(t, 5, 0, &r), 0);
	CHECK_EQ(r.nr_hops, 2);
	CHECK(r.hop[0].link_class == FM_LINK_LL && r.hop[0].vc == 0 &&
	      r.hop[0].to_hub == 4);
	CHECK(r.hop[1].link_class == FM_LINK_D && r.hop[1].vc == 0 &&
	      r.hop[1].to_hub == 0);
	/* D */
	CHECK_EQ(fm_route_direct(t, 4, 0, &r), 0);
	CHECK_EQ(r.nr_hops, 1);
	CHECK(r.hop[0].link_class == FM_LINK_D && r.hop[0].from_hub == 4);
	CHECK_EQ(r.route_class, FM_ROUTE_INTER_SN);
	tu_free(t);

	/* 2 x 32: LL within a drawer, LR across drawers */
	t = tu_topo("2x32");
	CHECK_EQ(fm_route_direct(t, 33, 39, &r), 0);
	CHECK(r.nr_hops == 1 && r.hop[0].link_class == FM_LINK_LL &&
	      r.route_class == FM_ROUTE_INTRA_SN);
	CHECK_EQ(fm_route_direct(t, 33, 63, &r), 0);
	CHECK(r.nr_hops == 1 && r.hop[0].link_class == FM_LINK_LR);
	CHECK_EQ(fm_route_direct(t, 40, 40, &r), 0);
	CHECK(r.nr_hops == 0 && r.route_class == FM_ROUTE_SAME_HUB);
	tu_free(t);
}

/*
 * hw_direct takes a shortest route: 2 x 4 has 64 links per pair, copy c
 * joining index c mod 4 of both, so equal indices are one D hop apart.
 * The hubs of one supernode spread their routes to one destination over
 * the copies.
 */
FM_TEST(route_direct_shortest_and_spread)
{
	struct fm_topology *t = tu_topo("2x4");
	struct fm_route r;
	u32 s, used[64] = { 0 }, c, nused = 0;

	CHECK_EQ(fm_route_direct(t, 2, 6, &r), 0);
	CHECK(r.nr_hops == 1 && r.hop[0].link_class == FM_LINK_D &&
	      r.hop[0].d_copy % 4 == 2);
	CHECK_EQ(fm_route_direct(t, 1, 6, &r), 0);
	CHECK_EQ(r.nr_hops, 2);
	for (s = 0; s < 4; s++) {
		u32 d;

		for (d = 4; d < 8; d++) {
			fm_route_direct(t, s, d, &r);
			for (c = 0; c < r.nr_hops; c++)
				if (r.hop[c].link_class == FM_LINK_D)
					used[r.hop[c].d_copy]++;
		}
	}
	for (c = 0; c < 64; c++)
		nused += used[c] != 0;
	CHECK_CTX(nused == 16, "%u copies carry the 16 pairs", nused);
	tu_free(t);
}

FM_TEST(route_rejects_bad_arguments)
{
	struct fm_topology *t = tu_topo("4x2");
	struct fm_route r;
	struct fm_route_iter it = { 0 };

	memset(&r, 0xa5, sizeof(r));
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_MAX + 1, 0, NULL, &r), -EINVAL);
	CHECK(r.nr_hops == 0 && r.hop[0].link == 0);
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 0, NULL, &r),
		 -EINVAL);
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 1, NULL, &r),
		 -EINVAL);
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 4, NULL, &r),
		 -EINVAL);
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 0xffff, NULL, &r),
		 -EINVAL);
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 2, NULL, &r), 0);
	CHECK_EQ(r.via_sn, 2);
	CHECK_EQ(fm_route(t, 0, 8, PERCS_ROUTE_DIRECT, 0, NULL, &r),
		 -EHOSTUNREACH);
	CHECK_EQ(fm_route(t, 8, 0, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r),
		 -EHOSTUNREACH);
	CHECK_EQ(fm_route_direct(t, 0xffffffff, 0, &r), -EHOSTUNREACH);
	CHECK_EQ(fm_route_count(t, 0, 9, PERCS_ROUTE_DIRECT, 0), -EHOSTUNREACH);
	CHECK_EQ(fm_route_count(t, 0, 2, 9, 0), -EINVAL);
	CHECK_EQ(fm_route_next(t, 0, 2, PERCS_ROUTE_SW_INDIRECT, 1, &it, &r),
		 -EINVAL);
	/* the route arg means nothing to the other modes */
	CHECK_EQ(fm_route(t, 0, 2, PERCS_ROUTE_DIRECT, 77, NULL, &r), 0);
	/* one hub to itself: no hop in every mode */
	CHECK_EQ(fm_route(t, 3, 3, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r), 0);
	CHECK(r.nr_hops == 0 && r.route_class == FM_ROUTE_SAME_HUB);
	CHECK_EQ(fm_route_count(t, 3, 3, PERCS_ROUTE_DIRECT_STRIPED, 0), 1);
	tu_free(t);

	/* two supernodes: no candidate intermediate between them */
	t = tu_topo("2x4");
	CHECK_EQ(fm_route(t, 0, 5, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r),
		 -EHOSTUNREACH);
	CHECK_EQ(fm_route_count(t, 0, 5, PERCS_ROUTE_HW_INDIRECT, 0), 0);
	/* within a supernode the other one is a candidate */
	CHECK_EQ(fm_route(t, 0, 1, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r), 0);
	CHECK(r.via_sn == 1 && r.route_class == FM_ROUTE_INTRA_SN);
	tu_free(t);
}

/* Does hub @s have a D link to supernode @m? */
static bool d_link_on(const struct fm_topology *t, u32 s, u32 m)
{
	u32 c, x, y;

	for (c = 0; c < t->d_links_per_pair; c++)
		if (!fm_d_link(t, s / t->hubs_per_sn, m, c, &x, &y) && x == s)
			return true;
	return false;
}

FM_TEST(route_to_supernode)
{
	struct fm_topology *t = tu_topo("9x2");
	struct fm_route r;
	u32 s, m;
	char why[64];

	for (s = 0; s < t->nr_hubs; s++) {
		for (m = 0; m < t->nr_supernodes; m++) {
			int ret = fm_route_to_sn(t, s, m, &r);
			struct fm_route full;

			if (m == s / 2) {
				CHECK_EQ(ret, -EINVAL);
				continue;
			}
			CHECK(!ret && r.nr_hops >= 1 && r.nr_hops <= 2 &&
			      r.hop[r.nr_hops - 1].link_class == FM_LINK_D &&
			      r.hop[r.nr_hops - 1].to_hub / 2 == m);
			/* a copy on the source itself when it has one */
			CHECK_EQ(r.nr_hops, d_link_on(t, s, m) ? 1 : 2);
			/* the first part of the indirect route through m */
			if (!fm_route(t, s, (s + 4) % t->nr_hubs,
				      PERCS_ROUTE_SW_INDIRECT, m, NULL, &full))
				CHECK(!memcmp(full.hop, r.hop,
					      r.nr_hops * sizeof(r.hop[0])) &&
				      tu_route_ok(t, s, (s + 4) % t->nr_hubs,
						  &full, why, sizeof(why)));
		}
	}
	CHECK_EQ(fm_route_to_sn(t, 18, 0, &r), -EINVAL);
	CHECK_EQ(fm_route_to_sn(t, 0, 9, &r), -EINVAL);
	tu_free(t);
}

/* A topology without tables routes exactly as one whose links are all up. */
FM_TEST(route_without_tables_matches)
{
	static const char *const specs[] = { "2x4", "5x8", "7x2,dpair=2" };
	unsigned int i, mode;

	for (i = 0; i < FM_ARRAY_SIZE(specs); i++) {
		struct fm_topology *t = tu_topo(specs[i]), plain = *t;
		u32 s, d;

		plain.rt = NULL;
		for (s = 0; s < t->nr_hubs; s++) {
			for (d = 0; d < t->nr_hubs; d++) {
				for (mode = 0; mode < MODES; mode++) {
					struct fm_route r1, r2;
					struct fm_route_cursor c1 = { 0, 7 };
					struct fm_route_cursor c2 = { 0, 7 };
					u32 arg = mode == PERCS_ROUTE_SW_INDIRECT ?
						  (s / t->hubs_per_sn + 1 +
						   (d / t->hubs_per_sn ==
						    (s / t->hubs_per_sn + 1) %
						    t->nr_supernodes)) %
						  t->nr_supernodes : 0;
					int e1 = fm_route(t, s, d, mode, arg,
							  &c1, &r1);
					int e2 = fm_route(&plain, s, d, mode,
							  arg, &c2, &r2);

					CHECK_CTX(e1 == e2 && (e1 ||
						  !memcmp(&r1, &r2, sizeof(r1))),
						  "%s %u->%u mode %u", specs[i],
						  s, d, mode);
				}
			}
		}
		tu_free(t);
	}
}

/*
 * hw_indirect picks each candidate supernode about equally often, and
 * different seeds give different sequences.
 */
FM_TEST(route_hw_indirect_spreads)
{
	struct fm_topology *t = tu_topo("12x4");
	struct fm_route_cursor c1, c2;
	u32 count[12] = { 0 }, k, m, same = 0;
	struct fm_route r, r2;

	fm_route_cursor_init(&c1, 1);
	fm_route_cursor_init(&c2, 2);
	for (k = 0; k < 10000; k++) {
		CHECK(!fm_route(t, 1, 45, PERCS_ROUTE_HW_INDIRECT, 0, &c1, &r));
		CHECK(!fm_route(t, 1, 45, PERCS_ROUTE_HW_INDIRECT, 0, &c2, &r2));
		count[r.via_sn]++;
		same += r.via_sn == r2.via_sn;
	}
	/* 10 candidates: 1000 each on average */
	for (m = 0; m < 12; m++)
		CHECK_CTX(m == 0 || m == 11 ? count[m] == 0 :
			  count[m] > 850 && count[m] < 1150, "sn %u: %u", m,
			  count[m]);
	CHECK_CTX(same < 2000, "%u of 10000 equal", same);
	/* a zeroed cursor works and NULL is a fixed choice */
	memset(&c1, 0, sizeof(c1));
	CHECK(!fm_route(t, 1, 45, PERCS_ROUTE_HW_INDIRECT, 0, &c1, &r));
	CHECK(c1.seed != 0);
	CHECK(!fm_route(t, 1, 45, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r));
	CHECK(!fm_route(t, 1, 45, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r2));
	CHECK(same_hops(&r, &r2));
	tu_free(t);
}

/* Is @r, moved @k supernodes on, among the routes of (s, d) moved too? */
static bool rotated_route_listed(const struct fm_topology *t,
				 const struct fm_route *r, u32 s, u32 d,
				 unsigned int mode, u32 k)
{
	u32 H = t->hubs_per_sn, N = t->nr_hubs, h;
	struct fm_route_iter it = { 0 };
	struct fm_route r2;

	while (!fm_route_next(t, (s + k * H) % N, (d + k * H) % N, mode, 0,
			      &it, &r2)) {
		bool same = r->nr_hops == r2.nr_hops;

		for (h = 0; same && h < r->nr_hops; h++)
			same = r2.hop[h].from_hub ==
			       (r->hop[h].from_hub + k * H) % N &&
			       r2.hop[h].to_hub ==
			       (r->hop[h].to_hub + k * H) % N &&
			       r2.hop[h].d_copy == r->hop[h].d_copy;
		if (same)
			return true;
	}
	return false;
}

/* Every route of (s, d) in @mode, moved k on, is listed for the moved pair. */
static void check_rotations(const struct fm_topology *t, const char *spec,
			    u32 s, u32 d, unsigned int mode)
{
	struct fm_route_iter it = { 0 };
	struct fm_route r;
	u32 k;

	while (!fm_route_next(t, s, d, mode, 0, &it, &r))
		for (k = 1; k < t->nr_supernodes; k++)
			CHECK_CTX(rotated_route_listed(t, &r, s, d, mode, k),
				  "%s %u->%u mode %u shift %u", spec, s, d,
				  mode, k);
}

/*
 * Routes look the same from every supernode: moving both ends k
 * supernodes on moves every hop of every listed route k supernodes on
 * (the simulator relies on it).
 */
FM_TEST(route_rotation_symmetry)
{
	static const char *const specs[] = { "5x4", "7x2,dpair=2", "4x8" };
	unsigned int i, mode;

	for (i = 0; i < FM_ARRAY_SIZE(specs); i++) {
		struct fm_topology *t = tu_topo(specs[i]);
		u32 s, d;

		for (s = 0; s < t->hubs_per_sn; s++)
			for (d = 0; d < t->nr_hubs; d++)
				for (mode = 0; mode < MODES; mode++)
					if (mode != PERCS_ROUTE_SW_INDIRECT)
						check_rotations(t, specs[i], s,
								d, mode);
		tu_free(t);
	}
}
