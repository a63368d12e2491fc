// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: routes and virtual channels.
 *
 * Direct routes
 * -------------
 * Between hubs s and t of different supernodes a and b, the direct route
 * over copy c of their D link is L-D-L, s -L-> x -D-> y -L-> t, with x and
 * y the link's ends; the first (last) L hop is left out when s is x (t is
 * y).  It is usable while its links are up.  Within one supernode the
 * direct route is the one L hop s -> t; on one hub there is no hop.
 *
 * PERCS_ROUTE_DIRECT (hw_direct) takes a shortest usable direct route: a
 * copy that ends on both s and t (one hop), else one that ends on either
 * (two hops), else any (three); among n candidates of that length the
 * ((H * index of s + index of t) mod n)-th in copy order, so that the hub
 * pairs of two supernodes spread over their copies.
 *
 * Indirect routes
 * ---------------
 * Through an intermediate supernode m other than a and b: first the route
 * to supernode m (fm_route_to_sn(): s -L-> x -D-> y over a copy ending on
 * s if one is usable, else any; among n candidates the ((index of s +
 * distance(a, m)) mod n)-th), then from y, the intermediate hub, the
 * direct route to t as hw_direct picks it: at most L-D-L-D-L.  The route
 * via m is usable when both parts are.  Hubs of one supernode have
 * indirect routes too, through any other supernode.
 *
 * Route modes
 * -----------
 * hw_direct (PERCS_ROUTE_DIRECT): as above.
 * sw_indirect (PERCS_ROUTE_SW_INDIRECT): via the supernode route_arg names.
 * hw_indirect (PERCS_ROUTE_HW_INDIRECT): via a pseudo-random candidate
 *	supernode (xorshift32 on the caller's cursor, uniform over the
 *	candidates); when the route via that one is not usable, via the next
 *	candidate that is (cyclically).
 * hw_direct_striped (PERCS_ROUTE_DIRECT_STRIPED): round robin over the
 *	routes fm_route_next() lists: every usable direct route (by copy),
 *	then every usable indirect route (by supernode).
 *
 * A choice depends only on hub indices and supernode distances, so routes
 * are the same seen from every supernode (the wiring's symmetry), which
 * the simulator uses.  Choices pass over unusable routes without ever
 * producing one: when none is left the answer is -EHOSTUNREACH.
 *
 * Cost per packet: with the fast path's tables (struct fm_rt_fast, up to
 * FM_RT_FAST_MAX_HUBS hubs) a choice is a load: hw_direct's copy for the
 * pair of hubs, the copy into the intermediate supernode and the direct
 * copy from the intermediate hub for an indirect route, the copy's bit and
 * the two ends' intra table bits for a striped direct position; then
 * O(hops) loads to write the route.  fm_rt_fast_build() and the
 * fm_rt_fast_*_changed() updates (end of this file) fill the tables with
 * the choices computed as below.  Without them (larger topologies) the
 * usable copies of a pair are its inter-supernode table entry
 * (mask_words <= 8 u64 words) less the copies ending on hubs the source
 * (destination) hub cannot reach by L, read from its intra table:
 * O(mask_words) word operations, plus O(d / H) <= 16 bit sets per
 * unreachable L neighbour (none while every link is up).  hw_indirect
 * and hw_direct_striped try a further candidate only when one is
 * unusable; with no route left they have tried each of the nr_supernodes
 * candidates once.
 *
 * Virtual channels
 * ----------------
 * The VC of a hop is its position in the worst-case template
 * L0-D0-L1-D1-L2: the number of D hops before it.  VC ranks thus strictly
 * increase along every route in the order L0 < D0 < L1 < D1 < L2, so the
 * channel dependency graph over (link, direction, VC) has no cycle and
 * the network cannot deadlock.  A D-L route uses D vc 0 then L vc 1, not
 * L vc 0: L vc 0 is what packets waiting for a D link hold, and sharing it
 * with packets that have crossed one could close a cycle.
 */
#include "topology.h"

static const char *const fm_route_mode_names[PERCS_ROUTE_MAX + 1] = {
	[PERCS_ROUTE_DIRECT] = "hw_direct",
	[PERCS_ROUTE_DIRECT_STRIPED] = "hw_direct_striped",
	[PERCS_ROUTE_SW_INDIRECT] = "sw_indirect",
	[PERCS_ROUTE_HW_INDIRECT] = "hw_indirect",
};

#define FM_SEED_DEFAULT	0x9e3779b9U

/* OR into @m the copies of (a, b) whose end in @a is hub index @i. */
static void fm_copies_at(const struct fm_topology *t, u32 a, u32 b, u32 i,
			 u64 *m)
{
	u32 H = t->hubs_per_sn, d = t->d_links_per_pair;
	u32 c = (i + H - fm_sn_distance(t, a, b) * d % H) % H;

	for (; c < d; c += H)
		m[c / 64] |= 1ULL << (c % 64);
}

/*
 * Clear from @v the copies of (sn of @hub, @b) that @hub cannot use: those
 * ending on a hub of its supernode whose L link to @hub is down.
 */
static void fm_clear_unreachable(const struct fm_topology *t, u32 hub, u32 b,
				 u64 *v)
{
	u32 H = t->hubs_per_sn, a = fm_hub_supernode(t, hub), w;
	u32 dead = ~fm_rt_l_up(t, hub);
	u64 m[FM_MASK_WORDS] = { 0 };

	if (H < 32)
		dead &= (1U << H) - 1;
	if (!dead)
		return;
	while (dead) {
		fm_copies_at(t, a, b, fm_ctz64(dead), m);
		dead &= dead - 1;
	}
	for (w = 0; w < t->mask_words; w++)
		v[w] &= ~m[w];
}

static u32 fm_mask_weight(const struct fm_topology *t, const u64 *m)
{
	u32 w, n = 0;

	for (w = 0; w < t->mask_words; w++)
		n += fm_popcount64(m[w]);
	return n;
}

/* Bit number of the @k-th set bit of @m (there are more than @k). */
static u32 fm_nth_bit(const u64 *m, u32 k)
{
	u32 w, n;
	u64 x;

	for (w = 0;; w++) {
		n = fm_popcount64(m[w]);
		if (k < n)
			break;
		k -= n;
	}
	x = m[w];
	while (k--)
		x &= x - 1;
	return w * 64 + fm_ctz64(x);
}

/* First set bit of @m in [from, to), or @to. */
static u32 fm_next_bit(const u64 *m, u32 from, u32 to)
{
	u32 c = from;

	while (c < to) {
		u64 x = m[c / 64] >> (c % 64);

		if (x) {
			c += fm_ctz64(x);
			return c < to ? c : to;
		}
		c = (c / 64 + 1) * 64;
	}
	return to;
}

/*
 * Pick a copy from the usable ones @v: among those ending on both ends
 * (@at_src and @at_dst), else on either, else any, the (@key mod n)-th.
 * A NULL @at_dst means every copy ends where it should.
 * Return: the copy, or -1 when @v is empty.
 */
static int fm_pick(const struct fm_topology *t, const u64 *v,
		   const u64 *at_src, const u64 *at_dst, u32 key)
{
	u64 tier[FM_MASK_WORDS];
	unsigned int level;
	u32 w, n;

	for (level = 0; level < 3; level++) {
		n = 0;
		for (w = 0; w < t->mask_words; w++) {
			u64 m = ~0ULL;

			if (level == 0)
				m = at_src[w] & (at_dst ? at_dst[w] : ~0ULL);
			else if (level == 1 && at_dst)
				m = at_src[w] | at_dst[w];
			tier[w] = v[w] & m;
			n += fm_popcount64(tier[w]);
		}
		if (n)
			return fm_nth_bit(tier, key % n);
	}
	return -1;
}

/* fm_sn_distance() without the division. */
static inline u32 fm_dist(const struct fm_topology *t, u32 a, u32 b)
{
	return b > a ? b - a - 1 : b + t->nr_supernodes - a - 1;
}

/* Append one hop; its VC is the number of D hops before it. */
static void fm_add_hop(const struct fm_topology *t, struct fm_route *r,
		       u32 from, u32 to, bool d_hop, u32 copy)
{
	const struct fm_rt_fast *f = t->rt ? t->rt->fast : NULL;
	struct fm_hop *h = &r->hop[r->nr_hops];

	if (r->nr_hops) {
		const struct fm_hop *prev = h - 1;

		h->vc = prev->vc + (prev->link_class == FM_LINK_D);
	}
	h->from_hub = from;
	h->to_hub = to;
	r->nr_hops++;
	if (f && d_hop) {
		/* the tables' form of fm_d_link_id() and fm_d_port() */
		u32 H = t->hubs_per_sn, d = t->d_links_per_pair;
		u32 a = from / H, b = to / H;

		h->link_class = FM_LINK_D;
		h->d_copy = copy;
		h->link = t->nr_l_links + fm_sn_pair(t, a, b) * d + copy;
		h->out_port = f->dport[fm_dist(t, a, b) * d + copy].port;
		h->in_port = f->dport[fm_dist(t, b, a) * d + copy].port;
		return;
	}
	if (f) {
		u32 H = t->hubs_per_sn, sn = from / H;
		const struct fm_rt_lhop *e =
			&f->lhop[(from - sn * H) * H + (to - sn * H)];

		h->link_class = e->link_class;
		h->link = sn * t->l_links_per_sn + e->tri;
		h->out_port = e->out_port;
		h->in_port = e->in_port;
		return;
	}
	if (d_hop) {
		u32 a = fm_hub_supernode(t, from), b = fm_hub_supernode(t, to);

		h->link_class = FM_LINK_D;
		h->d_copy = copy;
		fm_d_link_id(t, a, b, copy, &h->link);
		h->out_port = fm_d_port(t, a, b, copy);
		h->in_port = fm_d_port(t, b, a, copy);
	} else {
		h->link_class = fm_l_link_class(t, from, to);
		fm_l_link_id(t, from, to, &h->link);
		h->out_port = fm_l_port(t, from, to);
		h->in_port = fm_l_port(t, to, from);
	}
}

/* Append s -L-> x -D-> y over copy @c of (sn of s, @b); return y. */
static u32 fm_add_exit(const struct fm_topology *t, struct fm_route *r,
		       u32 s, u32 b, u32 c)
{
	const struct fm_rt_fast *f = t->rt ? t->rt->fast : NULL;
	u32 H = t->hubs_per_sn, a = fm_hub_supernode(t, s), x, y;

	if (f) {
		u32 d = t->d_links_per_pair;

		x = a * H + f->dport[fm_dist(t, a, b) * d + c].index;
		y = b * H + f->dport[fm_dist(t, b, a) * d + c].index;
	} else {
		x = a * H + fm_d_end_index(t, a, b, c);
		y = b * H + fm_d_end_index(t, b, a, c);
	}
	if (s != x)
		fm_add_hop(t, r, s, x, false, 0);
	fm_add_hop(t, r, x, y, true, c);
	return y;
}

/* Copies whose direct route @s -> @dst (other supernode) is usable. */
static u32 fm_direct_copies(const struct fm_topology *t, u32 s, u32 dst,
			    u64 *v)
{
	u32 a = fm_hub_supernode(t, s), b = fm_hub_supernode(t, dst);

	fm_rt_pair_live(t, a, b, v);
	fm_clear_unreachable(t, s, b, v);
	fm_clear_unreachable(t, dst, a, v);
	return fm_mask_weight(t, v);
}

static bool fm_l_usable(const struct fm_topology *t, u32 s, u32 dst)
{
	return fm_rt_l_up(t, s) >> fm_hub_index(t, dst) & 1;
}

/*
 * The copy hw_direct takes from @s to @dst (other supernodes), computed
 * from the link state tables: -1 when no direct route is usable.
 */
static int fm_pick_direct(const struct fm_topology *t, u32 s, u32 dst)
{
	u32 a = fm_hub_supernode(t, s), b = fm_hub_supernode(t, dst);
	u64 v[FM_MASK_WORDS], at_s[FM_MASK_WORDS] = { 0 };
	u64 at_d[FM_MASK_WORDS] = { 0 };

	if (!fm_direct_copies(t, s, dst, v))
		return -1;
	fm_copies_at(t, a, b, fm_hub_index(t, s), at_s);
	fm_copies_at(t, b, a, fm_hub_index(t, dst), at_d);
	return fm_pick(t, v, at_s, at_d,
		       fm_hub_index(t, s) * t->hubs_per_sn +
		       fm_hub_index(t, dst));
}

/* The copy fm_route_to_sn() takes from @s into supernode @m, or -1. */
static int fm_pick_to_sn(const struct fm_topology *t, u32 s, u32 m)
{
	u32 a = fm_hub_supernode(t, s);
	u64 v[FM_MASK_WORDS], at_s[FM_MASK_WORDS] = { 0 };

	fm_rt_pair_live(t, a, m, v);
	fm_clear_unreachable(t, s, m, v);
	fm_copies_at(t, a, m, fm_hub_index(t, s), at_s);
	return fm_pick(t, v, at_s, NULL,
		       fm_hub_index(t, s) + fm_sn_distance(t, a, m));
}

/* The fast path's choice tables, when the topology has them. */
static inline const struct fm_rt_fast *fm_fast(const struct fm_topology *t)
{
	return t->rt && t->rt->fast && t->rt->fast->direct ? t->rt->fast :
							     NULL;
}

/* hw_direct's copy from @s to @dst (other supernodes), or -1. */
static inline int fm_direct_copy(const struct fm_topology *t, u32 s, u32 dst)
{
	const struct fm_rt_fast *f = fm_fast(t);
	u32 c;

	if (!f)
		return fm_pick_direct(t, s, dst);
	c = f->direct[(size_t)s * t->nr_hubs + dst];
	return c == FM_RT_NONE ? -1 : (int)c;
}

/* fm_route_to_sn()'s copy from @s into @m (not its own), or -1. */
static inline int fm_to_sn_copy(const struct fm_topology *t, u32 s, u32 m)
{
	const struct fm_rt_fast *f = fm_fast(t);
	u32 c;

	if (!f)
		return fm_pick_to_sn(t, s, m);
	c = f->to_sn[(size_t)s * t->nr_supernodes + m];
	return c == FM_RT_NONE ? -1 : (int)c;
}

/* Append the direct route @s -> @dst (s != dst) as hw_direct picks it. */
static int fm_add_direct(const struct fm_topology *t, struct fm_route *r,
			 u32 s, u32 dst)
{
	u32 a = fm_hub_supernode(t, s), b = fm_hub_supernode(t, dst), y;
	int c;

	if (a == b) {
		if (!fm_l_usable(t, s, dst))
			return -EHOSTUNREACH;
		fm_add_hop(t, r, s, dst, false, 0);
		return 0;
	}
	c = fm_direct_copy(t, s, dst);
	if (c < 0)
		return -EHOSTUNREACH;
	y = fm_add_exit(t, r, s, b, c);
	if (y != dst)
		fm_add_hop(t, r, y, dst, false, 0);
	return 0;
}

/* Append the route from @s to supernode @m (!= its own); 0 or -errno. */
static int fm_add_to_sn(const struct fm_topology *t, struct fm_route *r,
			u32 s, u32 m)
{
	int c = fm_to_sn_copy(t, s, m);

	if (c < 0)
		return -EHOSTUNREACH;
	fm_add_exit(t, r, s, m, c);
	return 0;
}

static void fm_route_reset(struct fm_route *r)
{
	r->nr_hops = 0;
	r->via_sn = FM_NO_SN;
	memset(r->hop, 0, sizeof(r->hop));
}

/*
 * Route @s -> @dst through supernode @m into @r; on failure @r is reset.
 * Both parts are chosen before any hop is written.
 */
static int fm_route_via(const struct fm_topology *t, u32 s, u32 dst, u32 m,
			struct fm_route *r)
{
	const struct fm_rt_fast *f = fm_fast(t);
	u32 H = t->hubs_per_sn, a = fm_hub_supernode(t, s), y;
	int c1, c2;

	c1 = fm_to_sn_copy(t, s, m);
	if (c1 < 0)
		goto fail;
	if (f)
		y = m * H + f->dport[fm_dist(t, m, a) * t->d_links_per_pair +
				     c1].index;
	else
		y = m * H + fm_d_end_index(t, m, a, c1);
	/* y is in m, dst is not: the second part is inter-supernode */
	c2 = fm_direct_copy(t, y, dst);
	if (c2 < 0)
		goto fail;
	fm_route_reset(r);
	fm_add_exit(t, r, s, m, c1);
	y = fm_add_exit(t, r, y, fm_hub_supernode(t, dst), c2);
	if (y != dst)
		fm_add_hop(t, r, y, dst, false, 0);
	r->via_sn = m;
	return 0;
fail:
	fm_route_reset(r);
	return -EHOSTUNREACH;
}

/* Number of candidate intermediate supernodes between @a and @b. */
static u32 fm_nr_via(const struct fm_topology *t, u32 a, u32 b)
{
	return t->nr_supernodes - 1 - (a != b);
}

/* The @j-th candidate intermediate supernode: @j-th skipping @a and @b. */
static u32 fm_via_sn(u32 j, u32 a, u32 b)
{
	u32 lo = a < b ? a : b, hi = a < b ? b : a;

	if (j >= lo)
		j++;
	if (hi != lo && j >= hi)
		j++;
	return j;
}

/*
 * First copy in [@from, @nd) whose direct route @s -> @dst (other
 * supernodes) is usable: its D link up (the pair's inter-supernode
 * table) and its ends reachable by L from @s and @dst (their intra
 * tables); @nd if none.  Tables present: what fm_next_bit() finds in the
 * fm_direct_copies() mask, without building it.
 */
static u32 fm_next_usable(const struct fm_topology *t, u32 s, u32 dst,
			  u32 from, u32 nd)
{
	const struct fm_rtab *rt = t->rt;
	u32 H = t->hubs_per_sn, d = t->d_links_per_pair;
	u32 a = s / H, b = dst / H, p;
	const u64 *live = &rt->pair_live[(size_t)fm_sn_pair(t, a, b) *
					 t->mask_words];
	const struct fm_rt_dport *qa = &rt->fast->dport[fm_dist(t, a, b) * d];
	const struct fm_rt_dport *qb = &rt->fast->dport[fm_dist(t, b, a) * d];
	u32 up_s = rt->hub_l_up[s], up_d = rt->hub_l_up[dst];

	for (p = fm_next_bit(live, from, nd); p < nd;
	     p = fm_next_bit(live, p + 1, nd))
		if ((up_s >> qa[p].index & 1) && (up_d >> qb[p].index & 1))
			break;
	return p;
}

/*
 * The list of routes hw_direct_striped cycles through and fm_route_next()
 * walks: positions 0 .. nd - 1 are direct routes (one per copy between two
 * supernodes, the L hop within one), positions nd .. nd + nr_via - 1 the
 * indirect routes in candidate order.  Find the first usable route at a
 * position in [@from, @to), write it into @r and return its position; -1
 * if there is none.  @v: the usable copies (direct routes) of the pair, or
 * NULL to test each copy against the link state tables instead.
 */
static int fm_list_find(const struct fm_topology *t, u32 s, u32 dst,
			const u64 *v, u32 nd, u32 from, u32 to,
			struct fm_route *r)
{
	u32 a = fm_hub_supernode(t, s), b = fm_hub_supernode(t, dst), p;

	if (from < nd) {
		if (a == b)
			p = fm_l_usable(t, s, dst) ? from : nd;
		else if (v)
			p = fm_next_bit(v, from, nd);
		else
			p = fm_next_usable(t, s, dst, from, nd);
		if (p < to && p < nd) {
			fm_route_reset(r);
			if (a == b) {
				fm_add_hop(t, r, s, dst, false, 0);
			} else {
				u32 y = fm_add_exit(t, r, s, b, p);

				if (y != dst)
					fm_add_hop(t, r, y, dst, false, 0);
			}
			return p;
		}
		from = nd;
	}
	for (p = from; p < to; p++)
		if (!fm_route_via(t, s, dst, fm_via_sn(p - nd, a, b), r))
			return p;
	return -1;
}

/*
 * Number of direct positions of the list, and in @v the usable copies;
 * with the fast tables @v is not filled and NULL is returned in @vp.
 */
static u32 fm_list_direct(const struct fm_topology *t, u32 s, u32 dst,
			  u64 *v, const u64 **vp)
{
	*vp = v;
	if (fm_hub_supernode(t, s) == fm_hub_supernode(t, dst))
		return 1;
	if (fm_fast(t))
		*vp = NULL;
	else
		fm_direct_copies(t, s, dst, v);
	return t->d_links_per_pair;
}

static u32 fm_xorshift32(u32 *state)
{
	u32 x = *state ? *state : FM_SEED_DEFAULT;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/**
 * fm_route_cursor_init() - set up a source's route cursor
 * @c: the cursor
 * @seed: seed of the pseudo-random choice; 0 picks a fixed default
 *
 * A zero-filled cursor is valid too and behaves as one seeded with 0.
 */
void fm_route_cursor_init(struct fm_route_cursor *c, u32 seed)
{
	c->next = 0;
	c->seed = seed ? seed : FM_SEED_DEFAULT;
}

/* Checks shared by fm_route(), fm_route_count() and fm_route_next(). */
static int fm_route_args(const struct fm_topology *t, u32 s, u32 dst,
			 unsigned int mode, u32 arg)
{
	u32 a, b;

	if (s >= t->nr_hubs || dst >= t->nr_hubs)
		return -EHOSTUNREACH;
	if (mode > PERCS_ROUTE_MAX)
		return -EINVAL;
	a = fm_hub_supernode(t, s);
	b = fm_hub_supernode(t, dst);
	if (mode == PERCS_ROUTE_SW_INDIRECT &&
	    (arg >= t->nr_supernodes || arg == a || arg == b))
		return -EINVAL;
	return 0;
}

static void fm_route_start(const struct fm_topology *t, u32 s, u32 dst,
			   unsigned int mode, struct fm_route *r)
{
	memset(r, 0, sizeof(*r));
	r->via_sn = FM_NO_SN;
	r->mode = mode;
	if (s >= t->nr_hubs || dst >= t->nr_hubs)
		return;
	if (s == dst)
		r->route_class = FM_ROUTE_SAME_HUB;
	else if (fm_hub_supernode(t, s) == fm_hub_supernode(t, dst))
		r->route_class = FM_ROUTE_INTRA_SN;
	else
		r->route_class = FM_ROUTE_INTER_SN;
}

/**
 * fm_route() - the route of one packet
 * @t: the topology
 * @src_hub: source hub
 * @dst_hub: destination hub
 * @mode: enum percs_route_mode (&percs_pkt_hdr.route)
 * @arg: the intermediate supernode for %PERCS_ROUTE_SW_INDIRECT
 *	(&percs_pkt_hdr.route_arg); ignored by the other modes
 * @cur: the source's cursor for the hardware choices
 *	(%PERCS_ROUTE_DIRECT_STRIPED advances its round robin,
 *	%PERCS_ROUTE_HW_INDIRECT its pseudo-random state); NULL: a fresh
 *	cursor every time, hence always the same choice
 * @r: out: the route (zeroed first; no hop on error)
 *
 * The routes and choices are described at the top of route.c; a route
 * never crosses a link that is down.  One hub to itself is the empty
 * route in every mode.  Cost: O(hops) table look-ups while the route
 * chosen first is usable (route.c).
 *
 * Return: 0; -EHOSTUNREACH if a hub is outside the topology or no route
 * of the mode is left between the two hubs (links down, or no candidate
 * intermediate supernode in a system of two); -EINVAL for an unknown
 * mode or, with %PERCS_ROUTE_SW_INDIRECT, an @arg that is not a
 * supernode or is the source's or the destination's.
 */
int fm_route(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
	     unsigned int mode, u32 arg, struct fm_route_cursor *cur,
	     struct fm_route *r)
{
	struct fm_route_cursor fresh = { 0, 0 };
	u32 a, b, n, nd, j, i;
	u64 v[FM_MASK_WORDS];
	const u64 *vp;
	int ret, p;

	fm_route_start(t, src_hub, dst_hub, mode, r);
	ret = fm_route_args(t, src_hub, dst_hub, mode, arg);
	if (ret || src_hub == dst_hub)
		return ret;
	if (!cur)
		cur = &fresh;
	a = fm_hub_supernode(t, src_hub);
	b = fm_hub_supernode(t, dst_hub);
	switch (mode) {
	case PERCS_ROUTE_DIRECT:
		ret = fm_add_direct(t, r, src_hub, dst_hub);
		if (ret)
			fm_route_reset(r);
		return ret;
	case PERCS_ROUTE_SW_INDIRECT:
		return fm_route_via(t, src_hub, dst_hub, arg, r);
	case PERCS_ROUTE_HW_INDIRECT:
		n = fm_nr_via(t, a, b);
		if (!n)
			return -EHOSTUNREACH;
		j = fm_xorshift32(&cur->seed) % n;
		for (i = 0; i < n; i++) {
			u32 m = fm_via_sn((j + i) % n, a, b);

			if (!fm_route_via(t, src_hub, dst_hub, m, r))
				return 0;
		}
		return -EHOSTUNREACH;
	default: /* PERCS_ROUTE_DIRECT_STRIPED */
		nd = fm_list_direct(t, src_hub, dst_hub, v, &vp);
		n = nd + fm_nr_via(t, a, b);
		j = cur->next % n;
		p = fm_list_find(t, src_hub, dst_hub, vp, nd, j, n, r);
		if (p < 0)
			p = fm_list_find(t, src_hub, dst_hub, vp, nd, 0, j, r);
		if (p < 0)
			return -EHOSTUNREACH;
		cur->next = p + 1;
		return 0;
	}
}

/**
 * fm_route_direct() - the hw_direct route between two hubs
 * @t: the topology
 * @src_hub: source hub
 * @dst_hub: destination hub
 * @r: out: the route (zeroed first)
 *
 * fm_route() with %PERCS_ROUTE_DIRECT: same hub, no hop; same supernode,
 * one L hop; different supernodes, a shortest usable L-D-L route.
 *
 * Return: 0, or -EHOSTUNREACH if a hub is outside the topology or every
 * direct route between them is down.
 */
int fm_route_direct(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		    struct fm_route *r)
{
	return fm_route(t, src_hub, dst_hub, PERCS_ROUTE_DIRECT, 0, NULL, r);
}

/**
 * fm_route_to_sn() - the route from a hub into another supernode
 * @t: the topology
 * @src_hub: source hub
 * @sn: a supernode other than the source's
 * @r: out: the route (zeroed first): at most L-D, ending on the hub of
 *	@sn where an indirect route through @sn meets its intermediate hub
 *
 * The first part of every indirect route through @sn from @src_hub
 * (route.c), on its own.
 *
 * Return: 0; -EINVAL if @src_hub or @sn is outside the topology or @sn is
 * the source's supernode; -EHOSTUNREACH if no link into @sn is usable.
 */
int fm_route_to_sn(const struct fm_topology *t, u32 src_hub, u32 sn,
		   struct fm_route *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->via_sn = FM_NO_SN;
	r->route_class = FM_ROUTE_INTER_SN;
	if (src_hub >= t->nr_hubs || sn >= t->nr_supernodes ||
	    sn == fm_hub_supernode(t, src_hub))
		return -EINVAL;
	ret = fm_add_to_sn(t, r, src_hub, sn);
	if (ret)
		fm_route_reset(r);
	return ret;
}

/**
 * fm_route_next() - list the routes a mode may use between two hubs
 * @t: the topology
 * @src_hub: source hub
 * @dst_hub: destination hub
 * @mode: enum percs_route_mode
 * @arg: intermediate supernode for %PERCS_ROUTE_SW_INDIRECT
 * @it: position in the list, zeroed before the first call
 * @r: out: the next route
 *
 * The list: hw_direct and sw_indirect, the route fm_route() gives;
 * hw_indirect, the usable route through each candidate supernode in
 * supernode order; hw_direct_striped, every usable direct route (in copy
 * order) and then every usable indirect route, the round robin's order.
 * One hub to itself: the empty route.  A simulator that spreads a flow
 * evenly over these routes loads links as the hardware mode does on
 * average.
 *
 * Return: 0 with the next route in @r; -ENOENT past the last route (at
 * once if none is usable); -EHOSTUNREACH for a hub outside the topology;
 * -EINVAL as fm_route().
 */
int fm_route_next(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		  unsigned int mode, u32 arg, struct fm_route_iter *it,
		  struct fm_route *r)
{
	u32 a, b, nd = 0, n;
	u64 v[FM_MASK_WORDS];
	const u64 *vp = v;
	int ret, p;

	fm_route_start(t, src_hub, dst_hub, mode, r);
	ret = fm_route_args(t, src_hub, dst_hub, mode, arg);
	if (ret)
		return ret;
	if (src_hub == dst_hub || mode == PERCS_ROUTE_DIRECT ||
	    mode == PERCS_ROUTE_SW_INDIRECT) {
		if (it->pos)
			return -ENOENT;
		it->pos = 1;
		ret = fm_route(t, src_hub, dst_hub, mode, arg, NULL, r);
		return ret == -EHOSTUNREACH ? -ENOENT : ret;
	}
	a = fm_hub_supernode(t, src_hub);
	b = fm_hub_supernode(t, dst_hub);
	if (mode == PERCS_ROUTE_DIRECT_STRIPED)
		nd = fm_list_direct(t, src_hub, dst_hub, v, &vp);
	n = nd + fm_nr_via(t, a, b);
	if (it->pos >= n)
		return -ENOENT;
	p = fm_list_find(t, src_hub, dst_hub, vp, nd, it->pos, n, r);
	if (p < 0) {
		it->pos = n;
		fm_route_reset(r);
		return -ENOENT;
	}
	it->pos = p + 1;
	return 0;
}

/**
 * fm_route_count() - how many routes fm_route_next() lists
 * @t: the topology
 * @src_hub: source hub
 * @dst_hub: destination hub
 * @mode: enum percs_route_mode
 * @arg: intermediate supernode for %PERCS_ROUTE_SW_INDIRECT
 *
 * Return: the number of usable routes of the mode (0 when none is left;
 * 1 from a hub to itself); -EHOSTUNREACH or -EINVAL as fm_route_next().
 */
int fm_route_count(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		   unsigned int mode, u32 arg)
{
	struct fm_route_iter it = { 0 };
	struct fm_route r;
	int n = 0, ret;

	while (!(ret = fm_route_next(t, src_hub, dst_hub, mode, arg, &it,
				     &r)))
		n++;
	return ret == -ENOENT ? n : ret;
}

/**
 * fm_route_mode_name() - the Power 775 name of a route mode
 * @mode: enum percs_route_mode
 *
 * Return: "hw_direct", "hw_direct_striped", "sw_indirect", "hw_indirect",
 * or "?" for a value outside the enum.
 */
const char *fm_route_mode_name(unsigned int mode)
{
	return mode <= PERCS_ROUTE_MAX ? fm_route_mode_names[mode] : "?";
}

/* The table entry of a choice: the copy, or FM_RT_NONE. */
static u16 fm_rt_entry(int c)
{
	return c < 0 ? FM_RT_NONE : (u16)c;
}

/**
 * fm_rt_fast_build() - fill the fast path's choice tables, every link up
 * @t: the topology, its link state tables just built
 *
 * Every link up, a choice depends only on hub indices and supernode
 * distances (top of this file): the rows of supernode 0's hubs are
 * computed, those of supernode a are the same rows turned by a
 * supernodes.  O(H * nr_hubs) choices plus O(nr_hubs^2) copying.
 */
void fm_rt_fast_build(const struct fm_topology *t)
{
	struct fm_rt_fast *f = t->rt->fast;
	u32 H = t->hubs_per_sn, N = t->nr_hubs, S = t->nr_supernodes;
	u32 i, x, a, m;

	if (!f || !f->direct)
		return;
	for (i = 0; i < H; i++) {
		u16 *row = &f->direct[(size_t)i * N];
		u16 *row_sn = &f->to_sn[(size_t)i * S];

		for (x = H; x < N; x++)
			row[x] = fm_rt_entry(fm_pick_direct(t, i, x));
		row_sn[0] = FM_RT_NONE;
		for (m = 1; m < S; m++)
			row_sn[m] = fm_rt_entry(fm_pick_to_sn(t, i, m));
	}
	for (a = 1; a < S; a++) {
		for (i = 0; i < H; i++) {
			const u16 *src = &f->direct[(size_t)i * N];
			u16 *dst = &f->direct[(size_t)(a * H + i) * N];
			const u16 *src_sn = &f->to_sn[(size_t)i * S];
			u16 *dst_sn = &f->to_sn[(size_t)(a * H + i) * S];

			/* dst[(x + a * H) mod N] = src[x] */
			memcpy(dst + a * H, src, (N - a * H) * sizeof(u16));
			memcpy(dst, src + N - a * H, a * H * sizeof(u16));
			memcpy(dst_sn + a, src_sn, (S - a) * sizeof(u16));
			memcpy(dst_sn, src_sn + S - a, a * sizeof(u16));
		}
	}
}

/**
 * fm_rt_fast_pair_changed() - a D link between two supernodes changed
 * @t: the topology
 * @sn_a: one end's supernode
 * @sn_b: the other's
 *
 * Recomputes the choices that read the pair's inter-supernode table
 * entry: hw_direct between their hubs, the route of each into the other.
 * O(H^2) choices.
 */
void fm_rt_fast_pair_changed(const struct fm_topology *t, u32 sn_a, u32 sn_b)
{
	struct fm_rt_fast *f = t->rt->fast;
	u32 H = t->hubs_per_sn, N = t->nr_hubs, S = t->nr_supernodes;
	u32 i, j, s, x;

	if (!f || !f->direct)
		return;
	for (i = 0; i < H; i++) {
		for (j = 0; j < H; j++) {
			s = sn_a * H + i;
			x = sn_b * H + j;
			f->direct[(size_t)s * N + x] =
				fm_rt_entry(fm_pick_direct(t, s, x));
			f->direct[(size_t)x * N + s] =
				fm_rt_entry(fm_pick_direct(t, x, s));
		}
		s = sn_a * H + i;
		f->to_sn[(size_t)s * S + sn_b] =
			fm_rt_entry(fm_pick_to_sn(t, s, sn_b));
		s = sn_b * H + i;
		f->to_sn[(size_t)s * S + sn_a] =
			fm_rt_entry(fm_pick_to_sn(t, s, sn_a));
	}
}

/**
 * fm_rt_fast_hub_changed() - an L link of a hub changed
 * @t: the topology
 * @hub: one end of the link (called for each)
 *
 * Recomputes the choices that read the hub's intra-supernode table:
 * hw_direct from and to the hub, its routes into other supernodes.
 * O(nr_hubs) choices.
 */
void fm_rt_fast_hub_changed(const struct fm_topology *t, u32 hub)
{
	struct fm_rt_fast *f = t->rt->fast;
	u32 N = t->nr_hubs, S = t->nr_supernodes;
	u32 a = fm_hub_supernode(t, hub), x, m;

	if (!f || !f->direct)
		return;
	for (x = 0; x < N; x++) {
		if (fm_hub_supernode(t, x) == a)
			continue;
		f->direct[(size_t)hub * N + x] =
			fm_rt_entry(fm_pick_direct(t, hub, x));
		f->direct[(size_t)x * N + hub] =
			fm_rt_entry(fm_pick_direct(t, x, hub));
	}
	for (m = 0; m < S; m++)
		f->to_sn[(size_t)hub * S + m] = m == a ? FM_RT_NONE :
			fm_rt_entry(fm_pick_to_sn(t, hub, m));
}
