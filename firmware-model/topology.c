// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: ISR topology (the system's shape and its wiring).
 *
 * D-link wiring
 * -------------
 * S supernodes of H hubs; each hub has 16 D-link ports, of which a spec
 * may let it use only u (dhub=u; default 16).  Every pair of supernodes
 * is joined by the same number of D links, by default as many as fit,
 *
 *	d = floor(u * H / (S - 1))	(d = 0 when S = 1)
 *
 * or fewer (dpair=d), so a supernode uses P = (S - 1) * d of its u * H
 * ports.  Supernode a
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
 *    floor(P / H) or ceil(P / H) <= u of them (hubs differ by at most one);
 *  - the d copies of one pair sit on consecutive ports, hence on d distinct
 *    hubs at each end while d <= H (spread evenly over all hubs beyond);
 *  - with d = 1 the D links of one hub go to distinct supernodes: with
 *    S = 32u + 1 supernodes of 32 hubs (spec "du") every hub has u D
 *    links to u distinct supernodes, the system of section VII.A;
 *  - the wiring is invariant under renumbering supernodes a -> a + k mod S,
 *    so every supernode sees the same pattern.
 *
 * L links and ports
 * ------------------
 * Hub indices fill drawers of 8 in order: drawer k holds indices 8k ..
 * 8k + 7 (the last drawer of a supernode whose size is not a multiple of
 * 8 holds the rest).  Two hubs of one drawer are joined by an LL link, two
 * hubs of different drawers by an LR link.  A full supernode gives each
 * hub 7 LL + 24 LR links; a smaller one gives hub index i
 * (size of its drawer - 1) LL and (H - size of its drawer) LR links, e.g.
 * with H = 12: indices 0..7 have 7 LL + 4 LR, indices 8..11 3 LL + 8 LR.
 *
 * ISR port numbers of a hub (FM_PORT_*): the LL link to index j of the
 * same drawer is port j mod 8, minus one when j mod 8 is above the hub's
 * own; the LR link to index j is port 7 + j, minus 8 when j lies above the
 * hub's own drawer; D port p (0..15) is port 31 + p; then 8 HFI ports and
 * the service port.  A port's number does not depend on the supernode size.
 *
 * Link numbering is in link.c, routes in route.c.
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

/* Check a spec's numbers; all of fm_topo_parse()'s range messages. */
static int fm_topo_check(const struct fm_topo_spec *s, u32 *d_per_pair,
			 char *err, size_t errlen)
{
	u32 dhub = s->d_per_hub ? s->d_per_hub : FM_D_PORTS_PER_HUB;
	u32 nsn = s->supernodes, hubs = s->hubs_per_sn, max_sn, max_pair;

	if (hubs < 1 || hubs > FM_MAX_HUBS_PER_SN) {
		fm_snprintf(err, errlen,
			    "hubs_per_supernode=%u: a supernode has 1..%u hubs",
			    hubs, FM_MAX_HUBS_PER_SN);
		return -EINVAL;
	}
	if (nsn < 1 || nsn > FM_MAX_SUPERNODES) {
		fm_snprintf(err, errlen,
			    "supernodes=%u: the system has 1..%u supernodes",
			    nsn, FM_MAX_SUPERNODES);
		return -EINVAL;
	}
	if (s->d_per_hub > FM_D_PORTS_PER_HUB) {
		fm_snprintf(err, errlen,
			    "dhub=%u: a hub has 1..%u D ports", s->d_per_hub,
			    FM_D_PORTS_PER_HUB);
		return -EINVAL;
	}
	if (nsn == 1 && (s->d_per_pair || s->d_per_hub)) {
		fm_snprintf(err, errlen,
			    "%s=%u: a system of one supernode has no D links",
			    s->d_per_pair ? "dpair" : "dhub",
			    s->d_per_pair ? s->d_per_pair : s->d_per_hub);
		return -EINVAL;
	}
	max_sn = dhub * hubs + 1;
	if (nsn > max_sn) {
		fm_snprintf(err, errlen,
			    "supernodes=%u: at most %u with %u hubs per supernode and %u D ports per hub (every pair of supernodes needs a D link)",
			    nsn, max_sn, hubs, dhub);
		return -EINVAL;
	}
	max_pair = nsn > 1 ? dhub * hubs / (nsn - 1) : 0;
	if (s->d_per_pair > max_pair) {
		fm_snprintf(err, errlen,
			    "dpair=%u: at most %u D links per pair of %u supernodes of %u hubs with %u D ports per hub",
			    s->d_per_pair, max_pair, nsn, hubs, dhub);
		return -EINVAL;
	}
	*d_per_pair = s->d_per_pair ? s->d_per_pair : max_pair;
	return 0;
}

/**
 * fm_topo_init_spec() - validate a system shape and fill in a topology
 * @t: filled on success (without route tables: @t->rt is NULL), untouched
 *	on error; must not hold tables (fm_topo_free_tables() first)
 * @s: the shape: supernodes 1..513, hubs per supernode 1..32, D ports per
 *	hub 1..16 (0: 16) and D links per pair (0: the most those ports
 *	allow, floor(d_per_hub * hubs_per_sn / (supernodes - 1)))
 * @err: buffer for a one-line message without newline; may be NULL when
 *	@errlen is 0; set to "" on success
 * @errlen: size of @err
 *
 * Every pair of supernodes needs at least one D link, which bounds the
 * supernodes: at most d_per_hub * hubs_per_sn + 1.
 *
 * Return: 0, or -EINVAL with a message in @err.
 */
int fm_topo_init_spec(struct fm_topology *t, const struct fm_topo_spec *s,
		      char *err, size_t errlen)
{
	u32 S = s->supernodes, H = s->hubs_per_sn, d;
	int ret;

	ret = fm_topo_check(s, &d, err, errlen);
	if (ret)
		return ret;
	memset(t, 0, sizeof(*t));
	t->nr_supernodes = S;
	t->hubs_per_sn = H;
	t->nr_hubs = S * H;
	t->d_links_per_pair = d;
	t->d_ports_per_sn = (S - 1) * d;
	t->d_ports_per_hub = s->d_per_hub ? s->d_per_hub : FM_D_PORTS_PER_HUB;
	t->l_links_per_sn = H * (H - 1) / 2;
	t->nr_l_links = S * t->l_links_per_sn;
	t->nr_d_links = S * (S - 1) / 2 * d;
	t->nr_links = t->nr_l_links + t->nr_d_links;
	t->mask_words = FM_DIV_ROUND_UP(d, 64);
	if (errlen)
		err[0] = '\0';
	return 0;
}

/**
 * fm_topo_init() - fill in a topology of a given size
 * @t: filled on success (without route tables), untouched on error
 * @nr_supernodes: supernodes, 1..min(16 * @hubs_per_sn + 1, 513)
 * @hubs_per_sn: hubs per supernode, 1..32
 * @err: buffer for a one-line message without newline; may be NULL when
 *	@errlen is 0; set to "" on success
 * @errlen: size of @err
 *
 * fm_topo_init_spec() with all 16 D ports per hub in use and as many D
 * links per pair of supernodes as they allow.
 *
 * Return: 0, or -EINVAL with a message in @err.
 */
int fm_topo_init(struct fm_topology *t, u32 nr_supernodes, u32 hubs_per_sn,
		 char *err, size_t errlen)
{
	struct fm_topo_spec s = {
		.supernodes = nr_supernodes,
		.hubs_per_sn = hubs_per_sn,
	};

	return fm_topo_init_spec(t, &s, err, errlen);
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

/**
 * fm_l_port() - ISR port of a hub's L link to another hub
 * @t: the topology
 * @hub: the hub
 * @peer: another hub of the same supernode
 *
 * Numbering at the top of this file: LL ports 0..6, LR ports 7..30.
 *
 * Return: the port number, or -EINVAL if @peer is @hub, in another
 * supernode, or a hub is outside the topology.
 */
int fm_l_port(const struct fm_topology *t, u32 hub, u32 peer)
{
	u32 i, j;

	if (fm_l_link_class(t, hub, peer) < 0)
		return -EINVAL;
	i = fm_hub_index(t, hub);
	j = fm_hub_index(t, peer);
	if (i / FM_HUBS_PER_DRAWER == j / FM_HUBS_PER_DRAWER)
		return FM_PORT_LL + j % FM_HUBS_PER_DRAWER -
		       (j % FM_HUBS_PER_DRAWER > i % FM_HUBS_PER_DRAWER);
	return FM_PORT_LR + j -
	       (j / FM_HUBS_PER_DRAWER > i / FM_HUBS_PER_DRAWER ?
		FM_HUBS_PER_DRAWER : 0);
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
	*hub_a = sn_a * t->hubs_per_sn + fm_d_end_index(t, sn_a, sn_b, copy);
	*hub_b = sn_b * t->hubs_per_sn + fm_d_end_index(t, sn_b, sn_a, copy);
	return 0;
}

/**
 * fm_d_port() - ISR port of a D link at one of its ends
 * @t: the topology
 * @sn_a: the supernode of that end
 * @sn_b: the supernode at the other end
 * @copy: which of the links between them
 *
 * Return: %FM_PORT_D + the D port index (0..15) of the link on its hub in
 * @sn_a, or -EINVAL for arguments fm_d_link() refuses.
 */
int fm_d_port(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy)
{
	if (sn_a >= t->nr_supernodes || sn_b >= t->nr_supernodes ||
	    sn_a == sn_b || copy >= t->d_links_per_pair)
		return -EINVAL;
	return FM_PORT_D + (fm_sn_distance(t, sn_a, sn_b) *
			    t->d_links_per_pair + copy) / t->hubs_per_sn;
}

/**
 * fm_hub_d_ports() - D-link ports in use on a hub
 * @t: the topology
 * @hub: hub number
 *
 * D ports 0..n-1 of the hub are in use (ISR ports %FM_PORT_D ..
 * %FM_PORT_D + n - 1), n <= &fm_topology.d_ports_per_hub.
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
 * fm_hub_d_port() - the D link on one D port of a hub
 * @t: the topology
 * @hub: hub number
 * @port: D port index of the hub, 0..%FM_D_PORTS_PER_HUB - 1 (ISR port
 *	%FM_PORT_D + @port)
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

/**
 * fm_link_class_bw() - bandwidth of one link of a class, one direction
 * @c: enum fm_link_class
 *
 * Section VII.A's per-channel figures: a hub's bandwidth for the class
 * (336, 240, 320 GB/s) shared by its links of the class (7, 24, 16) and
 * halved per direction.
 *
 * Return: 24 (LL), 5 (LR), 10 (D) in the paper's unit (it writes GiB/s),
 * or 0 for a value outside the enum.
 */
u32 fm_link_class_bw(unsigned int c)
{
	switch (c) {
	case FM_LINK_LL:
		return FM_BW_LL_PER_HUB / FM_LL_PORTS_PER_HUB / 2;
	case FM_LINK_LR:
		return FM_BW_LR_PER_HUB / FM_LR_PORTS_PER_HUB / 2;
	case FM_LINK_D:
		return FM_BW_D_PER_HUB / FM_D_PORTS_PER_HUB / 2;
	default:
		return 0;
	}
}
