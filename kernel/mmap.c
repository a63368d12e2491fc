// SPDX-License-Identifier: GPL-2.0
/*
 * percs: mapping a window's regions into user space.
 *
 * Each region is one vmalloc allocation (charged to the reserving
 * process's memory cgroup, window.c) mapped whole: the offset is
 * the key returned at reservation (the siw pattern), the length must be the
 * region's, the mapping must be shared, and read-only regions can never
 * become writable.  A mapping holds the window's file, so the regions
 * outlive every mapping.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "percs.h"

/**
 * percs_region_key() - the mmap offset that selects a region
 * @region: enum percs_region_id
 *
 * Return: the byte offset to pass to mmap().
 */
u64 percs_region_key(unsigned int region)
{
	return (u64)(region + 1) << PERCS_MMAP_KEY_SHIFT;
}

/**
 * percs_region_writable() - may user space write this region?
 * @region: enum percs_region_id
 *
 * Return: true for the send FIFO, the doorbell and the immediate slots.
 */
bool percs_region_writable(unsigned int region)
{
	return region == PERCS_REGION_SEND_FIFO ||
	       region == PERCS_REGION_DOORBELL || region == PERCS_REGION_IMM;
}

/**
 * percs_region_shared() - is this region one page for the whole module?
 * @region: enum percs_region_id
 *
 * Return: true for the clock page: every window maps the same page, which
 * clock.c owns; the window neither allocates nor frees it.
 */
bool percs_region_shared(unsigned int region)
{
	return region == PERCS_REGION_CLOCK;
}

static void percs_vma_open(struct vm_area_struct *vma)
{
	struct percs_window *w = vma->vm_private_data;

	atomic_inc(&w->hfi->pd->live_mappings);
}

static void percs_vma_close(struct vm_area_struct *vma)
{
	struct percs_window *w = vma->vm_private_data;

	atomic_dec(&w->hfi->pd->live_mappings);
}

/*
 * The pages are inserted at mmap time; this maps one back after the kernel
 * dropped it (MADV_DONTNEED), as for any shared mapping of an object.
 */
static vm_fault_t percs_vma_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct percs_window *w = vma->vm_private_data;
	unsigned int region = (vma->vm_pgoff >>
			       (PERCS_MMAP_KEY_SHIFT - PAGE_SHIFT)) - 1;
	unsigned long off = (vmf->pgoff - vma->vm_pgoff) << PAGE_SHIFT;
	struct page *page;

	if (off >= w->region_len[region])
		return VM_FAULT_SIGBUS;
	page = vmalloc_to_page((u8 *)w->regions[region] + off);
	get_page(page);
	vmf->page = page;
	return 0;
}

/* A region is mapped whole or not at all: refuse partial munmap/mprotect. */
static int percs_vma_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct percs_vm_ops = {
	.open = percs_vma_open,
	.close = percs_vma_close,
	.fault = percs_vma_fault,
	.may_split = percs_vma_may_split,
};

/*
 * What remap_vmalloc_range() does, which needs VM_USERMAP: only
 * vmalloc_user() sets it, and that cannot charge a memory cgroup.
 */
static int percs_vma_insert(struct vm_area_struct *vma, void *kaddr,
			    unsigned long len)
{
	unsigned long off;
	int ret;

	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (off = 0; off < len; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((u8 *)kaddr + off));
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * percs_window_mmap() - mmap one region of a window
 * @file: the window file
 * @vma: the new mapping
 *
 * Return: 0; -EINVAL for an unknown offset, a wrong length or a private
 * mapping; -EPERM for write access to a read-only region.
 */
int percs_window_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct percs_window *w = file->private_data;
	unsigned long key_pages = vma->vm_pgoff >>
				  (PERCS_MMAP_KEY_SHIFT - PAGE_SHIFT);
	unsigned int region;
	int ret;

	if (key_pages < 1 || key_pages > PERCS_REGION_MAX)
		return -EINVAL;
	region = key_pages - 1;
	if (vma->vm_pgoff << PAGE_SHIFT != percs_region_key(region) ||
	    !w->regions[region])
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != w->region_len[region])
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!percs_region_writable(region)) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		vma->vm_flags &= ~VM_MAYWRITE;
	}

	ret = percs_vma_insert(vma, w->regions[region], w->region_len[region]);
	if (ret)
		return ret;
	vma->vm_private_data = w;
	vma->vm_ops = &percs_vm_ops;
	percs_vma_open(vma);
	return 0;
}
