/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem: strided sets of PEs (teams, active sets) and their
 * arithmetic, pure so that it is unit-tested on the host.  A set is world
 * PEs start + i x stride for i < size.
 */
#ifndef LIBPERCS_SHMEM_PES_H
#define LIBPERCS_SHMEM_PES_H

struct shmem_pes {
	int start;
	int stride;
	int size;
};

/* World PE of member @i of @set (NULL: the world, member i is PE i). */
static inline int shmem_pes_pe(const struct shmem_pes *set, int i)
{
	return set ? set->start + i * set->stride : i;
}

/* The index of world PE @pe in @set, -1 when it is not a member. */
int shmem_pes_index(const struct shmem_pes *set, int pe);

/*
 * The members @start + i x @stride (i < @size) of @parent, in parent
 * indices, as a set of world PEs in *@child: 0, or -EINVAL when they do
 * not all lie in @parent (a stride of 0 is allowed for one member only).
 */
int shmem_pes_split(const struct shmem_pes *parent, int start, int stride,
		    int size, struct shmem_pes *child);

#endif /* LIBPERCS_SHMEM_PES_H */
