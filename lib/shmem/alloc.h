/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpercs-shmem: the symmetric heap's allocator, in offsets from the
 * heap's start (heap.c maps, registers and synchronizes; this is the pure
 * bookkeeping, unit-tested on the host).
 *
 * First fit over an address-ordered list of blocks: every PE making the
 * same calls in the same order gets the same offsets, which is what makes
 * the heap symmetric.  Sizes are rounded up to SHMEM_ALLOC_GRAIN.
 */
#ifndef LIBPERCS_SHMEM_ALLOC_H
#define LIBPERCS_SHMEM_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#define SHMEM_ALLOC_GRAIN	16
/* What shmem_alloc_get() returns when it cannot allocate. */
#define SHMEM_ALLOC_NONE	((size_t)-1)

struct shmem_blk;

struct shmem_alloc {
	struct shmem_blk *blocks;	/* in address order, covering the heap */
	size_t size;
};

/* An allocator of @size bytes, all free; 0 or -ENOMEM. */
int shmem_alloc_init(struct shmem_alloc *a, size_t size);
void shmem_alloc_fini(struct shmem_alloc *a);
/*
 * The offset of @size bytes aligned to @align (a power of two), or
 * SHMEM_ALLOC_NONE when @size is 0, @align is not a power of two or no
 * free block fits.
 */
size_t shmem_alloc_get(struct shmem_alloc *a, size_t align, size_t size);
/* The length of the allocated block at @off, 0 if none starts there. */
size_t shmem_alloc_len(const struct shmem_alloc *a, size_t off);
/* Free the block at @off, merging free neighbours; 0 or -ENOENT. */
int shmem_alloc_put(struct shmem_alloc *a, size_t off);
/* Bytes free in all, and the largest free block (for tests and messages). */
size_t shmem_alloc_free_bytes(const struct shmem_alloc *a, size_t *largest);

#endif /* LIBPERCS_SHMEM_ALLOC_H */
