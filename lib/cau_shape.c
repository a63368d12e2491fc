// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: CAU tree shapes - the default k-ary shape that keeps
 * supernodes together, explicit shapes, and the checks the kernel makes
 * of a shape (PERCS_IOC_CAU_CREATE), in its order.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* ---- shapes ----------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Two members on one hub?  Return: 0, -EEXIST, -ENOMEM. */
static int hubs_distinct(const struct percs_cau_member *m, unsigned int nr)
{
	uint32_t *hub = malloc(nr * sizeof(*hub));
	int ret = 0;

	if (!hub)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr; i++)
		hub[i] = m[i].win.hub;
	qsort(hub, nr, sizeof(*hub), cmp_u32);
	for (unsigned int i = 1; i < nr; i++)
		if (hub[i] == hub[i - 1])
			ret = -EEXIST;
	free(hub);
	return ret;
}

int percs_cau_shape_check(const struct percs_cau_member *m, unsigned int nr)
{
	unsigned int roots = 0, i, n;
	int32_t *depth;
	uint32_t *kids;
	int ret, max = 0;

	if (!m || !nr || nr > PERCS_CAU_MAX_MEMBERS)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (m[i].reserved || m[i].win.reserved)
			return -EINVAL;
		if (m[i].parent == PERCS_CAU_ROOT)
			roots++;
		else if (m[i].parent >= nr)
			return -EINVAL;
	}
	if (roots != 1)
		return -EINVAL;
	depth = malloc(nr * sizeof(*depth));
	kids = calloc(nr, sizeof(*kids));
	ret = -ENOMEM;
	if (!depth || !kids)
		goto out;
	for (i = 0; i < nr; i++)
		depth[i] = -1;
	/* Walk up from each member to the root or a known depth. */
	ret = -ELOOP;
	for (i = 0; i < nr; i++) {
		uint32_t j = i;

		for (n = 0; depth[j] < 0 && m[j].parent != PERCS_CAU_ROOT;
		     n++, j = m[j].parent)
			if (n > nr)
				goto out;
		if (depth[j] < 0)
			depth[j] = 0;
		/* Then down again, filling in. */
		for (uint32_t k = i, d = depth[j] + n; k != j;
		     k = m[k].parent, d--)
			depth[k] = (int32_t)d;
		if (depth[i] > max)
			max = depth[i];
	}
	ret = -EMLINK;
	for (i = 0; i < nr; i++)
		if (m[i].parent != PERCS_CAU_ROOT &&
		    ++kids[m[i].parent] > PERCS_CAU_MAX_CHILDREN)
			goto out;
	ret = hubs_distinct(m, nr);
	if (!ret)
		ret = max;
out:
	free(depth);
	free(kids);
	return ret;
}

int percs_cau_shape_parents(const struct percs_addr *wins,
			    const uint32_t *parents, unsigned int nr,
			    struct percs_cau_member *members)
{
	int ret;

	if (!wins || !parents || !members || !nr ||
	    nr > PERCS_CAU_MAX_MEMBERS)
		return -EINVAL;
	for (unsigned int i = 0; i < nr; i++)
		members[i] = (struct percs_cau_member){
			.win = wins[i], .parent = parents[i],
		};
	ret = percs_cau_shape_check(members, nr);
	return ret < 0 ? ret : 0;
}

int percs_cau_shape_kary(const struct percs_addr *wins, unsigned int nr,
			 unsigned int root, unsigned int fanout,
			 const struct percs_hfi_info *topo,
			 struct percs_cau_member *members)
{
	unsigned int hps = topo ? topo->hubs_per_supernode : 0;
	unsigned int *order, *sn, *head, nsn = 0, i, j, g, pos;
	int ret;

	if (!fanout)
		fanout = PERCS_CAU_DEF_FANOUT;
	if (!wins || !members || !nr || nr > PERCS_CAU_MAX_MEMBERS ||
	    root >= nr || fanout > PERCS_CAU_MAX_FANOUT)
		return -EINVAL;
	order = malloc(nr * sizeof(*order));
	sn = malloc(nr * sizeof(*sn));
	head = malloc(nr * sizeof(*head));
	ret = -ENOMEM;
	if (!order || !sn || !head)
		goto out;

	/* The supernodes in order of appearance, the root's first. */
	sn[nsn++] = hps ? wins[root].hub / hps : 0;
	for (i = 0; i < nr; i++) {
		unsigned int s = hps ? wins[i].hub / hps : 0;

		for (j = 0; j < nsn && sn[j] != s; j++)
			;
		if (j == nsn)
			sn[nsn++] = s;
	}
	/*
	 * Each supernode's members, in array order with the root first in
	 * its group: a fanout-ary heap below the group's head; the heads a
	 * fanout-ary heap below the root.
	 */
	for (g = 0, pos = 0; g < nsn; g++) {
		unsigned int first = pos;

		if (g == 0)
			order[pos++] = root;
		for (i = 0; i < nr; i++)
			if ((hps ? wins[i].hub / hps : 0) == sn[g] &&
			    !(g == 0 && i == root))
				order[pos++] = i;
		head[g] = order[first];
		for (j = first; j < pos; j++) {
			unsigned int k = j - first;

			members[order[j]] = (struct percs_cau_member){
				.win = wins[order[j]],
				.parent = k ? order[first + (k - 1) / fanout] :
					 g ? head[(g - 1) / fanout] :
					     PERCS_CAU_ROOT,
			};
		}
	}
	ret = percs_cau_shape_check(members, nr);
	if (ret > 0)
		ret = 0;
out:
	free(order);
	free(sn);
	free(head);
	return ret;
}
