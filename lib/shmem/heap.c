// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs-shmem: symmetric memory - the heap and the program's
 * global/static data, each registered once with the NMMU, and the
 * translation of a local symmetric address to another PE's.
 *
 * Every PE maps its own heap wherever mmap puts it and its data wherever
 * the loader put the (PIE, ASLR) executable: an address is translated as
 * (registration, offset), the offset being the same on every PE because
 * every PE makes the same allocations in the same order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "shmem_internal.h"

/* The executable's writable data, from the linker and crt1. */
extern char __data_start[];
extern char _end[];

static struct shmem_alloc heap_alloc;

static int heap_size(size_t *out)
{
	const char *s = getenv("SHMEM_SYMMETRIC_SIZE");
	unsigned long long v;
	char *end;

	*out = SHMEM_DEF_HEAP;
	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || !v || v > PERCS_MR_MAX_LENGTH)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

int shmem_heap_init(void)
{
	const uint32_t acc = PERCS_ACCESS_ALL;
	long page = sysconf(_SC_PAGESIZE);
	size_t size;
	int ret;

	if (heap_size(&size))
		shmem_die("shmem_init",
			  "SHMEM_SYMMETRIC_SIZE='%s' is not a size of 1 .. %llu bytes (suffix K, M or G)",
			  getenv("SHMEM_SYMMETRIC_SIZE"),
			  (unsigned long long)PERCS_MR_MAX_LENGTH);
	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	shmem_g.heap = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shmem_g.heap == MAP_FAILED) {
		shmem_g.heap = NULL;
		return -errno;
	}
	shmem_g.heap_size = size;
	ret = percs_mr_reg(shmem_g.w, shmem_g.heap, size, acc,
			   &shmem_g.heap_handle);
	if (ret)
		shmem_die("shmem_init",
			  "cannot register the %zu-byte symmetric heap: %s%s",
			  size, strerror(-ret), ret == -ENOMEM ?
			  " (RLIMIT_MEMLOCK; set SHMEM_SYMMETRIC_SIZE lower)" : "");
	shmem_g.data = __data_start;
	shmem_g.data_len = (size_t)(_end - __data_start);
	ret = percs_mr_reg(shmem_g.w, shmem_g.data, shmem_g.data_len, acc,
			   &shmem_g.data_handle);
	if (ret)
		shmem_die("shmem_init",
			  "cannot register global/static data (%zu bytes): %s",
			  shmem_g.data_len, strerror(-ret));
	shmem_g.bounce = mmap(NULL, SHMEM_BOUNCE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shmem_g.bounce == MAP_FAILED) {
		shmem_g.bounce = NULL;
		return -errno;
	}
	ret = percs_mr_reg(shmem_g.w, shmem_g.bounce, SHMEM_BOUNCE_SIZE,
			   PERCS_ACCESS_LOCAL_WRITE, &shmem_g.bounce_handle);
	if (ret)
		shmem_die("shmem_init", "cannot register the bounce buffer: %s",
			  strerror(-ret));
	return shmem_alloc_init(&heap_alloc, size);
}

void shmem_heap_fini(void)
{
	/* The window's release would drop them too; say it explicitly. */
	percs_mr_dereg(shmem_g.w, shmem_g.heap_handle);
	percs_mr_dereg(shmem_g.w, shmem_g.data_handle);
	percs_mr_dereg(shmem_g.w, shmem_g.bounce_handle);
	munmap(shmem_g.heap, shmem_g.heap_size);
	munmap(shmem_g.bounce, SHMEM_BOUNCE_SIZE);
	shmem_g.heap = NULL;
	shmem_g.bounce = NULL;
	shmem_alloc_fini(&heap_alloc);
}

bool shmem_is_symmetric(const void *addr, size_t len)
{
	return shmem_in(shmem_g.heap, shmem_g.heap_size, addr, len) ||
	       shmem_in(shmem_g.data, shmem_g.data_len, addr, len);
}

uint32_t shmem_local_handle(const void *addr, size_t len)
{
	if (shmem_in(shmem_g.heap, shmem_g.heap_size, addr, len))
		return shmem_g.heap_handle;
	if (shmem_in(shmem_g.data, shmem_g.data_len, addr, len))
		return shmem_g.data_handle;
	return 0;
}

void shmem_remote_fail(const char *call, const void *addr, size_t len,
		       int pe)
{
	shmem_check_pe(call, pe);
	shmem_die(call, "address %p (%zu bytes) is not symmetric: neither in the symmetric heap nor in global/static data",
		  addr, len);
}

/* ---- the allocator -------------------------------------------------------- */

/* @size bytes aligned to @align, NULL when they do not fit. */
static void *heap_get(size_t align, size_t size)
{
	size_t off = shmem_alloc_get(&heap_alloc, align, size);

	return off == SHMEM_ALLOC_NONE ? NULL : shmem_g.heap + off;
}

/* The offset of @ptr, which shmem_malloc() must have returned. */
static size_t heap_find(const char *call, void *ptr)
{
	size_t off = (size_t)((char *)ptr - shmem_g.heap);

	if (!shmem_in(shmem_g.heap, shmem_g.heap_size, ptr, 1) ||
	    !shmem_alloc_len(&heap_alloc, off))
		shmem_die(call, "%p was not returned by shmem_malloc() or is freed",
			  ptr);
	return off;
}

void *shmem_malloc(size_t size)
{
	void *p;

	shmem_need_init("shmem_malloc");
	p = heap_get(16, size);
	shmem_barrier_all();
	return p;
}

void *shmem_calloc(size_t count, size_t size)
{
	void *p = NULL;

	shmem_need_init("shmem_calloc");
	if (!size || count <= SIZE_MAX / size)
		p = heap_get(16, count * size);
	if (p)
		memset(p, 0, count * size);
	shmem_barrier_all();
	return p;
}

void *shmem_align(size_t alignment, size_t size)
{
	void *p = NULL;

	shmem_need_init("shmem_align");
	if (alignment && !(alignment & (alignment - 1)) &&
	    alignment <= shmem_g.heap_size)
		p = heap_get(alignment < 16 ? 16 : alignment, size);
	shmem_barrier_all();
	return p;
}

void *shmem_realloc(void *ptr, size_t size)
{
	size_t off, len;
	void *p;

	shmem_need_init("shmem_realloc");
	if (!ptr)
		return shmem_malloc(size);
	off = heap_find("shmem_realloc", ptr);
	len = shmem_alloc_len(&heap_alloc, off);
	if (!size) {
		shmem_free(ptr);
		return NULL;
	}
	/* Others may still be writing into it until everyone is here. */
	shmem_barrier_all();
	p = heap_get(16, size);
	if (p) {
		memcpy(p, ptr, len < size ? len : size);
		shmem_alloc_put(&heap_alloc, off);
	}
	shmem_barrier_all();
	return p;
}

void shmem_free(void *ptr)
{
	shmem_need_init("shmem_free");
	shmem_barrier_all();
	if (ptr)
		shmem_alloc_put(&heap_alloc, heap_find("shmem_free", ptr));
}

void *shmalloc(size_t size)
{
	return shmem_malloc(size);
}

void shfree(void *ptr)
{
	shmem_free(ptr);
}

void *shrealloc(void *ptr, size_t size)
{
	return shmem_realloc(ptr, size);
}

void *shmemalign(size_t alignment, size_t size)
{
	return shmem_align(alignment, size);
}
