/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: routes and virtual channels.
 *
 * fm_route() picks the route of one packet from the route tables
 * (rtable.h) by the packet's route mode (enum percs_route_mode);
 * fm_route_count() and fm_route_next() list every route a mode may use
 * between two hubs.  route.c describes the routes, the choices and the
 * virtual channels.
 */
#ifndef _PERCS_FM_ROUTE_H
#define _PERCS_FM_ROUTE_H

#include "topology.h"

/**
 * struct fm_hop - one link a packet crosses
 * @from_hub: hub the packet leaves
 * @to_hub: hub the packet enters
 * @link: link id (link.h)
 * @d_copy: D hops: which of the &fm_topology.d_links_per_pair links
 *	between the two supernodes; 0 on L hops
 * @link_class: enum fm_link_class
 * @vc: virtual channel: the number of D hops before this one on the route
 *	(0..%FM_L_VCS - 1 on L links, 0..%FM_D_VCS - 1 on D links)
 * @out_port: ISR port of @from_hub the packet leaves by
 * @in_port: ISR port of @to_hub it enters by
 * @reserved: zero
 */
struct fm_hop {
	u32 from_hub;
	u32 to_hub;
	u32 link;
	u16 d_copy;
	u8 link_class;
	u8 vc;
	u8 out_port;
	u8 in_port;
	u8 reserved[2];
};

/**
 * struct fm_route - the hops from a source hub to a destination hub
 * @nr_hops: used entries of @hop, 0..%FM_MAX_HOPS
 * @route_class: enum fm_route_class of the two ends
 * @mode: enum percs_route_mode that chose the route
 * @reserved: zero
 * @via_sn: intermediate supernode of an indirect route, %FM_NO_SN for a
 *	direct one
 * @reserved2: zero
 * @hop: the hops in order; hop[0].from_hub is the source, and each hop
 *	starts where the previous one ends; unused entries are zero
 */
struct fm_route {
	u8 nr_hops;
	u8 route_class;
	u8 mode;
	u8 reserved;
	u16 via_sn;
	u16 reserved2;
	struct fm_hop hop[FM_MAX_HOPS];
};

/**
 * struct fm_route_cursor - per-source state of the hardware route choice
 * @next: round-robin position (%PERCS_ROUTE_DIRECT_STRIPED)
 * @seed: pseudo-random state (%PERCS_ROUTE_HW_INDIRECT), never 0
 *
 * Owned by the caller, one per source (a window, say), set up by
 * fm_route_cursor_init().
 */
struct fm_route_cursor {
	u32 next;
	u32 seed;
};

/**
 * struct fm_route_iter - position in a list of routes (fm_route_next())
 * @pos: where the next call starts; 0 before the first call
 */
struct fm_route_iter {
	u32 pos;
};

void fm_route_cursor_init(struct fm_route_cursor *c, u32 seed);
int fm_route(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
	     unsigned int mode, u32 arg, struct fm_route_cursor *cur,
	     struct fm_route *r);
int fm_route_direct(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		    struct fm_route *r);
int fm_route_to_sn(const struct fm_topology *t, u32 src_hub, u32 sn,
		   struct fm_route *r);
int fm_route_count(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		   unsigned int mode, u32 arg);
int fm_route_next(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		  unsigned int mode, u32 arg, struct fm_route_iter *it,
		  struct fm_route *r);
const char *fm_route_mode_name(unsigned int mode);

#endif /* _PERCS_FM_ROUTE_H */
