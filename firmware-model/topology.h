/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: ISR topology.
 *
 * The emulated system is nr_supernodes supernodes of hubs_per_sn hubs.
 * Hub h is hub index h % hubs_per_sn of supernode h / hubs_per_sn.  A
 * supernode is built of drawers of 8 hubs (FM_HUBS_PER_DRAWER): hubs of one
 * drawer are joined by LL (electrical) links, hubs of different drawers of
 * the same supernode by LR (optical) links, so every pair of hubs in a
 * supernode has its own L link.  Supernodes are joined by D links, at
 * least one per pair; see topology.c for the wiring.
 *
 * This header is the ISR model's interface: it also brings the link
 * (link.h), route table (rtable.h), route (route.h) and topology spec
 * (spec.h) functions.
 */
#ifndef _PERCS_FM_TOPOLOGY_H
#define _PERCS_FM_TOPOLOGY_H

#include "fm_env.h"

#define FM_MAX_HUBS_PER_SN	32	/* hubs fully connected by L links */
#define FM_HUBS_PER_DRAWER	8	/* hubs joined by LL links */
#define FM_LL_PORTS_PER_HUB	(FM_HUBS_PER_DRAWER - 1)
#define FM_LR_PORTS_PER_HUB	(FM_MAX_HUBS_PER_SN - FM_HUBS_PER_DRAWER)
#define FM_D_PORTS_PER_HUB	16
/* every pair of supernodes needs a D link: 16 * 32 + 1 supernodes at most */
#define FM_MAX_SUPERNODES	(FM_D_PORTS_PER_HUB * FM_MAX_HUBS_PER_SN + 1)
#define FM_MAX_D_PER_PAIR	(FM_D_PORTS_PER_HUB * FM_MAX_HUBS_PER_SN)
#define FM_NO_SN		0xffff	/* &fm_route.via_sn of a direct route */

/*
 * ISR ports of a hub (a 56 x 56 crossbar, section IV.C): 7 LL, 24 LR and
 * 16 D ports, 8 ports to the two HFIs and one service port.
 */
#define FM_PORT_LL		0	/* LL ports 0..6 */
#define FM_PORT_LR		(FM_PORT_LL + FM_LL_PORTS_PER_HUB)	/* 7..30 */
#define FM_PORT_D		(FM_PORT_LR + FM_LR_PORTS_PER_HUB)	/* 31..46 */
#define FM_PORT_HFI		(FM_PORT_D + FM_D_PORTS_PER_HUB)	/* 47..54 */
#define FM_PORT_SERVICE		(FM_PORT_HFI + 8)			/* 55 */
#define FM_NR_PORTS		(FM_PORT_SERVICE + 1)

#define FM_MAX_HOPS		5	/* L-D-L-D-L */
#define FM_L_VCS		3	/* virtual channels of L links */
#define FM_D_VCS		2	/* virtual channels of D links */

/*
 * Link bandwidths of section V, each class's links of one hub together,
 * in GB/s: 7 LL links 336, 24 LR links 240, 16 D links 320.  Section VII.A
 * uses half a link's share per direction: LL 24, LR 5, D 10 (which it
 * writes GiB/s); fm_link_class_bw() returns those.
 */
#define FM_BW_LL_PER_HUB	336
#define FM_BW_LR_PER_HUB	240
#define FM_BW_D_PER_HUB		320

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
 * enum fm_route_class - where a route's two ends are
 * @FM_ROUTE_SAME_HUB: source and destination are on one hub: no hop, the
 *	packet only crosses the hub's own crossbar
 * @FM_ROUTE_INTRA_SN: both in one supernode (one L hop when direct)
 * @FM_ROUTE_INTER_SN: in different supernodes (at most L-D-L when direct)
 */
enum fm_route_class {
	FM_ROUTE_SAME_HUB,
	FM_ROUTE_INTRA_SN,
	FM_ROUTE_INTER_SN,
};

struct fm_rtab;

/**
 * struct fm_topology - shape of the emulated system
 * @nr_supernodes: supernodes, 1..%FM_MAX_SUPERNODES
 * @hubs_per_sn: hubs in each supernode, 1..%FM_MAX_HUBS_PER_SN
 * @nr_hubs: @nr_supernodes * @hubs_per_sn
 * @d_links_per_pair: D links joining each pair of supernodes (0 when there
 *	is one supernode)
 * @d_ports_per_sn: D-link ports in use in each supernode,
 *	(@nr_supernodes - 1) * @d_links_per_pair
 * @d_ports_per_hub: D ports a hub may use (16, or the spec's dhub=); the
 *	hubs of a supernode use floor or ceil of @d_ports_per_sn /
 *	@hubs_per_sn of them
 * @l_links_per_sn: L links of one supernode, H * (H - 1) / 2
 * @nr_l_links: L links of the system; they have link ids 0 ..
 *	@nr_l_links - 1
 * @nr_d_links: D links of the system; ids @nr_l_links .. @nr_links - 1
 * @nr_links: @nr_l_links + @nr_d_links
 * @mask_words: u64 words of a mask over the D links of one pair of
 *	supernodes, DIV_ROUND_UP(@d_links_per_pair, 64)
 * @generation: incremented by every link state change (callers that cache
 *	routes compare it)
 * @rt: route tables and link states (fm_topo_alloc_tables()), or NULL: a
 *	topology from fm_topo_init() alone routes as if every link were up
 *	and has no link state to change
 */
struct fm_topology {
	u32 nr_supernodes;
	u32 hubs_per_sn;
	u32 nr_hubs;
	u32 d_links_per_pair;
	u32 d_ports_per_sn;
	u32 d_ports_per_hub;
	u32 l_links_per_sn;
	u32 nr_l_links;
	u32 nr_d_links;
	u32 nr_links;
	u32 mask_words;
	u32 generation;
	struct fm_rtab *rt;
};

/**
 * struct fm_topo_spec - what a topology spec string says (see spec.h)
 * @supernodes: supernodes in the system
 * @hubs_per_sn: hubs per supernode
 * @d_per_pair: D links per pair of supernodes; 0: as many as the D ports
 *	allow
 * @d_per_hub: D ports each hub may use; 0: all 16
 */
struct fm_topo_spec {
	u32 supernodes;
	u32 hubs_per_sn;
	u32 d_per_pair;
	u32 d_per_hub;
};

int fm_topo_init(struct fm_topology *t, u32 nr_supernodes, u32 hubs_per_sn,
		 char *err, size_t errlen);
int fm_topo_init_spec(struct fm_topology *t, const struct fm_topo_spec *s,
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

/**
 * fm_tri() - index of the pair @i < @j among the pairs of 0..@n-1
 * @i: the smaller
 * @j: the larger, below @n
 * @n: how many there are
 *
 * Return: the index in the order (0, 1), (0, 2), ..., (1, 2), ...
 */
static inline u32 fm_tri(u32 i, u32 j, u32 n)
{
	return i * (2 * n - i - 1) / 2 + (j - i - 1);
}

/**
 * fm_sn_pair() - index of the pair of supernodes {@a, @b}
 * @t: the topology
 * @a: one supernode
 * @b: another, != @a, in either order
 *
 * Return: fm_tri() of the two: the D links and the inter-supernode route
 * table are laid out by it.
 */
static inline u32 fm_sn_pair(const struct fm_topology *t, u32 a, u32 b)
{
	return a < b ? fm_tri(a, b, t->nr_supernodes) :
		       fm_tri(b, a, t->nr_supernodes);
}

/**
 * fm_sn_distance() - how far supernode @b follows @a, counting cyclically
 * @t: the topology
 * @a: one supernode
 * @b: another supernode
 *
 * Return: (@b - @a - 1) mod nr_supernodes, 0..nr_supernodes - 2 for
 * @a != @b.  The D wiring depends on supernodes only through it.
 */
static inline u32 fm_sn_distance(const struct fm_topology *t, u32 a, u32 b)
{
	return (b + t->nr_supernodes - a - 1) % t->nr_supernodes;
}

/**
 * fm_d_end_index() - hub index at supernode @a's end of a D link
 * @t: the topology
 * @a: the supernode
 * @b: the supernode at the other end, != @a
 * @copy: which of the links between them, below d_links_per_pair
 *
 * Return: the hub index, 0..hubs_per_sn - 1 (topology.c has the formula).
 */
static inline u32 fm_d_end_index(const struct fm_topology *t, u32 a, u32 b,
				 u32 copy)
{
	return (fm_sn_distance(t, a, b) * t->d_links_per_pair + copy) %
	       t->hubs_per_sn;
}

int fm_l_link_class(const struct fm_topology *t, u32 hub_a, u32 hub_b);
int fm_l_port(const struct fm_topology *t, u32 hub, u32 peer);
int fm_d_link(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy,
	      u32 *hub_a, u32 *hub_b);
int fm_d_port(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy);
u32 fm_hub_d_ports(const struct fm_topology *t, u32 hub);
int fm_hub_d_port(const struct fm_topology *t, u32 hub, u32 port,
		  u32 *peer_sn, u32 *copy);
const char *fm_link_class_name(unsigned int c);
const char *fm_route_class_name(unsigned int c);
u32 fm_link_class_bw(unsigned int c);

#include "link.h"
#include "rtable.h"
#include "route.h"
#include "spec.h"

#endif /* _PERCS_FM_TOPOLOGY_H */
