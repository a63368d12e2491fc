// SPDX-License-Identifier: GPL-2.0
/*
 * percs firmware model: link identities.
 *
 * With S supernodes of H hubs and d D links per pair:
 *
 *  - the L link between hub indices i < j of supernode s has id
 *	s * H(H-1)/2 + tri(i, j, H)
 *  - copy c of the D link between supernodes a < b has id
 *	S * H(H-1)/2 + tri(a, b, S) * d + c
 *
 * where tri(i, j, n) = i * (2n - i - 1) / 2 + (j - i - 1) numbers the
 * pairs i < j of 0..n-1 in order (0, 1), (0, 2), ..., (1, 2), ...  Ids are
 * dense, 0 .. nr_links - 1, computed in O(1); back from an id to its ends
 * in O(log S).
 */
#include "topology.h"

/* Inverse of fm_tri(): the pair (i, j) of index k < n(n-1)/2. */
static void fm_untri(u32 k, u32 n, u32 *i, u32 *j)
{
	u32 lo = 0, hi = n - 1;

	/* the largest i with fm_tri(i, i + 1, n) <= k */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (fm_tri(mid, mid + 1, n) <= k)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	*j = k - fm_tri(lo, lo + 1, n) + lo + 1;
}

/**
 * fm_l_link_id() - id of the L link between two hubs
 * @t: the topology
 * @hub_a: one hub
 * @hub_b: another hub of the same supernode
 * @id: out: the link id
 *
 * Return: 0, or -EINVAL if the hubs are equal, in different supernodes or
 * outside the topology.
 */
int fm_l_link_id(const struct fm_topology *t, u32 hub_a, u32 hub_b, u32 *id)
{
	u32 i, j;

	if (fm_l_link_class(t, hub_a, hub_b) < 0)
		return -EINVAL;
	i = fm_hub_index(t, hub_a);
	j = fm_hub_index(t, hub_b);
	if (i > j) {
		u32 x = i;

		i = j;
		j = x;
	}
	*id = fm_hub_supernode(t, hub_a) * t->l_links_per_sn +
	      fm_tri(i, j, t->hubs_per_sn);
	return 0;
}

/**
 * fm_d_link_id() - id of one D link
 * @t: the topology
 * @sn_a: one supernode
 * @sn_b: another supernode
 * @copy: which of the links between them, below d_links_per_pair
 * @id: out: the link id
 *
 * Return: 0, or -EINVAL for arguments fm_d_link() refuses.
 */
int fm_d_link_id(const struct fm_topology *t, u32 sn_a, u32 sn_b, u32 copy,
		 u32 *id)
{
	u32 a = sn_a < sn_b ? sn_a : sn_b, b = sn_a < sn_b ? sn_b : sn_a;

	if (b >= t->nr_supernodes || a == b || copy >= t->d_links_per_pair)
		return -EINVAL;
	*id = t->nr_l_links +
	      fm_tri(a, b, t->nr_supernodes) * t->d_links_per_pair + copy;
	return 0;
}

/**
 * fm_link_info() - describe one link
 * @t: the topology
 * @id: link id
 * @li: out: the link (zeroed first)
 *
 * Return: 0, or -EINVAL for an id outside 0 .. nr_links - 1.
 */
int fm_link_info(const struct fm_topology *t, u32 id, struct fm_link_info *li)
{
	u32 i, j, k;

	memset(li, 0, sizeof(*li));
	if (id >= t->nr_links)
		return -EINVAL;
	li->id = id;
	li->up = fm_link_is_up(t, id);
	if (id < t->nr_l_links) {
		u32 base = id / t->l_links_per_sn * t->hubs_per_sn;

		fm_untri(id % t->l_links_per_sn, t->hubs_per_sn, &i, &j);
		li->hub[0] = base + i;
		li->hub[1] = base + j;
		li->link_class = fm_l_link_class(t, li->hub[0], li->hub[1]);
		li->port[0] = fm_l_port(t, li->hub[0], li->hub[1]);
		li->port[1] = fm_l_port(t, li->hub[1], li->hub[0]);
		return 0;
	}
	k = id - t->nr_l_links;
	li->link_class = FM_LINK_D;
	li->copy = k % t->d_links_per_pair;
	fm_untri(k / t->d_links_per_pair, t->nr_supernodes, &i, &j);
	fm_d_link(t, i, j, li->copy, &li->hub[0], &li->hub[1]);
	li->port[0] = fm_d_port(t, i, j, li->copy);
	li->port[1] = fm_d_port(t, j, i, li->copy);
	return 0;
}

/**
 * fm_port_link() - the link on one ISR port of a hub
 * @t: the topology
 * @hub: the hub
 * @port: ISR port, 0..%FM_NR_PORTS - 1
 * @id: out: the link id
 *
 * Return: 0; -EINVAL for a hub outside the topology or a port number of
 * %FM_NR_PORTS or more; -ENOENT for a port without a link (an L or D port
 * not wired in this topology, an HFI or the service port).
 */
int fm_port_link(const struct fm_topology *t, u32 hub, u32 port, u32 *id)
{
	u32 H = t->hubs_per_sn, i, drawer, j, sn, copy;

	if (hub >= t->nr_hubs || port >= FM_NR_PORTS)
		return -EINVAL;
	i = fm_hub_index(t, hub);
	drawer = i / FM_HUBS_PER_DRAWER;
	if (port < FM_PORT_LR) {
		j = port - FM_PORT_LL;
		j += j >= i % FM_HUBS_PER_DRAWER;
		j += drawer * FM_HUBS_PER_DRAWER;
	} else if (port < FM_PORT_D) {
		j = port - FM_PORT_LR;
		if (j >= drawer * FM_HUBS_PER_DRAWER)
			j += FM_HUBS_PER_DRAWER;
	} else if (port < FM_PORT_HFI) {
		if (fm_hub_d_port(t, hub, port - FM_PORT_D, &sn, &copy))
			return -ENOENT;
		return fm_d_link_id(t, fm_hub_supernode(t, hub), sn, copy, id);
	} else {
		return -ENOENT;
	}
	if (j >= H)
		return -ENOENT;
	return fm_l_link_id(t, hub, hub - i + j, id);
}
