// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: strided sets of PEs (pes.h).
 */
#include <errno.h>

#include "pes.h"

int shmem_pes_index(const struct shmem_pes *set, int pe)
{
	long long d = (long long)pe - set->start, i;

	if (set->size == 1 || !set->stride)
		return d == 0 && set->size >= 1 ? 0 : -1;
	if (d % set->stride)
		return -1;
	i = d / set->stride;
	return i >= 0 && i < set->size ? (int)i : -1;
}

int shmem_pes_split(const struct shmem_pes *parent, int start, int stride,
		    int size, struct shmem_pes *child)
{
	/* long long: start + (size - 1) x stride must not wrap. */
	long long last = start + (long long)(size - 1) * stride;

	if (size < 1 || start < 0 || start >= parent->size || last < 0 ||
	    last >= parent->size || (stride == 0 && size > 1))
		return -EINVAL;
	child->start = shmem_pes_pe(parent, start);
	child->stride = parent->stride * (stride ? stride : 1);
	child->size = size;
	return 0;
}
