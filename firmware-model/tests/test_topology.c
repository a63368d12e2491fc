// SPDX-License-Identifier: GPL-2.0
/* Unit tests of firmware-model/topology.c. */
#include "topology.h"
#include "fm_test.h"

static struct fm_topology topo(u32 nr_supernodes, u32 hubs_per_sn)
{
	struct fm_topology t;
	char err[128];
	int ret;

	memset(&t, 0, sizeof(t));
	ret = fm_topo_init(&t, nr_supernodes, hubs_per_sn, err, sizeof(err));
	CHECK_CTX(ret == 0, "%ux%u: %s", nr_supernodes, hubs_per_sn, err);
	return t;
}

/*
 * The topologies the invariant tests sweep: every valid number of
 * supernodes up to 64 for 1, 2, 4, 8, 12 (partial drawers) and 32 hubs per
 * supernode, and a few large systems.
 */
static const u32 sweep_hubs[] = { 1, 2, 4, 8, 12, 32 };
static const u32 sweep_large[][2] = {
	{ 100, 7 }, { 257, 32 }, { 289, 32 }, { 511, 32 }, { 512, 32 },
	{ 513, 32 },
};

static struct { u32 s, h; } sweep[512];
static unsigned int sweep_len;

static unsigned int sweep_build(void)
{
	unsigned int i, s;

	if (sweep_len)
		return sweep_len;
	for (i = 0; i < FM_ARRAY_SIZE(sweep_hubs); i++) {
		u32 h = sweep_hubs[i];

		for (s = 1; s <= 64 && s <= 16 * h + 1; s++) {
			sweep[sweep_len].s = s;
			sweep[sweep_len].h = h;
			sweep_len++;
		}
	}
	for (i = 0; i < FM_ARRAY_SIZE(sweep_large); i++) {
		sweep[sweep_len].s = sweep_large[i][0];
		sweep[sweep_len].h = sweep_large[i][1];
		sweep_len++;
	}
	return sweep_len;
}

#define FOR_EACH_SWEEP(t, i)						\
	for ((i) = 0; (i) < sweep_build() &&				\
	     ((t) = topo(sweep[i].s, sweep[i].h), 1); (i)++)

static u32 max_u32(u32 a, u32 b)
{
	return a > b ? a : b;
}

static u32 min_u32(u32 a, u32 b)
{
	return a < b ? a : b;
}

FM_TEST(topo_init_default_2x4)
{
	struct fm_topology t = topo(2, 4);

	CHECK_EQ(t.nr_supernodes, 2);
	CHECK_EQ(t.hubs_per_sn, 4);
	CHECK_EQ(t.nr_hubs, 8);
	CHECK_EQ(t.d_links_per_pair, 64);
	CHECK_EQ(t.d_ports_per_sn, 64);
	CHECK_EQ(fm_hub_supernode(&t, 5), 1);
	CHECK_EQ(fm_hub_index(&t, 5), 1);
	CHECK_EQ(fm_hub_supernode(&t, 3), 0);
	CHECK_EQ(fm_hub_index(&t, 3), 3);
}

FM_TEST(topo_init_accepts_limits)
{
	static const u32 cases[][3] = {
		/* supernodes, hubs per supernode, D links per pair */
		{ 1, 1, 0 }, { 1, 32, 0 }, { 2, 1, 16 }, { 3, 1, 8 },
		{ 17, 1, 1 }, { 33, 2, 1 }, { 65, 4, 1 }, { 5, 8, 32 },
		{ 2, 32, 512 }, { 257, 32, 2 }, { 258, 32, 1 },
		{ 512, 32, 1 }, { 513, 32, 1 },
	};
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(cases); i++) {
		struct fm_topology t = topo(cases[i][0], cases[i][1]);

		CHECK_CTX(t.nr_hubs == cases[i][0] * cases[i][1] &&
			  t.d_links_per_pair == cases[i][2] &&
			  t.d_ports_per_sn == (cases[i][0] - 1) * cases[i][2],
			  "%ux%u: %u per pair", cases[i][0], cases[i][1],
			  t.d_links_per_pair);
	}
}

/* fm_topo_init(s, h) must fail with a message naming @want. */
static void check_rejected(u32 s, u32 h, const char *want)
{
	struct fm_topology t;
	char err[256];
	int ret;

	memset(&t, 0xa5, sizeof(t));
	err[0] = '\0';
	ret = fm_topo_init(&t, s, h, err, sizeof(err));
	CHECK_CTX(ret == -EINVAL, "%ux%u: returned %d", s, h, ret);
	CHECK_CTX(strstr(err, want), "%ux%u: \"%s\" lacks \"%s\"",
		  s, h, err, want);
	CHECK_CTX(!strchr(err, '\n'), "%ux%u: \"%s\"", s, h, err);
	CHECK_CTX(t.nr_hubs == 0xa5a5a5a5, "%ux%u: topology written", s, h);
}

FM_TEST(topo_init_rejects_hubs_per_supernode)
{
	check_rejected(2, 0, "hubs_per_supernode=0");
	check_rejected(2, 33, "hubs_per_supernode=33");
	check_rejected(2, 40, "a supernode has 1..32 hubs");
	check_rejected(0, 0, "hubs_per_supernode=0");
	check_rejected(2, 0xffffffff, "hubs_per_supernode=4294967295");
}

FM_TEST(topo_init_rejects_supernodes)
{
	check_rejected(0, 4, "supernodes=0");
	check_rejected(514, 32, "supernodes=514");
	check_rejected(514, 32, "the system has 1..513 supernodes");
	check_rejected(18, 1, "supernodes=18: at most 17");
	check_rejected(66, 4, "supernodes=66: at most 65");
	check_rejected(34, 2, "with 2 hubs per supernode and 16 D ports per hub");
	check_rejected(0xffffffff, 1, "supernodes=4294967295");
}

FM_TEST(topo_init_message_buffer)
{
	struct fm_topology t;
	char err[8];

	memset(err, 'x', sizeof(err));
	CHECK_EQ(fm_topo_init(&t, 2, 33, err, sizeof(err)), -EINVAL);
	CHECK_EQ(strlen(err), sizeof(err) - 1);
	CHECK_EQ(fm_topo_init(&t, 2, 33, NULL, 0), -EINVAL);
	CHECK_EQ(fm_topo_init(&t, 2, 4, NULL, 0), 0);
	CHECK_EQ(fm_topo_init(&t, 2, 4, err, sizeof(err)), 0);
	CHECK_STR(err, "");
}

FM_TEST(d_links_join_every_pair_symmetrically)
{
	struct fm_topology t;
	unsigned int i;

	FOR_EACH_SWEEP(t, i) {
		u32 a, b, c, d = t.d_links_per_pair, H = t.hubs_per_sn;

		CHECK_CTX(t.nr_supernodes == 1 || d >= 1, "%ux%u",
			  t.nr_supernodes, H);
		for (a = 0; a < t.nr_supernodes; a++) {
			for (b = 0; b < t.nr_supernodes; b++) {
				for (c = 0; c < d && a != b; c++) {
					u32 ha, hb, ha2, hb2;
					int r1 = fm_d_link(&t, a, b, c,
							   &ha, &hb);
					int r2 = fm_d_link(&t, b, a, c,
							   &hb2, &ha2);

					CHECK_CTX(!r1 && !r2 &&
						  ha / H == a && hb / H == b &&
						  ha == ha2 && hb == hb2,
						  "%ux%u: %u-%u copy %u",
						  t.nr_supernodes, H, a, b, c);
				}
			}
		}
	}
}

/* Per-hub D-link counts: at most 16, spread evenly, as fm_hub_d_ports(). */
FM_TEST(d_links_per_hub_at_most_16_and_even)
{
	struct fm_topology t;
	unsigned int i;

	FOR_EACH_SWEEP(t, i) {
		u32 *ports = calloc(t.nr_hubs, sizeof(*ports));
		u32 a, b, c, hub, ha, hb, total = 0;

		for (a = 0; a < t.nr_supernodes; a++)
			for (b = a + 1; b < t.nr_supernodes; b++)
				for (c = 0; c < t.d_links_per_pair; c++) {
					fm_d_link(&t, a, b, c, &ha, &hb);
					ports[ha]++;
					ports[hb]++;
				}
		for (a = 0; a < t.nr_supernodes; a++) {
			u32 lo = 0xffffffff, hi = 0;

			for (hub = a * t.hubs_per_sn;
			     hub < (a + 1) * t.hubs_per_sn; hub++) {
				lo = min_u32(lo, ports[hub]);
				hi = max_u32(hi, ports[hub]);
				total += ports[hub];
				CHECK_CTX(ports[hub] == fm_hub_d_ports(&t, hub),
					  "%ux%u hub %u: %u != %u",
					  t.nr_supernodes, t.hubs_per_sn, hub,
					  ports[hub], fm_hub_d_ports(&t, hub));
			}
			CHECK_CTX(hi <= FM_D_PORTS_PER_HUB && hi - lo <= 1,
				  "%ux%u sn %u: %u..%u ports per hub",
				  t.nr_supernodes, t.hubs_per_sn, a, lo, hi);
		}
		CHECK_CTX(total == t.nr_supernodes * t.d_ports_per_sn,
			  "%ux%u: %u ports", t.nr_supernodes, t.hubs_per_sn,
			  total);
		free(ports);
	}
}

/* fm_hub_d_port() names each wired port's link, and only those. */
FM_TEST(d_link_port_lookup)
{
	struct fm_topology t;
	unsigned int i;

	FOR_EACH_SWEEP(t, i) {
		u32 hub, port, peer, copy, ha, hb;

		for (hub = 0; hub < t.nr_hubs; hub++) {
			u32 n = fm_hub_d_ports(&t, hub);

			for (port = 0; port < FM_D_PORTS_PER_HUB; port++) {
				int ret = fm_hub_d_port(&t, hub, port, &peer,
							&copy);

				if (port >= n) {
					CHECK_CTX(ret == -ENOENT,
						  "%ux%u hub %u port %u: %d",
						  t.nr_supernodes,
						  t.hubs_per_sn, hub, port,
						  ret);
					continue;
				}
				CHECK_CTX(!ret && !fm_d_link(&t,
					  fm_hub_supernode(&t, hub), peer,
					  copy, &ha, &hb) && ha == hub,
					  "%ux%u hub %u port %u",
					  t.nr_supernodes, t.hubs_per_sn, hub,
					  port);
			}
			CHECK(fm_hub_d_port(&t, hub, FM_D_PORTS_PER_HUB,
					    &peer, &copy) == -EINVAL);
		}
		CHECK(fm_hub_d_port(&t, t.nr_hubs, 0, &peer, &copy) ==
		      -EINVAL);
		CHECK(fm_hub_d_ports(&t, t.nr_hubs) == 0);
	}
}

/*
 * The copies of one pair's link spread over the hubs: a hub has at most
 * ceil(d / H) links to any one supernode (d <= H: distinct hubs; d = 1:
 * a hub's links reach distinct supernodes).
 */
FM_TEST(d_link_copies_spread_over_hubs)
{
	struct fm_topology t;
	unsigned int i;

	FOR_EACH_SWEEP(t, i) {
		u32 H = t.hubs_per_sn, d = t.d_links_per_pair;
		u32 limit = (d + H - 1) / H;
		u32 *at_a = calloc(H, sizeof(u32));
		u32 *at_b = calloc(H, sizeof(u32));
		u32 a, b, c, ha, hb, k;

		for (a = 0; a < t.nr_supernodes; a++) {
			for (b = a + 1; b < t.nr_supernodes; b++) {
				memset(at_a, 0, H * sizeof(u32));
				memset(at_b, 0, H * sizeof(u32));
				for (c = 0; c < d; c++) {
					fm_d_link(&t, a, b, c, &ha, &hb);
					at_a[ha % H]++;
					at_b[hb % H]++;
				}
				for (k = 0; k < H; k++)
					CHECK_CTX(at_a[k] <= limit &&
						  at_b[k] <= limit,
						  "%ux%u: %u-%u hub index %u",
						  t.nr_supernodes, H, a, b, k);
			}
		}
		free(at_a);
		free(at_b);
	}
}

FM_TEST(d_link_rejects_bad_arguments)
{
	struct fm_topology t = topo(3, 4);
	u32 ha = 99, hb = 99;

	CHECK_EQ(fm_d_link(&t, 1, 1, 0, &ha, &hb), -EINVAL);
	CHECK_EQ(fm_d_link(&t, 0, 3, 0, &ha, &hb), -EINVAL);
	CHECK_EQ(fm_d_link(&t, 3, 0, 0, &ha, &hb), -EINVAL);
	CHECK_EQ(fm_d_link(&t, 0, 1, t.d_links_per_pair, &ha, &hb), -EINVAL);
	CHECK_EQ(fm_d_link(&t, 0, 1, 0xffffffff, &ha, &hb), -EINVAL);
	CHECK(ha == 99 && hb == 99);
	t = topo(1, 32);
	CHECK_EQ(fm_d_link(&t, 0, 0, 0, &ha, &hb), -EINVAL);
	CHECK_EQ(fm_hub_d_ports(&t, 0), 0);
}

/* Count a hub's LL and LR neighbours, checking symmetry on the way. */
static void count_l_links(const struct fm_topology *t, u32 hub, u32 *ll,
			  u32 *lr)
{
	u32 sn = fm_hub_supernode(t, hub), other;

	*ll = 0;
	*lr = 0;
	for (other = sn * t->hubs_per_sn;
	     other < (sn + 1) * t->hubs_per_sn; other++) {
		int c = fm_l_link_class(t, hub, other);

		if (other == hub) {
			CHECK_EQ(c, -EINVAL);
			continue;
		}
		CHECK_CTX(c == fm_l_link_class(t, other, hub),
			  "hubs %u %u", hub, other);
		*ll += c == FM_LINK_LL;
		*lr += c == FM_LINK_LR;
	}
}

FM_TEST(l_links_full_supernode_7_ll_24_lr)
{
	struct fm_topology t = topo(3, 32);
	u32 hub, ll, lr;

	for (hub = 0; hub < t.nr_hubs; hub++) {
		count_l_links(&t, hub, &ll, &lr);
		CHECK_CTX(ll == FM_LL_PORTS_PER_HUB && ll == 7 &&
			  lr == FM_LR_PORTS_PER_HUB && lr == 24,
			  "hub %u: %u LL %u LR", hub, ll, lr);
	}
}

FM_TEST(l_links_partial_drawers)
{
	struct fm_topology t = topo(2, 12);
	u32 hub, ll, lr;

	/* Drawer 0 holds hub indices 0..7, drawer 1 indices 8..11. */
	for (hub = 0; hub < t.nr_hubs; hub++) {
		bool first = fm_hub_index(&t, hub) < 8;

		count_l_links(&t, hub, &ll, &lr);
		CHECK_CTX(ll == (first ? 7 : 3) && lr == (first ? 4 : 8),
			  "hub %u: %u LL %u LR", hub, ll, lr);
	}
	t = topo(5, 4);
	for (hub = 0; hub < t.nr_hubs; hub++) {
		count_l_links(&t, hub, &ll, &lr);
		CHECK_CTX(ll == 3 && lr == 0, "hub %u: %u LL %u LR", hub, ll,
			  lr);
	}
}

FM_TEST(l_link_rejects_bad_arguments)
{
	struct fm_topology t = topo(2, 4);

	CHECK_EQ(fm_l_link_class(&t, 1, 1), -EINVAL);
	CHECK_EQ(fm_l_link_class(&t, 3, 4), -EINVAL);
	CHECK_EQ(fm_l_link_class(&t, 7, 8), -EINVAL);
	CHECK_EQ(fm_l_link_class(&t, 8, 7), -EINVAL);
	CHECK_EQ(fm_l_link_class(&t, 0xffffffff, 0), -EINVAL);
	CHECK_EQ(fm_l_link_class(&t, 4, 7), FM_LINK_LL);
}

FM_TEST(link_and_route_class_names)
{
	CHECK_STR(fm_route_mode_name(PERCS_ROUTE_DIRECT), "hw_direct");
	CHECK_STR(fm_route_mode_name(PERCS_ROUTE_DIRECT_STRIPED),
		  "hw_direct_striped");
	CHECK_STR(fm_route_mode_name(PERCS_ROUTE_SW_INDIRECT), "sw_indirect");
	CHECK_STR(fm_route_mode_name(PERCS_ROUTE_HW_INDIRECT), "hw_indirect");
	CHECK_STR(fm_route_mode_name(PERCS_ROUTE_MAX + 1), "?");
	CHECK_STR(fm_link_class_name(FM_LINK_LL), "LL");
	CHECK_STR(fm_link_class_name(FM_LINK_LR), "LR");
	CHECK_STR(fm_link_class_name(FM_LINK_D), "D");
	CHECK_STR(fm_link_class_name(FM_LINK_NR_CLASSES), "?");
	CHECK_STR(fm_link_class_name(0xffffffff), "?");
	CHECK_STR(fm_route_class_name(FM_ROUTE_SAME_HUB), "same-hub");
	CHECK_STR(fm_route_class_name(FM_ROUTE_INTRA_SN), "intra-supernode");
	CHECK_STR(fm_route_class_name(FM_ROUTE_INTER_SN), "inter-supernode");
	CHECK_STR(fm_route_class_name(3), "?");
	/* section VII.A's per-direction channel bandwidths */
	CHECK_EQ(fm_link_class_bw(FM_LINK_LL), 24);
	CHECK_EQ(fm_link_class_bw(FM_LINK_LR), 5);
	CHECK_EQ(fm_link_class_bw(FM_LINK_D), 10);
	CHECK_EQ(fm_link_class_bw(FM_LINK_NR_CLASSES), 0);
}

/* One system with dhub=@u (and dpair=1 when @one): the D-link invariants. */
static void check_dhub(u32 S, u32 H, u32 u, bool one)
{
	struct fm_topo_spec sp = { S, H, one ? 1 : 0, u };
	u32 *ports, a, b, c, ha, hb, hub;
	struct fm_topology t;
	char err[200];

	if (fm_topo_init_spec(&t, &sp, err, sizeof(err))) {
		FM_T_FAILF("%ux%u,dhub=%u: %s", S, H, u, err);
		return;
	}
	CHECK_EQ(t.d_links_per_pair, one ? 1 : u * H / (S - 1));
	ports = calloc(t.nr_hubs, sizeof(u32));
	for (a = 0; a < S; a++) {
		for (b = a + 1; b < S; b++) {
			for (c = 0; c < t.d_links_per_pair; c++) {
				CHECK(!fm_d_link(&t, a, b, c, &ha, &hb));
				ports[ha]++;
				ports[hb]++;
			}
		}
	}
	for (hub = 0; hub < t.nr_hubs; hub++) {
		u32 first = hub - hub % H;

		CHECK_CTX(ports[hub] <= u && ports[hub] + 1 >= ports[first] &&
			  ports[first] + 1 >= ports[hub] &&
			  ports[hub] == fm_hub_d_ports(&t, hub),
			  "%ux%u,dhub=%u%s hub %u: %u ports", S, H, u,
			  one ? ",dpair=1" : "", hub, ports[hub]);
	}
	free(ports);
}

/*
 * Limited D ports (dhub=) and fewer links per pair (dpair=): every pair
 * joined by exactly d links, no hub above its limit, hubs of a supernode
 * within one of each other.
 */
FM_TEST(d_links_dhub_and_dpair)
{
	static const u32 dhubs[] = { 1, 2, 5, 8, 16 };
	static const u32 hubs[] = { 1, 3, 8, 32 };
	unsigned int i, j, k;

	for (i = 0; i < FM_ARRAY_SIZE(dhubs); i++) {
		for (j = 0; j < FM_ARRAY_SIZE(hubs); j++) {
			u32 u = dhubs[i], H = hubs[j];
			u32 sizes[] = { 2, 3, u * H / 2 + 1, u * H + 1 };

			for (k = 0; k < FM_ARRAY_SIZE(sizes); k++) {
				if (sizes[k] < 2 || sizes[k] > 80 ||
				    sizes[k] > u * H + 1)
					continue;
				check_dhub(sizes[k], H, u, false);
				check_dhub(sizes[k], H, u, true);
			}
		}
	}
}

/* Section VII.A's systems: d D links per hub, to d distinct supernodes. */
FM_TEST(d_links_paper_systems)
{
	u32 d;

	for (d = 1; d <= 16; d++) {
		struct fm_topo_spec sp;
		struct fm_topology t;
		char spec[8], err[200];
		u32 hub, p, peer, copy;
		u8 *seen;

		snprintf(spec, sizeof(spec), "d%u", d);
		CHECK_CTX(!fm_topo_parse(spec, &sp, err, sizeof(err)) &&
			  !fm_topo_init_spec(&t, &sp, err, sizeof(err)),
			  "%s: %s", spec, err);
		CHECK_EQ(t.nr_supernodes, 32 * d + 1);
		CHECK_EQ(t.hubs_per_sn, 32);
		CHECK_EQ(t.d_links_per_pair, 1);
		seen = calloc(t.nr_supernodes, 1);
		for (hub = 0; hub < t.nr_hubs; hub++) {
			CHECK_CTX(fm_hub_d_ports(&t, hub) == d, "d=%u hub %u",
				  d, hub);
			memset(seen, 0, t.nr_supernodes);
			for (p = 0; p < d; p++) {
				CHECK(!fm_hub_d_port(&t, hub, p, &peer, &copy));
				CHECK_CTX(!seen[peer] &&
					  peer != fm_hub_supernode(&t, hub),
					  "d=%u hub %u port %u -> %u", d, hub,
					  p, peer);
				seen[peer] = 1;
			}
			CHECK(fm_hub_d_port(&t, hub, d, &peer, &copy) ==
			      (d < 16 ? -ENOENT : -EINVAL));
		}
		free(seen);
	}
}
