/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the ISR model's unit tests: build a topology from a
 * spec, check a route against the wiring (an oracle written apart from
 * route.c), and brute-force the direct routes of a pair.
 */
#ifndef _PERCS_FM_TOPO_UTIL_H
#define _PERCS_FM_TOPO_UTIL_H

#include "topology.h"
#include "fm_test.h"

/* A topology from a spec, with route tables (CHECK-fails on error). */
static inline struct fm_topology *tu_topo(const char *spec)
{
	struct fm_topology *t = calloc(1, sizeof(*t));
	struct fm_topo_spec s;
	char err[256];
	int ret;

	ret = fm_topo_parse(spec, &s, err, sizeof(err));
	if (!ret)
		ret = fm_topo_init_spec(t, &s, err, sizeof(err));
	if (!ret)
		ret = fm_topo_alloc_tables(t);
	if (ret) {
		FM_T_FAILF("topology %s: %d %s", spec, ret, err);
		exit(3);
	}
	return t;
}

static inline void tu_free(struct fm_topology *t)
{
	fm_topo_free_tables(t);
	free(t);
}

/* Hops of the direct route over copy @c from @s to @d, or -1 if unusable. */
static inline int tu_direct_hops(const struct fm_topology *t, u32 s, u32 d,
				 u32 c)
{
	u32 a = s / t->hubs_per_sn, b = d / t->hubs_per_sn, x, y, id;
	int hops = 1;

	if (fm_d_link(t, a, b, c, &x, &y) || fm_d_link_id(t, a, b, c, &id) ||
	    !fm_link_is_up(t, id))
		return -1;
	if (s != x) {
		if (fm_l_link_id(t, s, x, &id) || !fm_link_is_up(t, id))
			return -1;
		hops++;
	}
	if (y != d) {
		if (fm_l_link_id(t, y, d, &id) || !fm_link_is_up(t, id))
			return -1;
		hops++;
	}
	return hops;
}

/* Shortest usable direct route s -> d (s != d) by brute force; -1: none. */
static inline int tu_shortest_direct(const struct fm_topology *t, u32 s,
				     u32 d, u32 *nr_usable)
{
	u32 c, id;
	int best = -1, h;

	*nr_usable = 0;
	if (s / t->hubs_per_sn == d / t->hubs_per_sn) {
		if (fm_l_link_id(t, s, d, &id) || !fm_link_is_up(t, id))
			return -1;
		*nr_usable = 1;
		return 1;
	}
	for (c = 0; c < t->d_links_per_pair; c++) {
		h = tu_direct_hops(t, s, d, c);
		if (h < 0)
			continue;
		++*nr_usable;
		if (best < 0 || h < best)
			best = h;
	}
	return best;
}

/*
 * Everything a route of any mode must satisfy (sections V and VI): hops
 * chained from @s to @d over links that exist, are up and match each
 * hop's class, copy and ports; VC = D hops before; shape [L]D[L] for a
 * direct route between supernodes, L within one, [L]D[L]D[L] through an
 * intermediate supernode other than both ends.  Writes what is wrong into
 * @why and returns false.
 */
static inline bool tu_route_ok(const struct fm_topology *t, u32 s, u32 d,
			       const struct fm_route *r, char *why,
			       size_t len)
{
	u32 H = t->hubs_per_sn, ssn = s / H, dsn = d / H;
	char shape[FM_MAX_HOPS + 1] = "";
	unsigned int k, nr_d = 0, want_class;
	struct fm_link_info li;
	const char *want;

	want_class = s == d ? FM_ROUTE_SAME_HUB :
		     ssn == dsn ? FM_ROUTE_INTRA_SN : FM_ROUTE_INTER_SN;
	if (r->route_class != want_class) {
		snprintf(why, len, "class %u", r->route_class);
		return false;
	}
	if (r->nr_hops > FM_MAX_HOPS || (s == d && r->nr_hops)) {
		snprintf(why, len, "%u hops", r->nr_hops);
		return false;
	}
	for (k = 0; k < r->nr_hops; k++) {
		const struct fm_hop *h = &r->hop[k];
		u32 from = k ? r->hop[k - 1].to_hub : s;
		int end;

		if (h->from_hub != from) {
			snprintf(why, len, "hop %u starts at %u, not %u", k,
				 h->from_hub, from);
			return false;
		}
		if (fm_link_info(t, h->link, &li) ||
		    li.link_class != h->link_class || !li.up ||
		    li.copy != h->d_copy) {
			snprintf(why, len, "hop %u: link %u bad or down", k,
				 h->link);
			return false;
		}
		end = li.hub[0] == h->from_hub ? 0 : 1;
		if (li.hub[end] != h->from_hub || li.hub[!end] != h->to_hub ||
		    li.port[end] != h->out_port ||
		    li.port[!end] != h->in_port) {
			snprintf(why, len, "hop %u: ends or ports", k);
			return false;
		}
		if (h->vc != nr_d ||
		    h->vc >= (h->link_class == FM_LINK_D ? FM_D_VCS :
			      FM_L_VCS)) {
			snprintf(why, len, "hop %u: vc %u after %u D hops", k,
				 h->vc, nr_d);
			return false;
		}
		if (h->link_class == FM_LINK_D) {
			u32 fs = h->from_hub / H, ts = h->to_hub / H;
			u32 via = r->via_sn;

			if ((nr_d == 0 && (fs != ssn ||
					   ts != (via == FM_NO_SN ? dsn : via))) ||
			    (nr_d == 1 && (fs != via || ts != dsn))) {
				snprintf(why, len, "D hop %u: %u -> %u", k, fs,
					 ts);
				return false;
			}
		}
		nr_d += h->link_class == FM_LINK_D;
		shape[k] = h->link_class == FM_LINK_D ? 'D' : 'L';
	}
	shape[k] = '\0';
	if (r->nr_hops && r->hop[r->nr_hops - 1].to_hub != d) {
		snprintf(why, len, "ends at %u", r->hop[r->nr_hops - 1].to_hub);
		return false;
	}
	for (k = r->nr_hops; k < FM_MAX_HOPS; k++) {
		static const struct fm_hop zero;

		if (memcmp(&r->hop[k], &zero, sizeof(zero))) {
			snprintf(why, len, "unused hop %u not zero", k);
			return false;
		}
	}
	if (s == d)
		return true;
	if (r->via_sn != FM_NO_SN) {
		if (r->via_sn >= t->nr_supernodes || r->via_sn == ssn ||
		    r->via_sn == dsn) {
			snprintf(why, len, "via %u", r->via_sn);
			return false;
		}
		want = "LDLDL LDLD LDDL LDD DLDL DLD DDL DD";
	} else {
		want = ssn == dsn ? "L" : "LDL LD DL D";
	}
	/* the shape must be one of the words of @want */
	for (;;) {
		size_t n = strcspn(want, " ");

		if (n == strlen(shape) && !strncmp(want, shape, n))
			return true;
		if (!want[n])
			break;
		want += n + 1;
	}
	snprintf(why, len, "shape %s (via %u)", shape, r->via_sn);
	return false;
}

/* xorshift32: the tests' reproducible random choices (state != 0). */
static inline u32 tu_rand(u32 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

#endif /* _PERCS_FM_TOPO_UTIL_H */
