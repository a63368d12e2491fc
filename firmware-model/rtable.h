/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: link states and the ISR route tables.
 *
 * Built at start by fm_topo_alloc_tables(), adjusted by
 * fm_link_set_state() as links go down and come up; route.c reads them.
 * The caller serializes fm_link_set_state() against the routing
 * functions (e.g. a rwlock or a seqcount around both).
 */
#ifndef _PERCS_FM_RTABLE_H
#define _PERCS_FM_RTABLE_H

#include "topology.h"

#define FM_MASK_WORDS	(FM_MAX_D_PER_PAIR / 64)

/*
 * The per-hub-pair tables of struct fm_rt_fast (nr_hubs^2 u16) are built
 * for topologies of at most this many hubs (8 MiB); beyond, fm_route()
 * computes the choice per packet from the tables of struct fm_rtab.
 */
#define FM_RT_FAST_MAX_HUBS	2048
#define FM_RT_NONE		0xffff	/* no usable copy (struct fm_rt_fast) */

/**
 * struct fm_rt_lhop - the L link between two hub indices of a supernode
 * @tri: its link id less the supernode's first L link id
 * @link_class: %FM_LINK_LL or %FM_LINK_LR
 * @out_port: ISR port of the first hub
 * @in_port: ISR port of the second hub
 * @reserved: zero
 */
struct fm_rt_lhop {
	u16 tri;
	u8 link_class;
	u8 out_port;
	u8 in_port;
	u8 reserved[3];
};

/**
 * struct fm_rt_dport - D port q of a supernode (topology.c's numbering)
 * @index: the hub index it is on, q mod H
 * @port: its ISR port there, %FM_PORT_D + q / H
 */
struct fm_rt_dport {
	u8 index;
	u8 port;
};

/**
 * struct fm_rt_fast - the routing fast path's tables (route.c)
 * @direct: NULL beyond %FM_RT_FAST_MAX_HUBS hubs, else nr_hubs^2
 *	entries: [s * nr_hubs + t] for hubs of different supernodes, the
 *	copy of their D link the hw_direct route s -> t takes, %FM_RT_NONE
 *	when no direct route is usable (0 within a supernode: unused)
 * @to_sn: NULL with @direct, else nr_hubs * nr_supernodes entries:
 *	[s * nr_supernodes + m], the copy of the D link fm_route_to_sn(s, m)
 *	takes, %FM_RT_NONE when none is usable or m is s's own supernode
 * @lhop: [i * hubs_per_sn + j], the L link from hub index i to j (i != j)
 * @dport: [q], D port q of a supernode, q < d_ports_per_sn
 *
 * Derived from &fm_rtab.pair_live and &fm_rtab.hub_l_up: built by
 * fm_topo_alloc_tables(), the affected entries recomputed by
 * fm_link_set_state().  Model-internal: only route.c and rtable.c (and
 * the unit tests) read them.
 */
struct fm_rt_fast {
	u16 *direct;
	u16 *to_sn;
	struct fm_rt_lhop *lhop;
	struct fm_rt_dport *dport;
};

/**
 * struct fm_rtab - link states and route tables of a topology
 * @link_up: bitmap over link ids, a set bit for a link that is up
 * @pair_live: the inter-supernode route table: for each pair of
 *	supernodes a < b, &fm_topology.mask_words words with bit c set when
 *	copy c of their D link is up
 * @hub_l_up: the intra-supernode route table: for each hub, bit j set
 *	when hub index j of its supernode is reachable in one L hop (its
 *	L link is up); the hub's own bit is set
 * @nr_down: links down, by enum fm_link_class
 * @fast: what fm_route() reads per packet, derived from the above
 *	(struct fm_rt_fast); NULL only in tests that compare with the
 *	computation it replaces
 */
struct fm_rtab {
	u64 *link_up;
	u64 *pair_live;
	u32 *hub_l_up;
	u32 nr_down[FM_LINK_NR_CLASSES];
	struct fm_rt_fast *fast;
};

int fm_topo_alloc_tables(struct fm_topology *t);
void fm_topo_free_tables(struct fm_topology *t);
int fm_link_set_state(struct fm_topology *t, u32 id, bool up);
bool fm_link_is_up(const struct fm_topology *t, u32 id);
u32 fm_links_down(const struct fm_topology *t, unsigned int link_class);
u32 fm_rt_l_up(const struct fm_topology *t, u32 hub);
void fm_rt_pair_live(const struct fm_topology *t, u32 sn_a, u32 sn_b,
		     u64 *mask);

/* Model-internal (route.c): fill struct fm_rt_fast's choice tables. */
void fm_rt_fast_build(const struct fm_topology *t);
void fm_rt_fast_pair_changed(const struct fm_topology *t, u32 sn_a,
			     u32 sn_b);
void fm_rt_fast_hub_changed(const struct fm_topology *t, u32 hub);

#endif /* _PERCS_FM_RTABLE_H */
