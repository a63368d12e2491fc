/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs firmware model: topology spec strings.
 *
 * A topology is named by a short string, for a module parameter or a
 * tool's flag:
 *
 *	spec   := shape { "," option }
 *	shape  := S "x" H	S supernodes of H hubs (1..513, 1..32)
 *		| "d" N		section VII.A's system for d = N (1..16):
 *				(32N + 1) x 32 with dhub=N, i.e. every hub
 *				has N D links to N distinct supernodes
 *	option := "dpair=" P	P D links join each pair of supernodes
 *				(default: as many as the D ports allow)
 *		| "dhub=" U	each hub uses at most U of its 16 D ports
 *	S, H, N, P, U := decimal digits
 *
 * Examples: "2x4" (2 supernodes of 4 hubs, 64 D links per pair), "5x8,
 * dpair=4" without the space, "257x32,dhub=8" which is "d8", "513x32"
 * (the largest: 16 D links per hub, one per pair).  No spaces; options
 * at most once each, in any order.  The D wiring follows from S, H and
 * the number of D links per pair (topology.c).
 */
#ifndef _PERCS_FM_SPEC_H
#define _PERCS_FM_SPEC_H

#include "topology.h"

#define FM_SPEC_MAX_LEN	64	/* characters of a spec */

int fm_topo_parse(const char *spec, struct fm_topo_spec *s, char *err,
		  size_t errlen);
int fm_topo_format(const struct fm_topology *t, char *buf, size_t len);

#endif /* _PERCS_FM_SPEC_H */
