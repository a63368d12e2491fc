/* SPDX-License-Identifier: GPL-2.0 */
/* What the fuzz targets assert about a route: trap when it does not hold. */
#ifndef _PERCS_FUZZ_CHECK_H
#define _PERCS_FUZZ_CHECK_H

#include "topology.h"

#define FUZZ_ASSERT(cond)			\
	do {					\
		if (!(cond))			\
			__builtin_trap();	\
	} while (0)

/* Hops chained from @s to @d over links that are up, VCs by position. */
static inline void fuzz_check_route(const struct fm_topology *t, u32 s, u32 d,
				    const struct fm_route *r)
{
	unsigned int k, nr_d = 0;
	struct fm_link_info li;

	FUZZ_ASSERT(r->nr_hops <= FM_MAX_HOPS);
	FUZZ_ASSERT((s == d) == (r->nr_hops == 0));
	for (k = 0; k < r->nr_hops; k++) {
		const struct fm_hop *h = &r->hop[k];

		FUZZ_ASSERT(h->from_hub == (k ? r->hop[k - 1].to_hub : s));
		FUZZ_ASSERT(!fm_link_info(t, h->link, &li) && li.up);
		FUZZ_ASSERT(li.link_class == h->link_class);
		FUZZ_ASSERT((li.hub[0] == h->from_hub &&
			     li.hub[1] == h->to_hub) ||
			    (li.hub[1] == h->from_hub &&
			     li.hub[0] == h->to_hub));
		FUZZ_ASSERT(h->vc == nr_d);
		nr_d += h->link_class == FM_LINK_D;
	}
	FUZZ_ASSERT(nr_d <= 2);
	FUZZ_ASSERT(!r->nr_hops || r->hop[r->nr_hops - 1].to_hub == d);
	FUZZ_ASSERT(r->via_sn == FM_NO_SN ? nr_d <= 1 && r->nr_hops <= 3 :
		    nr_d == 2);
}

#endif /* _PERCS_FUZZ_CHECK_H */
