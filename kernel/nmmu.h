/* SPDX-License-Identifier: GPL-2.0 */
/*
 * percs: the NMMU's registrations, and the translation helpers that run
 * once per packet, inline (nmmu.c has the rest and the rules).
 */
#ifndef _PERCS_NMMU_H
#define _PERCS_NMMU_H

#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>

#include "percs.h"

/**
 * struct percs_mr - one memory registration
 * @ref: references: one for the window's table, one per user in flight
 * @handle: the name user space and packets use
 * @access: PERCS_ACCESS_* granted
 * @addr: first registered byte (effective address)
 * @length: registered bytes
 * @npages: pages covering [@addr, @addr + @length)
 * @pages: those pages, pinned, in address order
 * @mm: the address space they were pinned from and charged to (held with
 *	mmgrab(): the struct, not the address space)
 * @user: the user whose RLIMIT_MEMLOCK the pages are charged to (NULL:
 *	registered with CAP_IPC_LOCK, not charged), held with get_uid()
 * @quota: the user the registration counts against (quota.c)
 * @pd: the system (live counters, release work)
 * @work: the release after the grace period (unpinning may sleep)
 * @rcu: the pages and the struct are freed after the uses under RCU are
 *	done with them
 * @dead: deregistered (or its window released, or invalidated): lookups
 *	fail
 * @notify: the notifier of a %PERCS_MR_F_INVALIDATE registration, or NULL
 *	(nmmu_notify.c)
 * @notify_seq: the notifier's sequence when the pages were pinned
 *
 * Everything but @ref and @dead is fixed before the registration is
 * published.
 */
struct percs_mr {
	refcount_t ref;
	u32 handle;
	u32 access;
	bool dead;
	u64 addr;
	u64 length;
	unsigned long npages;
	struct page **pages;
	struct mm_struct *mm;
	struct user_struct *user;
	struct percs_user *quota;
	struct percs_dev *pd;
	struct work_struct work;
	struct rcu_head rcu;
	struct percs_mr_notify *notify;
	unsigned long notify_seq;
};

/* Is [@addr, @addr + @len) inside the registration (no wrap-around)? */
static inline bool percs_mr_covers(const struct percs_mr *mr, u64 addr, u64 len)
{
	u64 end;

	return !check_add_overflow(addr, len, &end) && addr >= mr->addr &&
	       end <= mr->addr + mr->length;
}

/* Byte offset of @addr from the start of the registration's first page. */
static inline u64 percs_mr_offset(const struct percs_mr *mr, u64 addr)
{
	return addr - (mr->addr & PAGE_MASK);
}

int percs_nmmu_init(struct percs_dev *pd);
void percs_nmmu_exit(struct percs_dev *pd);
void percs_mr_window_init(struct percs_window *w);
void percs_mr_unpublish(struct percs_window *w, struct percs_mr *mr);
void percs_mr_window_fini(struct percs_window *w);
int percs_mr_register(struct percs_window *w, struct percs_mr_register *req,
		      struct percs_mr_register __user *ureq, u32 usize);
struct percs_mr *percs_mr_create(struct percs_dev *pd, u64 addr, u64 length,
				 u32 access);
struct percs_mr *percs_mr_create_checked(struct percs_dev *pd, u64 addr,
					 u64 length, u32 access);
int percs_mr_atomic64(struct percs_mr *mr, u64 addr, bool cmp_swap, u64 a,
		      u64 b, u64 *orig);
int percs_mr_deregister(struct percs_window *w,
			const struct percs_mr_deregister *req);
struct percs_mr *percs_mr_find_rcu(struct percs_window *w, u32 handle);
struct percs_mr *percs_mr_get(struct percs_window *w, u32 handle, u64 addr,
			      u64 len, u32 access);
void percs_mr_release(struct percs_mr *mr);
void percs_mr_discard(struct percs_mr *mr);
#ifdef CONFIG_MMU_NOTIFIER
struct percs_mr *percs_mrn_create(struct percs_window *w, u64 addr,
				  u64 length, u32 access);
void percs_mrn_publish(struct percs_window *w, struct percs_mr *mr);
void percs_mrn_stop(struct percs_mr *mr);
void percs_mrn_free(struct percs_mr *mr);
void percs_mrn_window_init(struct percs_window *w);
void percs_mrn_window_fini(struct percs_window *w);
#else
/* Without MMU notifiers no registration can follow the address space. */
static inline struct percs_mr *percs_mrn_create(struct percs_window *w,
						u64 addr, u64 length,
						u32 access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void percs_mrn_publish(struct percs_window *w,
				     struct percs_mr *mr) {}
static inline void percs_mrn_stop(struct percs_mr *mr) {}
static inline void percs_mrn_free(struct percs_mr *mr) {}
static inline void percs_mrn_window_init(struct percs_window *w) {}
static inline void percs_mrn_window_fini(struct percs_window *w) {}
#endif
void percs_mr_hold(struct percs_mr *mr);
int percs_mr_copy_to(struct percs_mr *mr, u64 addr, const void *src,
		     size_t len);
int percs_mr_copy_from(struct percs_mr *mr, u64 addr, void *dst, size_t len);
int percs_mr_copy_mr(struct percs_mr *dst, u64 daddr, struct percs_mr *src,
		     u64 saddr, size_t len);

/* The translation cache entry of @handle in @w. */
static inline struct percs_mr __rcu **percs_mr_tlb_entry(struct percs_window *w,
							 u32 handle)
{
	return &w->mr_tlb[handle & (PERCS_MR_TLB_ENTRIES - 1)];
}

/**
 * percs_mr_put() - drop a reference percs_mr_get() gave
 * @mr: the registration
 *
 * Any context, spinlocks held or not.  When this was the last reference
 * (the registration was deregistered or its window released meanwhile),
 * the pages are uncharged at once and unpinned after an RCU grace period
 * (percs_mr_release()).
 */
static inline void percs_mr_put(struct percs_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		percs_mr_release(mr);
}

/**
 * percs_mr_lookup_rcu() - translate for a use within one RCU section
 * @w: the window that owns the handle, kept valid by the caller
 * @handle: the registration handle the packet carries
 * @addr: effective address of the first byte the use touches
 * @len: bytes it touches
 * @access: the PERCS_ACCESS_* rights it needs, all of them
 *
 * Caller holds rcu_read_lock(), and is done with the registration and its
 * pages when it drops it: no reference is taken.  A hit in the translation
 * cache is a compare, inline.
 *
 * Return: the registration, or an ERR_PTR() as percs_mr_get().
 */
static inline struct percs_mr *percs_mr_lookup_rcu(struct percs_window *w,
						   u32 handle, u64 addr,
						   u64 len, u32 access)
{
	struct percs_mr *mr;

	if (access & ~PERCS_ACCESS_ALL)
		return ERR_PTR(-EINVAL);
	mr = rcu_dereference(*percs_mr_tlb_entry(w, handle));
	if (!mr || mr->handle != handle || READ_ONCE(mr->dead)) {
		mr = percs_mr_find_rcu(w, handle);
		if (!mr)
			return ERR_PTR(-ENOENT);
	}
	if (!percs_mr_covers(mr, addr, len))
		return ERR_PTR(-ERANGE);
	if ((mr->access & access) != access)
		return ERR_PTR(-EPERM);
	return mr;
}

/**
 * percs_mr_get_rcu() - percs_mr_get() inside rcu_read_lock()
 * @w: as for percs_mr_get()
 * @handle: as for percs_mr_get()
 * @addr: as for percs_mr_get()
 * @len: as for percs_mr_get()
 * @access: as for percs_mr_get()
 *
 * Return: as percs_mr_get().
 */
static inline struct percs_mr *percs_mr_get_rcu(struct percs_window *w,
						u32 handle, u64 addr, u64 len,
						u32 access)
{
	struct percs_mr *mr = percs_mr_lookup_rcu(w, handle, addr, len,
						  access);

	if (!IS_ERR(mr) && !refcount_inc_not_zero(&mr->ref))
		return ERR_PTR(-ENOENT);
	return mr;
}

/**
 * percs_mr_live() - is @mr still registered in @w under its handle?
 * @w: the window it was taken from, kept valid by the caller
 * @mr: a registration from percs_mr_get() on @w
 *
 * A transfer checks this as it goes: a deregistered handle stops it.
 *
 * Return: true while the handle names @mr.
 */
static inline bool percs_mr_live(struct percs_window *w,
				 struct percs_mr *mr)
{
	return !READ_ONCE(mr->dead);
}

/**
 * percs_mr_map_operand() - kernel pointer to an atomic operand
 * @mr: a registration from percs_mr_get()
 * @addr: effective address of the operand, a multiple of @width
 * @width: 1, 2, 4 or 8 bytes
 *
 * Naturally aligned, the operand never crosses a page, so one
 * kmap_local_page() covers it.  Any context; unmap with
 * percs_mr_unmap_operand() in the same context, in the reverse order of
 * the maps (kmap_local rules).
 *
 * Return: the pointer, or ERR_PTR(-EINVAL) when @addr is not a multiple
 * of @width, ERR_PTR(-ERANGE) when the operand is not inside @mr.
 */
static inline void *percs_mr_map_operand(struct percs_mr *mr, u64 addr,
					 unsigned int width)
{
	u64 off;
	u8 *p;

	if (!IS_ALIGNED(addr, width))
		return ERR_PTR(-EINVAL);
	if (!percs_mr_covers(mr, addr, width))
		return ERR_PTR(-ERANGE);
	off = percs_mr_offset(mr, addr);
	p = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
	return p + (off & ~PAGE_MASK);
}

/**
 * percs_mr_unmap_operand() - undo percs_mr_map_operand()
 * @operand: the pointer it returned
 */
static inline void percs_mr_unmap_operand(void *operand)
{
	kunmap_local(operand);
}

#endif /* _PERCS_NMMU_H */
