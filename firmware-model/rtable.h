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
 */
struct fm_rtab {
	u64 *link_up;
	u64 *pair_live;
	u32 *hub_l_up;
	u32 nr_down[FM_LINK_NR_CLASSES];
};

int fm_topo_alloc_tables(struct fm_topology *t);
void fm_topo_free_tables(struct fm_topology *t);
int fm_link_set_state(struct fm_topology *t, u32 id, bool up);
bool fm_link_is_up(const struct fm_topology *t, u32 id);
u32 fm_links_down(const struct fm_topology *t, unsigned int link_class);
u32 fm_rt_l_up(const struct fm_topology *t, u32 hub);
void fm_rt_pair_live(const struct fm_topology *t, u32 sn_a, u32 sn_b,
		     u64 *mask);

#endif /* _PERCS_FM_RTABLE_H */
