/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: link identities.
 *
 * Every physical link of the system has an id: the L links first,
 * supernode by supernode, then the D links, pair of supernodes by pair
 * (link.c has the formulas).  A link joins two hubs, each end on one ISR
 * port of its hub; it carries traffic both ways.  Its up/down state is
 * kept with the route tables (rtable.h).
 */
#ifndef _PERCS_FM_LINK_H
#define _PERCS_FM_LINK_H

#include "topology.h"

/**
 * struct fm_link_info - one physical link
 * @id: link id, below &fm_topology.nr_links
 * @link_class: enum fm_link_class
 * @up: 1 when the link is up (always, for a topology without tables)
 * @copy: D links: which of the links between the two supernodes (the
 *	@copy of fm_d_link()); 0 for L links
 * @hub: the two ends, @hub[0] < @hub[1]
 * @port: the ISR port (FM_PORT_*) of each end on its hub
 * @reserved: zero
 */
struct fm_link_info {
	u32 id;
	u8 link_class;
	u8 up;
	u16 copy;
	u32 hub[2];
	u8 port[2];
	u8 reserved[2];
};

int fm_l_link_id(const struct fm_topology *t, u32 hub_a, u32 hub_b, u32 *id);
int fm_d_link_id(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy,
		 u32 *id);
int fm_link_info(const struct fm_topology *t, u32 id,
		 struct fm_link_info *li);
int fm_port_link(const struct fm_topology *t, u32 hub, u32 port, u32 *id);

#endif /* _PERCS_FM_LINK_H */
