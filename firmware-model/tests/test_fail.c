// SPDX-License-Identifier: GPL-2.0
/* Unit tests of routing around links that are down (route.c, rtable.c). */
#include "fm_topo_util.h"

#define MODES (PERCS_ROUTE_MAX + 1)

static void set_d_links(struct fm_topology *t, u32 a, u32 b, bool up)
{
	u32 c, id;

	for (c = 0; c < t->d_links_per_pair; c++) {
		CHECK(!fm_d_link_id(t, a, b, c, &id));
		CHECK(!fm_link_set_state(t, id, up));
	}
}

static int route_err(const struct fm_topology *t, u32 s, u32 d,
		     unsigned int mode, u32 arg)
{
	struct fm_route r;
	int ret = fm_route(t, s, d, mode, arg, NULL, &r);

	if (ret)
		CHECK_CTX(r.nr_hops == 0, "%u->%u mode %u: hops on error", s,
			  d, mode);
	return ret;
}

/* Two supernodes joined by one D link: it goes down, they are cut off. */
FM_TEST(fail_last_d_link)
{
	struct fm_topology *t = tu_topo("2x4,dpair=1");
	unsigned int mode;
	u32 id, s, d;

	CHECK(!fm_d_link_id(t, 0, 1, 0, &id));
	CHECK(!fm_link_set_state(t, id, false));
	for (s = 0; s < 8; s++) {
		for (d = 0; d < 8; d++) {
			bool cut = s / 4 != d / 4;

			CHECK_EQ(route_err(t, s, d, PERCS_ROUTE_DIRECT, 0),
				 cut ? -EHOSTUNREACH : 0);
			CHECK_EQ(route_err(t, s, d, PERCS_ROUTE_DIRECT_STRIPED,
					   0), cut ? -EHOSTUNREACH : 0);
			CHECK_EQ(fm_route_count(t, s, d,
						PERCS_ROUTE_DIRECT_STRIPED, 0),
				 cut ? 0 : 1);
		}
	}
	CHECK(!fm_link_set_state(t, id, true));
	for (mode = 0; mode < MODES; mode++)
		if (mode != PERCS_ROUTE_SW_INDIRECT &&
		    mode != PERCS_ROUTE_HW_INDIRECT)
			CHECK_EQ(route_err(t, 1, 6, mode, 0), 0);
	tu_free(t);
}

/*
 * Three supernodes: the D links between 0 and 1 go down; direct routes
 * between them are gone, indirect ones through 2 remain; then the links
 * between 0 and 2 go too and supernode 0 is cut off from 1 in every mode.
 */
FM_TEST(fail_indirect_survives_direct)
{
	struct fm_topology *t = tu_topo("3x4");
	struct fm_route r;
	char why[128];
	u32 s, d;

	set_d_links(t, 0, 1, false);
	for (s = 0; s < 4; s++) {
		for (d = 4; d < 8; d++) {
			CHECK_EQ(route_err(t, s, d, PERCS_ROUTE_DIRECT, 0),
				 -EHOSTUNREACH);
			CHECK_EQ(route_err(t, d, s, PERCS_ROUTE_DIRECT, 0),
				 -EHOSTUNREACH);
			CHECK(!fm_route(t, s, d, PERCS_ROUTE_HW_INDIRECT, 0,
					NULL, &r) && r.via_sn == 2 &&
			      tu_route_ok(t, s, d, &r, why, sizeof(why)));
			CHECK(!fm_route(t, s, d, PERCS_ROUTE_SW_INDIRECT, 2,
					NULL, &r) &&
			      tu_route_ok(t, s, d, &r, why, sizeof(why)));
			CHECK(!fm_route(t, s, d, PERCS_ROUTE_DIRECT_STRIPED, 0,
					NULL, &r) && r.via_sn == 2);
			CHECK_EQ(fm_route_count(t, s, d,
						PERCS_ROUTE_DIRECT_STRIPED, 0),
				 1);
		}
	}
	/* supernodes 1 and 2 and hubs within 0 are not affected */
	CHECK_EQ(route_err(t, 5, 9, PERCS_ROUTE_DIRECT, 0), 0);
	CHECK_EQ(route_err(t, 0, 3, PERCS_ROUTE_DIRECT, 0), 0);
	set_d_links(t, 0, 2, false);
	for (s = 0; s < 4; s++) {
		for (d = 4; d < 12; d++) {
			unsigned int mode;

			for (mode = 0; mode < MODES; mode++) {
				u32 arg = mode == PERCS_ROUTE_SW_INDIRECT ?
					  3 - d / 4 : 0;

				CHECK_CTX(route_err(t, s, d, mode, arg) ==
					  -EHOSTUNREACH, "%u->%u mode %u", s, d,
					  mode);
				CHECK_EQ(fm_route_count(t, s, d, mode, arg), 0);
			}
		}
	}
	/* back up: all routes again */
	set_d_links(t, 0, 1, true);
	set_d_links(t, 0, 2, true);
	CHECK_EQ(fm_route_count(t, 0, 5, PERCS_ROUTE_DIRECT_STRIPED, 0),
		 32 + 1);
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), 0);
	tu_free(t);
}

/*
 * An L link goes down: the direct route between its two hubs is gone but
 * indirect ones (L-D-L-D-L through another supernode) remain; routes to
 * other supernodes avoid D links ending on the unreachable neighbour.
 */
FM_TEST(fail_l_link_reroutes)
{
	struct fm_topology *t = tu_topo("3x4");
	struct fm_route r;
	char why[128];
	u32 id, d, k;

	CHECK(!fm_l_link_id(t, 0, 1, &id));
	CHECK(!fm_link_set_state(t, id, false));
	CHECK_EQ(route_err(t, 0, 1, PERCS_ROUTE_DIRECT, 0), -EHOSTUNREACH);
	CHECK_EQ(route_err(t, 1, 0, PERCS_ROUTE_DIRECT, 0), -EHOSTUNREACH);
	CHECK(!fm_route(t, 0, 1, PERCS_ROUTE_HW_INDIRECT, 0, NULL, &r) &&
	      r.route_class == FM_ROUTE_INTRA_SN && r.via_sn != FM_NO_SN &&
	      tu_route_ok(t, 0, 1, &r, why, sizeof(why)));
	CHECK_EQ(fm_route_count(t, 0, 1, PERCS_ROUTE_DIRECT_STRIPED, 0), 2);
	CHECK_EQ(route_err(t, 0, 2, PERCS_ROUTE_DIRECT, 0), 0);
	for (d = 4; d < 12; d++) {
		struct fm_route_iter it = { 0 };

		while (!fm_route_next(t, 0, d, PERCS_ROUTE_DIRECT_STRIPED, 0,
				      &it, &r)) {
			CHECK(tu_route_ok(t, 0, d, &r, why, sizeof(why)));
			for (k = 0; k < r.nr_hops; k++)
				CHECK(r.hop[k].link != id);
		}
		/* 32 copies per pair, 8 of them end on hub 1 */
		CHECK_EQ(fm_route_count(t, 0, d, PERCS_ROUTE_DIRECT_STRIPED, 0),
			 24 + 1);
	}
	tu_free(t);
}

/*
 * Random sets of links down, checked against a brute-force oracle: a
 * direct route exists exactly when one over some copy has all its links
 * up, and hw_direct's is as short as the shortest of those; every route
 * of every mode is valid and avoids down links; counts, lists and the
 * round robin agree; an indirect route is missing only when its part to
 * the intermediate supernode or the direct part from there is.
 */
static void check_random_failures(const char *spec, u32 percent, u32 seed)
{
	struct fm_topology *t = tu_topo(spec);
	u32 N = t->nr_hubs, H = t->hubs_per_sn, S = t->nr_supernodes;
	u32 x = seed, id, s, d, m, usable, down = 0;
	struct fm_route r;
	char why[128];

	for (id = 0; id < t->nr_links; id++) {
		if (tu_rand(&x) % 100 < percent) {
			CHECK(!fm_link_set_state(t, id, false));
			down++;
		}
	}
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), down);
	for (s = 0; s < N; s++) {
		for (d = 0; d < N; d++) {
			int best = s == d ? 0 :
				   tu_shortest_direct(t, s, d, &usable);
			int ret = fm_route_direct(t, s, d, &r);
			unsigned int mode;

			if (best < 0) {
				CHECK_CTX(ret == -EHOSTUNREACH,
					  "%s %u%% %u->%u: %d", spec, percent,
					  s, d, ret);
			} else {
				CHECK_CTX(!ret && r.nr_hops == best &&
					  tu_route_ok(t, s, d, &r, why,
						      sizeof(why)),
					  "%s %u%% %u->%u: %d %u hops, best %d %s",
					  spec, percent, s, d, ret, r.nr_hops,
					  best, why);
			}
			for (mode = 0; mode < MODES; mode++) {
				struct fm_route_iter it = { 0 };
				struct fm_route_cursor cur = { 0, 0 };
				u32 n = 0, nd = 0, k;
				int cnt;

				if (mode == PERCS_ROUTE_SW_INDIRECT)
					continue;
				while (!fm_route_next(t, s, d, mode, 0, &it,
						      &r)) {
					CHECK_CTX(tu_route_ok(t, s, d, &r, why,
							      sizeof(why)),
						  "%s %u->%u mode %u: %s", spec,
						  s, d, mode, why);
					nd += r.via_sn == FM_NO_SN;
					n++;
				}
				cnt = fm_route_count(t, s, d, mode, 0);
				CHECK_EQ(cnt, n);
				if (mode == PERCS_ROUTE_DIRECT_STRIPED && s != d)
					CHECK_EQ(nd, best < 0 ? 0 : usable);
				for (k = 0; k < 3; k++) {
					int e = fm_route(t, s, d, mode, 0, &cur,
							 &r);

					CHECK_CTX(n ? !e && tu_route_ok(t, s, d,
						  &r, why, sizeof(why)) :
						  e == -EHOSTUNREACH,
						  "%s %u->%u mode %u: %d with %u routes",
						  spec, s, d, mode, e, n);
				}
			}
			for (m = 0; m < S && s != d; m++) {
				struct fm_route leg;
				u32 y;

				if (m == s / H || m == d / H)
					continue;
				ret = fm_route(t, s, d, PERCS_ROUTE_SW_INDIRECT,
					       m, NULL, &r);
				if (!ret) {
					CHECK(tu_route_ok(t, s, d, &r, why,
							  sizeof(why)) &&
					      r.via_sn == m);
					continue;
				}
				CHECK_EQ(ret, -EHOSTUNREACH);
				if (fm_route_to_sn(t, s, m, &leg))
					continue;
				y = leg.hop[leg.nr_hops - 1].to_hub;
				CHECK_CTX(tu_shortest_direct(t, y, d, &usable) < 0,
					  "%s %u->%u via %u: refused but %u->%u has a route",
					  spec, s, d, m, y, d);
			}
		}
	}
	tu_free(t);
}

FM_TEST(fail_random_links_oracle)
{
	check_random_failures("2x4", 30, 1);
	check_random_failures("3x4", 10, 2);
	check_random_failures("3x4", 60, 3);
	check_random_failures("5x8", 20, 4);
	check_random_failures("7x2,dpair=2", 25, 5);
	check_random_failures("9x12", 5, 6);
	check_random_failures("17x1", 40, 7);
	check_random_failures("4x32", 15, 8);
}

/* Links down and up again in any order: the same routes as at start. */
FM_TEST(fail_up_again_restores_routes)
{
	struct fm_topology *t = tu_topo("5x4"), *fresh = tu_topo("5x4");
	u32 x = 99, id, s, d, k;
	unsigned int mode;

	for (k = 0; k < 3 * t->nr_links; k++) {
		id = tu_rand(&x) % t->nr_links;
		CHECK(!fm_link_set_state(t, id, tu_rand(&x) % 2));
	}
	for (id = 0; id < t->nr_links; id++)
		CHECK(!fm_link_set_state(t, id, true));
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), 0);
	for (s = 0; s < t->nr_hubs; s++) {
		for (d = 0; d < t->nr_hubs; d++) {
			for (mode = 0; mode < MODES; mode++) {
				struct fm_route_iter i1 = { 0 }, i2 = { 0 };
				struct fm_route r1, r2;
				int e1, e2;
				u32 arg = mode == PERCS_ROUTE_SW_INDIRECT ?
					  4 - (s / 4 == 4 || d / 4 == 4) -
					  (s / 4 == 3 || d / 4 == 3) : 0;

				do {
					e1 = fm_route_next(t, s, d, mode, arg,
							   &i1, &r1);
					e2 = fm_route_next(fresh, s, d, mode,
							   arg, &i2, &r2);
					CHECK_CTX(e1 == e2 && (e1 ||
						  !memcmp(&r1, &r2, sizeof(r1))),
						  "%u->%u mode %u", s, d, mode);
				} while (!e1 && !e2);
			}
		}
	}
	tu_free(t);
	tu_free(fresh);
}
