// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: link states and the ISR route tables.
 *
 * Section VI: routing uses static route tables in every ISR, set up at
 * initialization and adjusted as links go down or come up; the HFI side
 * of a hub uses source route tables, every port per-port tables, with
 * separate tables for inter- and intra-supernode routes.  The model keeps
 * what those tables hold without their copies:
 *
 *  - intra-supernode table, one per hub (struct fm_rtab.hub_l_up): for
 *    every hub index of the supernode, whether its L port leads there.
 *    The port number itself follows from the indices (fm_l_port()).  A
 *    hub's source and per-port intra tables are the same table: an
 *    intra-supernode route is one L hop from wherever the packet is.
 *  - inter-supernode table, one per pair of supernodes
 *    (struct fm_rtab.pair_live): which of the pair's D links are up.  In
 *    hardware every hub of the supernode holds a copy, turned into its
 *    own ports: for a link that ends on the hub, its D port; for any
 *    other, the L port to the hub it ends on.  The source table of a hub
 *    is that table filtered by the hub's intra table (a link whose end
 *    the hub cannot reach in one L hop is no exit for it); route.c does
 *    that filtering with a few word operations per packet.
 *
 * Sizes: one bit per link, mask_words u64 per pair of supernodes and one
 * u32 per hub; for 513 x 32 hubs (d = 1) about 49 KiB + 1 MiB + 64 KiB.
 * Building them is O(links + pairs * mask_words).  A link state change
 * updates one bit of the link bitmap and one bit of a table (two hubs'
 * intra tables for an L link, one pair's entry for a D link): O(1).
 *
 * The routing fast path (struct fm_rt_fast) derives from them what
 * fm_route() reads per packet: the route choices of every pair of hubs
 * (2 * nr_hubs^2 bytes, up to FM_RT_FAST_MAX_HUBS hubs) and of every hub
 * into every supernode, the L hops and D ports; route.c fills the choices
 * and recomputes those a link state change affects: 2H^2 + 2H for a D
 * link, about 4 * nr_hubs for an L link.
 * Every route computed afterwards sees it.
 */
#include "topology.h"

/* Bits 0..n-1 of a u32 (n <= 32). */
static u32 fm_low_bits32(u32 n)
{
	return n >= 32 ? 0xffffffffU : (1U << n) - 1;
}

/* Set bits 0..nbits-1 of a bitmap of u64 words. */
static void fm_fill_bits(u64 *map, u32 nbits)
{
	u32 w;

	for (w = 0; w < nbits / 64; w++)
		map[w] = ~0ULL;
	if (nbits % 64)
		map[nbits / 64] = (1ULL << (nbits % 64)) - 1;
}

static void fm_rt_fast_free(struct fm_rt_fast *f)
{
	if (!f)
		return;
	fm_free(f->direct);
	fm_free(f->to_sn);
	fm_free(f->lhop);
	fm_free(f->dport);
	fm_free(f);
}

/*
 * The fast path's tables: the L hops and D ports from the wiring, the
 * choice tables (up to FM_RT_FAST_MAX_HUBS hubs) by route.c.
 */
static struct fm_rt_fast *fm_rt_fast_alloc(const struct fm_topology *t)
{
	u32 H = t->hubs_per_sn, N = t->nr_hubs, i, j, q, id;
	struct fm_rt_fast *f = fm_calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->lhop = fm_calloc((size_t)H * H, sizeof(*f->lhop));
	f->dport = fm_calloc(t->d_ports_per_sn + 1, sizeof(*f->dport));
	if (N <= FM_RT_FAST_MAX_HUBS) {
		f->direct = fm_calloc((size_t)N * N, sizeof(u16));
		f->to_sn = fm_calloc((size_t)N * t->nr_supernodes,
				     sizeof(u16));
		if (!f->direct || !f->to_sn)
			goto fail;
	}
	if (!f->lhop || !f->dport)
		goto fail;
	for (i = 0; i < H; i++) {
		for (j = 0; j < H; j++) {
			struct fm_rt_lhop *e = &f->lhop[i * H + j];

			if (i == j)
				continue;
			fm_l_link_id(t, i, j, &id);
			e->tri = id;
			e->link_class = fm_l_link_class(t, i, j);
			e->out_port = fm_l_port(t, i, j);
			e->in_port = fm_l_port(t, j, i);
		}
	}
	for (q = 0; q < t->d_ports_per_sn; q++) {
		f->dport[q].index = q % H;
		f->dport[q].port = FM_PORT_D + q / H;
	}
	return f;
fail:
	fm_rt_fast_free(f);
	return NULL;
}

/**
 * fm_topo_alloc_tables() - build the route tables, every link up
 * @t: a topology from fm_topo_init() or fm_topo_init_spec(), without
 *	tables
 *
 * Allocates (may sleep in the kernel); fm_topo_free_tables() releases.
 *
 * Return: 0; -EBUSY if @t already has tables; -ENOMEM.
 */
int fm_topo_alloc_tables(struct fm_topology *t)
{
	u32 S = t->nr_supernodes, pairs = S * (S - 1) / 2, p, h;
	struct fm_rtab *rt;

	if (t->rt)
		return -EBUSY;
	rt = fm_calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rt->link_up = fm_calloc(FM_DIV_ROUND_UP(t->nr_links, 64) + 1,
				sizeof(u64));
	rt->pair_live = fm_calloc((size_t)pairs * t->mask_words + 1,
				  sizeof(u64));
	rt->hub_l_up = fm_calloc(t->nr_hubs, sizeof(u32));
	rt->fast = fm_rt_fast_alloc(t);
	if (!rt->link_up || !rt->pair_live || !rt->hub_l_up || !rt->fast) {
		fm_free(rt->link_up);
		fm_free(rt->pair_live);
		fm_free(rt->hub_l_up);
		fm_rt_fast_free(rt->fast);
		fm_free(rt);
		return -ENOMEM;
	}
	fm_fill_bits(rt->link_up, t->nr_links);
	for (p = 0; p < pairs; p++)
		fm_fill_bits(&rt->pair_live[(size_t)p * t->mask_words],
			     t->d_links_per_pair);
	for (h = 0; h < t->nr_hubs; h++)
		rt->hub_l_up[h] = fm_low_bits32(t->hubs_per_sn);
	t->rt = rt;
	fm_rt_fast_build(t);
	return 0;
}

/**
 * fm_topo_free_tables() - release the route tables
 * @t: the topology; afterwards it routes as if every link were up
 */
void fm_topo_free_tables(struct fm_topology *t)
{
	struct fm_rtab *rt = t->rt;

	if (!rt)
		return;
	t->rt = NULL;
	fm_free(rt->link_up);
	fm_free(rt->pair_live);
	fm_free(rt->hub_l_up);
	fm_rt_fast_free(rt->fast);
	fm_free(rt);
}

/**
 * fm_link_is_up() - state of one link
 * @t: the topology
 * @id: link id
 *
 * Return: true if the link is up (every link of a topology without
 * tables), false if it is down or @id is not a link.
 */
bool fm_link_is_up(const struct fm_topology *t, u32 id)
{
	if (id >= t->nr_links)
		return false;
	if (!t->rt)
		return true;
	return t->rt->link_up[id / 64] >> (id % 64) & 1;
}

/**
 * fm_link_set_state() - take a link down or bring it up
 * @t: the topology, with tables
 * @id: link id
 * @up: the new state
 *
 * Adjusts the route tables (rtable.c: O(1) for the link states, up to
 * O(nr_hubs) route choices recomputed for the fast path) and increments
 * &fm_topology.generation when the state changes; setting the state a
 * link already has changes nothing.  Routes computed afterwards avoid the
 * link while it is down.
 *
 * Return: 0; -EINVAL for an id outside the topology; -EOPNOTSUPP for a
 * topology without tables.
 */
int fm_link_set_state(struct fm_topology *t, u32 id, bool up)
{
	struct fm_rtab *rt = t->rt;
	struct fm_link_info li;
	u64 bit = 1ULL << (id % 64);

	if (id >= t->nr_links)
		return -EINVAL;
	if (!rt)
		return -EOPNOTSUPP;
	if (!!(rt->link_up[id / 64] & bit) == up)
		return 0;
	fm_link_info(t, id, &li);
	if (up) {
		rt->link_up[id / 64] |= bit;
		rt->nr_down[li.link_class]--;
	} else {
		rt->link_up[id / 64] &= ~bit;
		rt->nr_down[li.link_class]++;
	}
	if (li.link_class == FM_LINK_D) {
		u32 a = fm_hub_supernode(t, li.hub[0]);
		u32 b = fm_hub_supernode(t, li.hub[1]);
		u64 *m = &rt->pair_live[(size_t)fm_sn_pair(t, a, b) *
					t->mask_words + li.copy / 64];

		if (up)
			*m |= 1ULL << (li.copy % 64);
		else
			*m &= ~(1ULL << (li.copy % 64));
		fm_rt_fast_pair_changed(t, a, b);
	} else {
		u32 bit0 = 1U << fm_hub_index(t, li.hub[0]);
		u32 bit1 = 1U << fm_hub_index(t, li.hub[1]);

		if (up) {
			rt->hub_l_up[li.hub[0]] |= bit1;
			rt->hub_l_up[li.hub[1]] |= bit0;
		} else {
			rt->hub_l_up[li.hub[0]] &= ~bit1;
			rt->hub_l_up[li.hub[1]] &= ~bit0;
		}
		fm_rt_fast_hub_changed(t, li.hub[0]);
		fm_rt_fast_hub_changed(t, li.hub[1]);
	}
	t->generation++;
	return 0;
}

/**
 * fm_links_down() - how many links of a class are down
 * @t: the topology
 * @link_class: enum fm_link_class, or %FM_LINK_NR_CLASSES for all
 *
 * Return: the count (0 without tables or for a bad class).
 */
u32 fm_links_down(const struct fm_topology *t, unsigned int link_class)
{
	const struct fm_rtab *rt = t->rt;

	if (!rt)
		return 0;
	if (link_class == FM_LINK_NR_CLASSES)
		return rt->nr_down[FM_LINK_LL] + rt->nr_down[FM_LINK_LR] +
		       rt->nr_down[FM_LINK_D];
	return link_class < FM_LINK_NR_CLASSES ? rt->nr_down[link_class] : 0;
}

/**
 * fm_rt_l_up() - a hub's intra-supernode route table
 * @t: the topology
 * @hub: a hub of the topology
 *
 * Return: bit j set when hub index j of the hub's supernode is the hub
 * itself or reachable over an L link that is up.
 */
u32 fm_rt_l_up(const struct fm_topology *t, u32 hub)
{
	if (!t->rt)
		return fm_low_bits32(t->hubs_per_sn);
	return t->rt->hub_l_up[hub];
}

/**
 * fm_rt_pair_live() - the inter-supernode route table entry of a pair
 * @t: the topology
 * @sn_a: one supernode
 * @sn_b: another supernode of the topology
 * @mask: out: &fm_topology.mask_words words, bit c set when copy c of
 *	the pair's D link is up
 */
void fm_rt_pair_live(const struct fm_topology *t, u32 sn_a, u32 sn_b,
		     u64 *mask)
{
	if (!t->rt) {
		fm_fill_bits(mask, t->d_links_per_pair);
		return;
	}
	memcpy(mask, &t->rt->pair_live[(size_t)fm_sn_pair(t, sn_a, sn_b) *
				       t->mask_words],
	       t->mask_words * sizeof(u64));
}
