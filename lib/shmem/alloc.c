// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: the symmetric heap's first-fit allocator (alloc.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"

/* One block of the heap, free or not, in address order. */
struct shmem_blk {
	size_t off;
	size_t len;
	bool used;
	struct shmem_blk *next;
};

int shmem_alloc_init(struct shmem_alloc *a, size_t size)
{
	a->size = size;
	a->blocks = calloc(1, sizeof(*a->blocks));
	if (!a->blocks)
		return -ENOMEM;
	a->blocks->len = size;
	return 0;
}

void shmem_alloc_fini(struct shmem_alloc *a)
{
	while (a->blocks) {
		struct shmem_blk *n = a->blocks->next;

		free(a->blocks);
		a->blocks = n;
	}
}

size_t shmem_alloc_get(struct shmem_alloc *a, size_t align, size_t size)
{
	/* Both splits' nodes up front: a failure leaves the list as it was. */
	struct shmem_blk *spare[2] = { NULL, NULL };
	size_t ret = SHMEM_ALLOC_NONE;

	if (!size || !align || (align & (align - 1)) || size > a->size ||
	    align > a->size)
		return SHMEM_ALLOC_NONE;
	/* Cannot wrap: size <= a->size, far below SIZE_MAX. */
	size = (size + SHMEM_ALLOC_GRAIN - 1) & ~(size_t)(SHMEM_ALLOC_GRAIN - 1);
	spare[0] = calloc(1, sizeof(*spare[0]));
	spare[1] = calloc(1, sizeof(*spare[1]));
	if (!spare[0] || !spare[1])
		goto out;
	for (struct shmem_blk *b = a->blocks; b; b = b->next) {
		size_t start, pad;

		if (b->used)
			continue;
		start = (b->off + align - 1) & ~(align - 1);
		pad = start - b->off;
		if (pad > b->len || b->len - pad < size)
			continue;
		if (pad) {	/* leave the padding as a free block */
			struct shmem_blk *n = spare[0];

			spare[0] = NULL;
			n->off = start;
			n->len = b->len - pad;
			n->next = b->next;
			b->len = pad;
			b->next = n;
			b = n;
		}
		if (b->len > size) {
			struct shmem_blk *n = spare[1];

			spare[1] = NULL;
			n->off = b->off + size;
			n->len = b->len - size;
			n->next = b->next;
			b->len = size;
			b->next = n;
		}
		b->used = true;
		ret = b->off;
		break;
	}
out:
	free(spare[0]);
	free(spare[1]);
	return ret;
}

static struct shmem_blk *find(const struct shmem_alloc *a, size_t off)
{
	for (struct shmem_blk *b = a->blocks; b; b = b->next)
		if (b->used && b->off == off)
			return b;
	return NULL;
}

size_t shmem_alloc_len(const struct shmem_alloc *a, size_t off)
{
	const struct shmem_blk *b = find(a, off);

	return b ? b->len : 0;
}

int shmem_alloc_put(struct shmem_alloc *a, size_t off)
{
	struct shmem_blk *b = find(a, off);

	if (!b)
		return -ENOENT;
	b->used = false;
	/* Merge with free neighbours: walk from the head. */
	for (struct shmem_blk *p = a->blocks; p && p->next;) {
		struct shmem_blk *n = p->next;

		if (!p->used && !n->used) {
			p->len += n->len;
			p->next = n->next;
			free(n);
		} else {
			p = n;
		}
	}
	return 0;
}

size_t shmem_alloc_free_bytes(const struct shmem_alloc *a, size_t *largest)
{
	size_t sum = 0, max = 0;

	for (const struct shmem_blk *b = a->blocks; b; b = b->next) {
		if (b->used)
			continue;
		sum += b->len;
		if (b->len > max)
			max = b->len;
	}
	if (largest)
		*largest = max;
	return sum;
}
