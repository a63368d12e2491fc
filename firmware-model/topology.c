// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: ISR topology and direct routes.
 *
 * D-link wiring
 * -------------
 * S supernodes of H hubs; each hub has 16 D-link ports.  Every pair of
 * supernodes is joined by the same number of D links,
 *
 *	d = min(16 * H, floor(16 * H / (S - 1)))	(d = 0 when S = 1)
 *
 * so a supernode uses P = (S - 1) * d of its 16 * H ports.  Supernode a
 * numbers the ports it uses q = 0 .. P - 1: copy c (0 <= c < d) of its
 * link to supernode b != a is
 *
 *	q(a, b, c) = ((b - a - 1) mod S) * d + c
 *
 * ((b - a - 1) mod S is b's distance after a counting cyclically, 0..S-2)
 * and port q is D port q / H of hub index q mod H of supernode a.  The
 * two ends of that link are therefore
 *
 *	hub_a = a * H + (((b - a - 1) mod S) * d + c) mod H
 *	hub_b = b * H + (((a - b - 1) mod S) * d + c) mod H
 *
 * which is symmetric by construction.  Consequences:
 *  - hub index i carries the ports q = i, i + H, i + 2H, ... < P: either
 *    floor(P / H) or ceil(P / H) <= 16 of them (hubs differ by at most one);
 *  - the d copies of one pair sit on consecutive ports, hence on d distinct
 *    hubs at each end while d <= H (spread evenly over all hubs beyond);
 *  - with d = 1 the D links of one hub go to distinct supernodes;
 *  - the wiring is invariant under renumbering supernodes a -> a + k mod S,
 *    so every supernode sees the same pattern.
 *
 * Routes and virtual channels
 * ---------------------------
 * A direct route is L-D-L at most; an L hop is left out when the packet is
 * already on the right hub.  Direct routes use copy 0 of the D link.  The
 * virtual channel of a hop is its position in the worst-case template
 * L0-D0-L1-D1-L2: the number of D hops before it on the route.  VC numbers
 * thus strictly increase along every route in the order L0 < D0 < L1 < D1
 * < L2, so the channel dependency graph has no cycle (no deadlock).  A D-L
 * route uses D vc 0 then L vc 1, not L vc 0: L vc 0 is what packets
 * waiting for a D link hold, and sharing it with packets that have crossed
 * one could close a cycle.
 */
#include "topology.h"

static const char *const fm_link_class_names[FM_LINK_NR_CLASSES] = {
	[FM_LINK_LL] = "LL",
	[FM_LINK_LR] = "LR",
	[FM_LINK_D] = "D",
};

static const char *const fm_route_class_names[] = {
	[FM_ROUTE_SAME_HUB] = "same-hub",
	[FM_ROUTE_INTRA_SN] = "intra-supernode",
	[FM_ROUTE_INTER_SN] = "inter-supernode",
};

/**
 * fm_topo_init() - validate a system shape and fill in a topology
 * @t: filled on success, untouched on error
 * @nr_supernodes: supernodes, 1..min(16 * @hubs_per_sn + 1, 512)
 * @hubs_per_sn: hubs per supernode, 1..32
 * @err: buffer for a one-line message without newline; may be NULL when
 *	@errlen is 0; set to "" on success
 * @errlen: size of @err
 *
 * Each hub has 16 D links and every pair of supernodes needs at least one,
 * which bounds the supernodes a given supernode size can join.
 *
 * Return: 0, or -EINVAL with a message in @err.
 */
int fm_topo_init(struct fm_topology *t, u32 nr_supernodes, u32 hubs_per_sn,
		 char *err, size_t errlen)
{
	u32 d_ports = FM_D_PORTS_PER_HUB * hubs_per_sn;
	u32 max_sn;

	if (hubs_per_sn < 1) {
		fm_snprintf(err, errlen,
			    "hubs_per_supernode=0: a supernode has at least 1 hub");
		return -EINVAL;
	}
	if (hubs_per_sn > FM_MAX_HUBS_PER_SN) {
		fm_snprintf(err, errlen,
			    "hubs_per_supernode=%u: a supernode has at most %u hubs",
			    hubs_per_sn, FM_MAX_HUBS_PER_SN);
		return -EINVAL;
	}
	if (nr_supernodes < 1) {
		fm_snprintf(err, errlen,
			    "supernodes=0: the system has at least 1 supernode");
		return -EINVAL;
	}
	if (nr_supernodes > FM_MAX_SUPERNODES) {
		fm_snprintf(err, errlen,
			    "supernodes=%u: the system has at most %u supernodes",
			    nr_supernodes, FM_MAX_SUPERNODES);
		return -EINVAL;
	}
	max_sn = d_ports + 1;
	if (nr_supernodes > max_sn) {
		fm_snprintf(err, errlen,
			    "supernodes=%u: at most %u with hubs_per_supernode=%u (%u D links per hub, at least one per pair of supernodes)",
			    nr_supernodes, max_sn, hubs_per_sn,
			    FM_D_PORTS_PER_HUB);
		return -EINVAL;
	}

	t->nr_supernodes = nr_supernodes;
	t->hubs_per_sn = hubs_per_sn;
	t->nr_hubs = nr_supernodes * hubs_per_sn;
	t->d_links_per_pair = nr_supernodes > 1 ?
			      d_ports / (nr_supernodes - 1) : 0;
	t->d_ports_per_sn = (nr_supernodes - 1) * t->d_links_per_pair;
	if (errlen)
		err[0] = '\0';
	return 0;
}

/* Class of the L link between two distinct hubs of one supernode. */
static u8 fm_l_class(const struct fm_topology *t, u32 hub_a, u32 hub_b)
{
	u32 drawer_a = fm_hub_index(t, hub_a) / FM_HUBS_PER_DRAWER;
	u32 drawer_b = fm_hub_index(t, hub_b) / FM_HUBS_PER_DRAWER;

	return drawer_a == drawer_b ? FM_LINK_LL : FM_LINK_LR;
}

/**
 * fm_l_link_class() - class of the L link between two hubs
 * @t: the topology
 * @hub_a: one hub
 * @hub_b: another hub of the same supernode
 *
 * Return: %FM_LINK_LL if the hubs share a drawer, %FM_LINK_LR if not, or
 * -EINVAL if they are the same hub, in different supernodes or outside the
 * topology.
 */
int fm_l_link_class(const struct fm_topology *t, u32 hub_a, u32 hub_b)
{
	if (hub_a >= t->nr_hubs || hub_b >= t->nr_hubs || hub_a == hub_b ||
	    fm_hub_supernode(t, hub_a) != fm_hub_supernode(t, hub_b))
		return -EINVAL;
	return fm_l_class(t, hub_a, hub_b);
}

/* Hub at supernode @a's end of copy @c of its D link to @b (a != b). */
static u32 fm_d_end(const struct fm_topology *t, u32 a, u32 b, u32 c)
{
	u32 dist = (b + t->nr_supernodes - a - 1) % t->nr_supernodes;
	u32 q = dist * t->d_links_per_pair + c;

	return a * t->hubs_per_sn + q % t->hubs_per_sn;
}

/**
 * fm_d_link() - endpoints of one D link
 * @t: the topology
 * @sn_a: one supernode
 * @sn_b: another supernode
 * @copy: which of the links between them, 0..@t->d_links_per_pair - 1
 * @hub_a: out: the link's hub in @sn_a
 * @hub_b: out: the link's hub in @sn_b
 *
 * The wiring is described at the top of this file.  Swapping @sn_a and
 * @sn_b gives the same link with its ends swapped.
 *
 * Return: 0, or -EINVAL if @sn_a == @sn_b, a supernode is outside the
 * topology or @copy is out of range.
 */
int fm_d_link(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy,
	      u32 *hub_a, u32 *hub_b)
{
	if (sn_a >= t->nr_supernodes || sn_b >= t->nr_supernodes ||
	    sn_a == sn_b || copy >= t->d_links_per_pair)
		return -EINVAL;
	*hub_a = fm_d_end(t, sn_a, sn_b, copy);
	*hub_b = fm_d_end(t, sn_b, sn_a, copy);
	return 0;
}

/**
 * fm_hub_d_ports() - D-link ports in use on a hub
 * @t: the topology
 * @hub: hub number
 *
 * Ports 0..n-1 of the hub are in use, n <= %FM_D_PORTS_PER_HUB.
 *
 * Return: n, or 0 for a hub outside the topology.
 */
u32 fm_hub_d_ports(const struct fm_topology *t, u32 hub)
{
	u32 i;

	if (hub >= t->nr_hubs)
		return 0;
	i = fm_hub_index(t, hub);
	if (i >= t->d_ports_per_sn)
		return 0;
	return FM_DIV_ROUND_UP(t->d_ports_per_sn - i, t->hubs_per_sn);
}

/**
 * fm_hub_d_port() - the D link on one port of a hub
 * @t: the topology
 * @hub: hub number
 * @port: D port of the hub, 0..%FM_D_PORTS_PER_HUB - 1
 * @peer_sn: out: the supernode at the other end
 * @copy: out: which of the links between the two supernodes it is (the
 *	@copy argument of fm_d_link())
 *
 * Return: 0; -EINVAL for a hub outside the topology or a port number of
 * %FM_D_PORTS_PER_HUB or more; -ENOENT for a port that is not wired.
 */
int fm_hub_d_port(const struct fm_topology *t, u32 hub, u32 port,
		  u32 *peer_sn, u32 *copy)
{
	u32 sn, q, d = t->d_links_per_pair;

	if (hub >= t->nr_hubs || port >= FM_D_PORTS_PER_HUB)
		return -EINVAL;
	q = fm_hub_index(t, hub) + port * t->hubs_per_sn;
	if (q >= t->d_ports_per_sn)
		return -ENOENT;
	sn = fm_hub_supernode(t, hub);
	*peer_sn = (sn + 1 + q / d) % t->nr_supernodes;
	*copy = q % d;
	return 0;
}

/* Append a hop; its VC is the number of D hops before it. */
static void fm_route_add(struct fm_route *r, u32 from, u32 to, u8 link_class,
			 u8 d_copy)
{
	struct fm_hop *hop = &r->hop[r->nr_hops];
	u8 vc = 0;

	if (r->nr_hops) {
		const struct fm_hop *prev = hop - 1;

		vc = prev->vc + (prev->link_class == FM_LINK_D);
	}
	hop->from_hub = from;
	hop->to_hub = to;
	hop->link_class = link_class;
	hop->vc = vc;
	hop->d_copy = d_copy;
	r->nr_hops++;
}

/**
 * fm_route_direct() - the direct route between two hubs
 * @t: the topology
 * @src_hub: source hub
 * @dst_hub: destination hub
 * @r: out: the route (zeroed first)
 *
 * Same hub: no hop.  Same supernode: one L hop, LL or LR.  Different
 * supernodes: L-D-L over copy 0 of the D link between the two supernodes,
 * without the first (last) L hop when @src_hub (@dst_hub) is itself that
 * link's end.  Virtual channels as described at the top of this file.
 *
 * Return: 0, or -EHOSTUNREACH if a hub is outside the topology.
 */
int fm_route_direct(const struct fm_topology *t, u32 src_hub, u32 dst_hub,
		    struct fm_route *r)
{
	u32 src_sn, dst_sn, x, y;

	memset(r, 0, sizeof(*r));
	if (src_hub >= t->nr_hubs || dst_hub >= t->nr_hubs)
		return -EHOSTUNREACH;
	if (src_hub == dst_hub) {
		r->route_class = FM_ROUTE_SAME_HUB;
		return 0;
	}
	src_sn = fm_hub_supernode(t, src_hub);
	dst_sn = fm_hub_supernode(t, dst_hub);
	if (src_sn == dst_sn) {
		r->route_class = FM_ROUTE_INTRA_SN;
		fm_route_add(r, src_hub, dst_hub,
			     fm_l_class(t, src_hub, dst_hub), 0);
		return 0;
	}

	r->route_class = FM_ROUTE_INTER_SN;
	x = fm_d_end(t, src_sn, dst_sn, 0);
	y = fm_d_end(t, dst_sn, src_sn, 0);
	if (src_hub != x)
		fm_route_add(r, src_hub, x, fm_l_class(t, src_hub, x), 0);
	fm_route_add(r, x, y, FM_LINK_D, 0);
	if (y != dst_hub)
		fm_route_add(r, y, dst_hub, fm_l_class(t, y, dst_hub), 0);
	return 0;
}

/**
 * fm_link_class_name() - short name of a link class
 * @c: enum fm_link_class
 *
 * Return: "LL", "LR", "D", or "?" for a value outside the enum.
 */
const char *fm_link_class_name(unsigned int c)
{
	return c < FM_ARRAY_SIZE(fm_link_class_names) ?
	       fm_link_class_names[c] : "?";
}

/**
 * fm_route_class_name() - short name of a route class
 * @c: enum fm_route_class
 *
 * Return: "same-hub", "intra-supernode", "inter-supernode", or "?" for a
 * value outside the enum.
 */
const char *fm_route_class_name(unsigned int c)
{
	return c < FM_ARRAY_SIZE(fm_route_class_names) ?
	       fm_route_class_names[c] : "?";
}
