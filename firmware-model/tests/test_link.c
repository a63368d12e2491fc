// SPDX-License-Identifier: GPL-2.0
/* Unit tests of firmware-model/link.c and rtable.c: link ids, ports, states. */
#include "fm_topo_util.h"

static const char *const link_specs[] = {
	"1x1", "1x32", "2x1", "2x4", "3x12", "5x8,dpair=3", "17x1", "9x2",
	"2x32", "33x32,dpair=1", "65x4",
};

/*
 * Every link id names one link; from its ends, fm_l_link_id() and
 * fm_d_link_id() give the id back; every link is counted once.
 */
FM_TEST(link_ids_are_a_bijection)
{
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(link_specs); i++) {
		struct fm_topology *t = tu_topo(link_specs[i]);
		u32 id, back, H = t->hubs_per_sn, nl = 0, nd = 0;
		struct fm_link_info li;

		CHECK_EQ(t->nr_links, t->nr_l_links + t->nr_d_links);
		CHECK_EQ(t->nr_l_links, t->nr_supernodes * H * (H - 1) / 2);
		for (id = 0; id < t->nr_links; id++) {
			CHECK(!fm_link_info(t, id, &li));
			CHECK_CTX(li.id == id && li.up && li.hub[0] < li.hub[1] &&
				  li.hub[1] < t->nr_hubs, "%s id %u",
				  link_specs[i], id);
			if (li.link_class == FM_LINK_D) {
				u32 a = li.hub[0] / H, b = li.hub[1] / H, x, y;

				nd++;
				CHECK(!fm_d_link_id(t, a, b, li.copy, &back) &&
				      back == id);
				CHECK(!fm_d_link_id(t, b, a, li.copy, &back) &&
				      back == id);
				CHECK(!fm_d_link(t, a, b, li.copy, &x, &y) &&
				      x == li.hub[0] && y == li.hub[1]);
				CHECK(li.port[0] == fm_d_port(t, a, b, li.copy) &&
				      li.port[1] == fm_d_port(t, b, a, li.copy));
				CHECK_CTX(id >= t->nr_l_links, "%u", id);
			} else {
				nl++;
				CHECK(li.copy == 0 && (int)li.link_class ==
				      fm_l_link_class(t, li.hub[0], li.hub[1]));
				CHECK(!fm_l_link_id(t, li.hub[1], li.hub[0],
						    &back) && back == id);
				CHECK_CTX(id < t->nr_l_links, "%u", id);
			}
		}
		CHECK_EQ(nl, t->nr_l_links);
		CHECK_EQ(nd, t->nr_d_links);
		CHECK_EQ(fm_link_info(t, t->nr_links, &li), -EINVAL);
		CHECK_EQ(fm_link_info(t, 0xffffffff, &li), -EINVAL);
		tu_free(t);
	}
}

/*
 * The ISR ports of every hub: each port carries at most one link, the
 * link's info names that port at that hub, fm_port_link() finds it, and
 * a full supernode's hub uses LL ports 0..6, LR ports 7..30 and as many D
 * ports from 31 on as fm_hub_d_ports() says.
 */
FM_TEST(link_ports_of_every_hub)
{
	unsigned int i;

	for (i = 0; i < FM_ARRAY_SIZE(link_specs); i++) {
		struct fm_topology *t = tu_topo(link_specs[i]);
		u32 hub, port, id, H = t->hubs_per_sn;
		u32 (*owner)[FM_NR_PORTS] = calloc(t->nr_hubs,
						   sizeof(*owner));
		struct fm_link_info li;

		for (id = 0; id < t->nr_links; id++) {
			unsigned int e;

			fm_link_info(t, id, &li);
			for (e = 0; e < 2; e++) {
				u32 *o = &owner[li.hub[e]][li.port[e]];

				CHECK_CTX(!*o, "%s hub %u port %u twice",
					  link_specs[i], li.hub[e], li.port[e]);
				CHECK(li.port[e] < FM_PORT_HFI);
				CHECK(li.link_class == FM_LINK_D ?
				      li.port[e] >= FM_PORT_D :
				      li.link_class == FM_LINK_LR ?
				      li.port[e] >= FM_PORT_LR &&
				      li.port[e] < FM_PORT_D :
				      li.port[e] < FM_PORT_LR);
				*o = id + 1;
			}
		}
		for (hub = 0; hub < t->nr_hubs; hub++) {
			u32 used = 0;

			for (port = 0; port < FM_NR_PORTS; port++) {
				int ret = fm_port_link(t, hub, port, &id);

				if (owner[hub][port]) {
					used++;
					CHECK_CTX(!ret && id + 1 == owner[hub][port],
						  "%s hub %u port %u: %d",
						  link_specs[i], hub, port, ret);
				} else {
					CHECK_CTX(ret == -ENOENT,
						  "%s hub %u port %u: %d",
						  link_specs[i], hub, port, ret);
				}
			}
			CHECK_EQ(used, H - 1 + fm_hub_d_ports(t, hub));
			if (H == 32) {
				for (port = 0; port < FM_PORT_D; port++)
					CHECK(owner[hub][port]);
				for (port = 0; port < FM_D_PORTS_PER_HUB; port++)
					CHECK(!!owner[hub][FM_PORT_D + port] ==
					      (port < fm_hub_d_ports(t, hub)));
			}
			CHECK_EQ(fm_port_link(t, hub, FM_NR_PORTS, &id), -EINVAL);
		}
		CHECK_EQ(fm_port_link(t, t->nr_hubs, 0, &id), -EINVAL);
		free(owner);
		tu_free(t);
	}
}

FM_TEST(link_id_rejects_bad_arguments)
{
	struct fm_topology *t = tu_topo("3x4");
	u32 id = 77;

	CHECK_EQ(fm_l_link_id(t, 1, 1, &id), -EINVAL);
	CHECK_EQ(fm_l_link_id(t, 3, 4, &id), -EINVAL);
	CHECK_EQ(fm_l_link_id(t, 0, 12, &id), -EINVAL);
	CHECK_EQ(fm_d_link_id(t, 1, 1, 0, &id), -EINVAL);
	CHECK_EQ(fm_d_link_id(t, 0, 3, 0, &id), -EINVAL);
	CHECK_EQ(fm_d_link_id(t, 0, 1, t->d_links_per_pair, &id), -EINVAL);
	CHECK_EQ(fm_d_port(t, 0, 0, 0), -EINVAL);
	CHECK_EQ(fm_l_port(t, 0, 4), -EINVAL);
	CHECK_EQ(id, 77);
	tu_free(t);
}

/* Link states: up at start, down and up again, counted, generation moves. */
FM_TEST(link_state_changes)
{
	struct fm_topology *t = tu_topo("3x4");
	struct fm_topology plain;
	u32 l, d, g;
	char err[64];

	CHECK(!fm_l_link_id(t, 1, 2, &l));
	CHECK(!fm_d_link_id(t, 0, 2, 5, &d));
	CHECK(fm_link_is_up(t, l) && fm_link_is_up(t, d));
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), 0);
	g = t->generation;
	CHECK_EQ(fm_link_set_state(t, l, false), 0);
	CHECK_EQ(t->generation, g + 1);
	CHECK_EQ(fm_link_set_state(t, l, false), 0);
	CHECK_EQ(t->generation, g + 1);
	CHECK_EQ(fm_link_set_state(t, d, false), 0);
	CHECK(!fm_link_is_up(t, l) && !fm_link_is_up(t, d));
	CHECK_EQ(fm_links_down(t, FM_LINK_LL), 1);
	CHECK_EQ(fm_links_down(t, FM_LINK_D), 1);
	CHECK_EQ(fm_links_down(t, FM_LINK_LR), 0);
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), 2);
	CHECK_EQ(fm_links_down(t, 7), 0);
	/* the tables say what the link states say */
	CHECK_EQ(fm_rt_l_up(t, 1), 0xf & ~(1U << 2));
	CHECK_EQ(fm_rt_l_up(t, 2), 0xf & ~(1U << 1));
	CHECK_EQ(fm_rt_l_up(t, 3), 0xf);
	{
		u64 m[FM_MASK_WORDS];

		fm_rt_pair_live(t, 2, 0, m);
		CHECK_EQ(m[0], 0xffffffffULL & ~(1ULL << 5));
		fm_rt_pair_live(t, 0, 1, m);
		CHECK_EQ(m[0], 0xffffffffULL);
	}
	CHECK_EQ(fm_link_set_state(t, l, true), 0);
	CHECK_EQ(fm_link_set_state(t, d, true), 0);
	CHECK_EQ(t->generation, g + 4);
	CHECK_EQ(fm_links_down(t, FM_LINK_NR_CLASSES), 0);
	CHECK_EQ(fm_rt_l_up(t, 1), 0xf);
	CHECK_EQ(fm_link_set_state(t, t->nr_links, false), -EINVAL);
	CHECK_EQ(fm_link_is_up(t, t->nr_links), false);
	CHECK_EQ(fm_topo_alloc_tables(t), -EBUSY);
	tu_free(t);

	/* without tables: every link up, no state to change */
	CHECK(!fm_topo_init(&plain, 3, 4, err, sizeof(err)));
	CHECK(!plain.rt && fm_link_is_up(&plain, 0));
	CHECK_EQ(fm_link_set_state(&plain, 0, false), -EOPNOTSUPP);
	CHECK_EQ(fm_links_down(&plain, FM_LINK_NR_CLASSES), 0);
	fm_topo_free_tables(&plain);
	CHECK(!plain.rt);
}

/* The largest system's tables: sizes and a state change at the far end. */
FM_TEST(link_tables_largest_system)
{
	struct fm_topology *t = tu_topo("513x32");
	struct fm_link_info li;

	CHECK_EQ(t->nr_hubs, 16416);
	CHECK_EQ(t->nr_l_links, 513 * 496);
	CHECK_EQ(t->nr_d_links, 513 * 512 / 2);
	CHECK_EQ(t->mask_words, 1);
	CHECK(!fm_link_info(t, t->nr_links - 1, &li));
	CHECK(li.link_class == FM_LINK_D && li.hub[0] / 32 == 511 &&
	      li.hub[1] / 32 == 512);
	CHECK(!fm_link_set_state(t, t->nr_links - 1, false));
	CHECK(!fm_link_is_up(t, t->nr_links - 1));
	CHECK(fm_link_is_up(t, t->nr_links - 2));
	tu_free(t);
}
