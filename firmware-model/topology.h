/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: ISR topology and routes.
 *
 * The emulated system is nr_supernodes supernodes of hubs_per_sn hubs.
 * Hub h is hub index h % hubs_per_sn of supernode h / hubs_per_sn.  A
 * supernode is built of drawers of 8 hubs (FM_HUBS_PER_DRAWER): hubs of one
 * drawer are joined by LL (electrical) links, hubs of different drawers of
 * the same supernode by LR (optical) links, so every pair of hubs in a
 * supernode has its own L link.  Supernodes are joined by D links, at
 * least one per pair; see topology.c for the wiring.
 */
#ifndef _PERCS_FM_TOPOLOGY_H
#define _PERCS_FM_TOPOLOGY_H

#include "fm_env.h"

#define FM_MAX_HUBS_PER_SN	32	/* hubs fully connected by L links */
#define FM_HUBS_PER_DRAWER	8	/* hubs joined by LL links */
#define FM_MAX_SUPERNODES	512
#define FM_LL_PORTS_PER_HUB	(FM_HUBS_PER_DRAWER - 1)
#define FM_LR_PORTS_PER_HUB	(FM_MAX_HUBS_PER_SN - FM_HUBS_PER_DRAWER)
#define FM_D_PORTS_PER_HUB	16

#define FM_MAX_HOPS		5	/* L-D-L-D-L */
#define FM_L_VCS		3	/* virtual channels of L links */
#define FM_D_VCS		2	/* virtual channels of D links */

/**
 * enum fm_link_class - the three kinds of ISR link
 * @FM_LINK_LL: electrical L link between hubs of one drawer
 * @FM_LINK_LR: optical L link between drawers of one supernode
 * @FM_LINK_D: link between two supernodes
 * @FM_LINK_NR_CLASSES: number of classes
 */
enum fm_link_class {
	FM_LINK_LL,
	FM_LINK_LR,
	FM_LINK_D,
	FM_LINK_NR_CLASSES,
};

/**
 * enum fm_route_class - where a route goes
 * @FM_ROUTE_SAME_HUB: source and destination are on one hub: no hop, the
 *	packet only crosses the hub's own crossbar
 * @FM_ROUTE_INTRA_SN: within one supernode: one L hop
 * @FM_ROUTE_INTER_SN: between supernodes: at most L-D-L (direct)
 */
enum fm_route_class {
	FM_ROUTE_SAME_HUB,
	FM_ROUTE_INTRA_SN,
	FM_ROUTE_INTER_SN,
};

/**
 * struct fm_topology - shape of the emulated system (filled by fm_topo_init)
 * @nr_supernodes: supernodes, 1..%FM_MAX_SUPERNODES
 * @hubs_per_sn: hubs in each supernode, 1..%FM_MAX_HUBS_PER_SN
 * @nr_hubs: @nr_supernodes * @hubs_per_sn
 * @d_links_per_pair: D links joining each pair of supernodes (0 when there
 *	is one supernode)
 * @d_ports_per_sn: D-link ports in use in each supernode,
 *	(@nr_supernodes - 1) * @d_links_per_pair
 */
struct fm_topology {
	u32 nr_supernodes;
	u32 hubs_per_sn;
	u32 nr_hubs;
	u32 d_links_per_pair;
	u32 d_ports_per_sn;
};

/**
 * struct fm_hop - one link a packet crosses
 * @from_hub: hub the packet leaves
 * @to_hub: hub the packet enters
 * @link_class: enum fm_link_class
 * @vc: virtual channel: the number of D hops before this one on the route
 *	(0..%FM_L_VCS - 1 on L links, 0..%FM_D_VCS - 1 on D links)
 * @d_copy: D hops: which of the &fm_topology.d_links_per_pair links
 *	between the two supernodes; 0 on L hops
 * @reserved: zero
 */
struct fm_hop {
	u32 from_hub;
	u32 to_hub;
	u8 link_class;
	u8 vc;
	u8 d_copy;
	u8 reserved;
};

/**
 * struct fm_route - the hops from a source hub to a destination hub
 * @nr_hops: used entries of @hop, 0..%FM_MAX_HOPS
 * @route_class: enum fm_route_class
 * @hop: the hops in order; hop[0].from_hub is the source, and each hop
 *	starts where the previous one ends; unused entries are zero
 */
struct fm_route {
	u8 nr_hops;
	u8 route_class;
	struct fm_hop hop[FM_MAX_HOPS];
};

int fm_topo_init(struct fm_topology *t, u32 nr_supernodes, u32 hubs_per_sn,
		 char *err, size_t errlen);

/**
 * fm_hub_supernode() - supernode of a hub
 * @t: the topology
 * @hub: hub number, below @t->nr_hubs
 *
 * Return: the supernode number.
 */
static inline u32 fm_hub_supernode(const struct fm_topology *t, u32 hub)
{
	return hub / t->hubs_per_sn;
}

/**
 * fm_hub_index() - position of a hub within its supernode
 * @t: the topology
 * @hub: hub number, below @t->nr_hubs
 *
 * Return: 0..@t->hubs_per_sn - 1.
 */
static inline u32 fm_hub_index(const struct fm_topology *t, u32 hub)
{
	return hub % t->hubs_per_sn;
}

int fm_l_link_class(const struct fm_topology *t, u32 hub_a, u32 hub_b);
int fm_d_link(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy,
	      u32 *hub_a, u32 *hub_b);
u32 fm_hub_d_ports(const struct fm_topology *t, u32 hub);
int fm_hub_d_port(const struct fm_topology *t, u32 hub, u32 port,
		  u32 *peer_sn, u32 *copy);
int fm_route_direct(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		    struct fm_route *r);
const char *fm_link_class_name(unsigned int c);
const char *fm_route_class_name(unsigned int c);

#endif /* _PERCS_FM_TOPOLOGY_H */
