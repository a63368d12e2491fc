// SPDX-License-Identifier: GPL-2.0
/*
 * The routing fast path (struct fm_rt_fast) against the computation it
 * replaces: with the tables and without them (rt->fast set aside), every
 * mode gives the same routes, the same errors and the same cursor
 * updates, with every link up and after random link failures and
 * repairs.
 */
#include "fm_topo_util.h"

#define MODES (PERCS_ROUTE_MAX + 1)

static bool same_route(const struct fm_route *x, const struct fm_route *y)
{
	return !memcmp(x, y, sizeof(*x));
}

/* Compare one pair in every mode; return the number of differences. */
static u32 compare_pair(struct fm_topology *t, u32 s, u32 d, u32 seed)
{
	struct fm_rt_fast *fast = t->rt->fast;
	struct fm_route_cursor c1, c2;
	struct fm_route r1, r2;
	u32 S = t->nr_supernodes, m, k, bad = 0;
	unsigned int mode;
	int e1, e2;

	for (mode = 0; mode < MODES; mode++) {
		struct fm_route_iter i1 = { 0 }, i2 = { 0 };

		fm_route_cursor_init(&c1, seed);
		fm_route_cursor_init(&c2, seed);
		for (k = 0; k < 6; k++) {
			u32 arg = (s + d + k) % S;

			e1 = fm_route(t, s, d, mode, arg, &c1, &r1);
			t->rt->fast = NULL;
			e2 = fm_route(t, s, d, mode, arg, &c2, &r2);
			t->rt->fast = fast;
			bad += e1 != e2 || !same_route(&r1, &r2) ||
			       c1.next != c2.next || c1.seed != c2.seed;
		}
		do {
			e1 = fm_route_next(t, s, d, mode, (s + d) % S, &i1,
					   &r1);
			t->rt->fast = NULL;
			e2 = fm_route_next(t, s, d, mode, (s + d) % S, &i2,
					   &r2);
			t->rt->fast = fast;
			bad += e1 != e2 || i1.pos != i2.pos ||
			       !same_route(&r1, &r2);
		} while (!e1 && !e2);
	}
	for (m = 0; m < S && s == 0; m++) {
		e1 = fm_route_to_sn(t, d, m, &r1);
		t->rt->fast = NULL;
		e2 = fm_route_to_sn(t, d, m, &r2);
		t->rt->fast = fast;
		bad += e1 != e2 || !same_route(&r1, &r2);
	}
	return bad;
}

static u32 compare_all(struct fm_topology *t, u32 seed)
{
	u32 s, d, bad = 0;

	for (s = 0; s < t->nr_hubs; s++)
		for (d = 0; d < t->nr_hubs; d++)
			bad += compare_pair(t, s, d, seed + s * 31 + d);
	return bad;
}

static void check_fast(const char *spec, u32 percent, u32 seed)
{
	struct fm_topology *t = tu_topo(spec);
	u32 x = seed, id, round;

	CHECK(t->rt->fast && t->rt->fast->direct);
	CHECK_CTX(compare_all(t, seed) == 0, "%s all up", spec);
	for (round = 0; round < 3; round++) {
		/* links go down, some come back: incremental updates */
		for (id = 0; id < t->nr_links; id++)
			if (tu_rand(&x) % 100 < percent)
				CHECK(!fm_link_set_state(t, id,
							 round == 2 &&
							 tu_rand(&x) % 2));
		CHECK_CTX(compare_all(t, seed + round) == 0, "%s %u%% round %u",
			  spec, percent, round);
	}
	tu_free(t);
}

FM_TEST(fast_tables_match_computed_choice)
{
	check_fast("2x4", 25, 1);
	check_fast("3x8", 15, 2);
	check_fast("5x4", 30, 3);
	check_fast("4x8,dpair=2", 20, 4);
	check_fast("7x2,dpair=2", 25, 5);
	check_fast("17x1", 30, 6);
	check_fast("9x12", 5, 7);
	check_fast("2x32", 10, 8);
	check_fast("33x2", 10, 9);
}

/*
 * The comparison can fail: one wrong entry of each choice table is seen,
 * and so is an entry left stale by a link change the tables missed.
 */
FM_TEST(fast_tables_wrong_entry_is_caught)
{
	struct fm_topology *t = tu_topo("3x8");
	struct fm_rt_fast *f = t->rt->fast;
	u32 N = t->nr_hubs, S = t->nr_supernodes, s = 1, d = 19, id, c;
	u16 save;

	save = f->direct[s * N + d];
	f->direct[s * N + d] = (save + 1) % t->d_links_per_pair;
	CHECK(compare_pair(t, s, d, 1) > 0);
	f->direct[s * N + d] = FM_RT_NONE;
	CHECK(compare_pair(t, s, d, 1) > 0);
	f->direct[s * N + d] = save;
	CHECK_EQ(compare_pair(t, s, d, 1), 0);

	save = f->to_sn[s * S + 2];
	f->to_sn[s * S + 2] = (save + 1) % t->d_links_per_pair;
	CHECK(compare_pair(t, 0, s, 1) > 0);
	f->to_sn[s * S + 2] = save;
	CHECK_EQ(compare_all(t, 1), 0);

	/* a D link goes down behind the tables' back */
	c = f->direct[s * N + d];
	CHECK(!fm_d_link_id(t, 0, 2, c, &id));
	t->rt->fast = NULL;
	CHECK(!fm_link_set_state(t, id, false));
	t->rt->fast = f;
	CHECK(compare_all(t, 1) > 0);
	tu_free(t);
}

/* Sizes: the choice tables up to FM_RT_FAST_MAX_HUBS hubs, not beyond. */
FM_TEST(fast_tables_size_limit)
{
	struct fm_topology *t = tu_topo("64x32"), *big = tu_topo("65x32");

	CHECK(t->nr_hubs == FM_RT_FAST_MAX_HUBS && t->rt->fast->direct &&
	      t->rt->fast->to_sn);
	CHECK(big->rt->fast && !big->rt->fast->direct &&
	      !big->rt->fast->to_sn && big->rt->fast->lhop);
	CHECK_EQ(compare_pair(t, 5, 2000, 3), 0);
	CHECK_EQ(compare_pair(big, 5, 2000, 3), 0);
	tu_free(t);
	tu_free(big);
}
