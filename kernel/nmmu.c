// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the NMMU - memory registration and effective address translation.
 *
 * A window registers a range of its process's address space
 * (PERCS_IOC_MR_REGISTER): the pages covering it are pinned long-term and
 * charged to RLIMIT_MEMLOCK on mm->pinned_vm, as
 * drivers/infiniband/core/umem.c does, and the registration goes into the
 * window's xarray under a handle.  The pages are charged to the
 * registering user (user->locked_vm, as io_uring's __io_account_mem()
 * does), not only to the process: a registration belongs to the window,
 * which fork, exec or SCM_RIGHTS hand to other processes and which outlives
 * the one that registered, so a per-process count (mm->pinned_vm, kept for
 * VmPin) would let each new process pin another RLIMIT_MEMLOCK.  Callers
 * with CAP_IPC_LOCK are not charged.  RDMA and atomic packets name a window,
 * a handle and an effective address; percs_mr_get() translates that into
 * a referenced registration, and the copy and word helpers reach the
 * bytes through kmap_local_page().
 *
 * Lifetime: the window's xarray holds one reference, every transfer that
 * spans engine passes one more (percs_mr_get()); a use that begins and
 * ends inside one RCU read-side section takes none (percs_mr_lookup_rcu():
 * the atomic unit's, once per packet).  Deregistration and the window's
 * release mark the registration dead, remove it from the table and from
 * the translation cache, and drop the table's reference.  When the last
 * reference goes, the pages are uncharged at once (RLIMIT_MEMLOCK,
 * VmPin), and unpinned and the struct freed after an RCU grace period, by
 * a work item (unpinning may sleep; the last reference may go under a
 * spinlock): no reader that found the registration still touches them.
 *
 * Translation cache: like the Hub's cache of the NMMU's mappings, each
 * window keeps the registrations it translated last (w->mr_tlb, indexed
 * by handle slot), so the per-packet lookup is a compare, not an xarray
 * walk.  An entry is only a hint, checked against its handle and @dead.
 * A lookup that caches a registration holds a reference meanwhile and
 * re-reads @dead after the store, removing the entry itself when it lost
 * the race with a deregistration (each side's full barrier between its
 * write and its read: one of them sees the other's).  So every entry is
 * gone before the last reference is dropped and the grace period starts.
 *
 * A handle is (generation << PERCS_MR_SLOT_BITS) | slot.  The slot indexes
 * the xarray (slots are reused, so the table stays small); the generation
 * counts the window's registrations, so a deregistered handle finds
 * nothing until 65536 more registrations were made in the window.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "nmmu.h"

/* Rights that make the HFI write the pages: pin them for writing. */
#define PERCS_ACCESS_WRITES	(PERCS_ACCESS_LOCAL_WRITE |		\
				 PERCS_ACCESS_REMOTE_WRITE |		\
				 PERCS_ACCESS_REMOTE_ATOMIC)

/*
 * Charge @mr's pages to the calling user's RLIMIT_MEMLOCK (unless it has
 * CAP_IPC_LOCK) and to @mm's VmPin.  The user is remembered in @mr->user.
 */
static int percs_mr_charge(struct percs_mr *mr, struct mm_struct *mm)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user = current_user();
	unsigned long cur, new;

	if (!capable(CAP_IPC_LOCK)) {
		cur = atomic_long_read(&user->locked_vm);
		do {
			if (check_add_overflow(cur, mr->npages, &new) ||
			    new > limit)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur,
						  new));
		mr->user = get_uid(user);
	}
	atomic64_add(mr->npages, &mm->pinned_vm);
	return 0;
}

/* Undo percs_mr_charge(); any context. */
static void percs_mr_uncharge(struct percs_mr *mr, struct mm_struct *mm)
{
	atomic64_sub(mr->npages, &mm->pinned_vm);
	if (mr->user) {
		atomic_long_sub(mr->npages, &mr->user->locked_vm);
		free_uid(mr->user);
		mr->user = NULL;
	}
}

/*
 * How to pin the part of a registration that lies in @vma.  A right to
 * write pins for writing.  A registration the HFI only reads is pinned
 * for writing too in a private (copy-on-write) mapping, as ib_umem_get()
 * does: a read pin there may take the shared zero page, or a page the
 * process's next write copies away from, and the HFI would go on reading
 * bytes the process no longer sees (zeros, for untouched memory).  The
 * write pin breaks the sharing at registration; FOLL_FORCE lets it do so
 * in a mapping the process cannot write, and nothing is written.  Shared
 * mappings and hugetlb pages have no copy to break and never map the
 * zero page: a read pin is right there.
 *
 * Return: the gup flags, or -EFAULT when @vma does not allow @access.
 */
static int percs_mr_gup_flags(const struct vm_area_struct *vma, u32 access)
{
	if (access & PERCS_ACCESS_WRITES)
		return FOLL_LONGTERM | FOLL_WRITE;
	/* FOLL_FORCE would pass a mapping the process cannot even read. */
	if (!(vma->vm_flags & VM_READ))
		return -EFAULT;
	if (!is_cow_mapping(vma->vm_flags) ||
	    is_vm_hugetlb_page((struct vm_area_struct *)vma))
		return FOLL_LONGTERM;
	return FOLL_LONGTERM | FOLL_WRITE | FOLL_FORCE;
}

/*
 * Pin up to @n pages from @addr, all in one mapping, with the flags that
 * mapping needs.  Return: pages pinned (> 0) or -errno.
 */
static long percs_mr_pin_batch(struct mm_struct *mm, unsigned long addr,
			       unsigned long n, u32 access,
			       struct page **pages)
{
	struct vm_area_struct *vma;
	long ret;
	int gup;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma) {
		ret = -EFAULT;
		goto out;
	}
	gup = percs_mr_gup_flags(vma, access);
	if (gup < 0) {
		ret = gup;
		goto out;
	}
	n = min(n, (vma->vm_end - addr) >> PAGE_SHIFT);
	ret = pin_user_pages(addr, n, gup, pages, NULL);
	if (!ret)
		ret = -EFAULT;
out:
	mmap_read_unlock(mm);
	return ret;
}

/*
 * Charge and pin the pages of @mr from the caller's address space.  On
 * failure nothing stays pinned or charged.
 */
static int percs_mr_pin(struct percs_mr *mr)
{
	struct mm_struct *mm = current->mm;
	unsigned long start = mr->addr & PAGE_MASK, pinned = 0;
	long ret;

	ret = percs_mr_charge(mr, mm);
	if (ret)
		return ret;
	while (pinned < mr->npages) {
		ret = percs_mr_pin_batch(mm, start + pinned * PAGE_SIZE,
					 min_t(unsigned long,
					       mr->npages - pinned,
					       PERCS_MR_PIN_BATCH),
					 mr->access, mr->pages + pinned);
		if (ret < 0)
			goto fail;
		pinned += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto fail;
		}
		cond_resched();
	}
	mmgrab(mm);
	mr->mm = mm;
	return 0;

fail:
	unpin_user_pages(mr->pages, pinned);
	percs_mr_uncharge(mr, mm);
	return ret;
}

/*
 * Unpin, count and free a registration, uncharged, that nobody can reach
 * any more; process context.
 */
static void percs_mr_free(struct percs_mr *mr)
{
	struct percs_dev *pd = mr->pd;

	unpin_user_pages_dirty_lock(mr->pages, mr->npages,
				    mr->access & PERCS_ACCESS_WRITES);
	percs_mrn_free(mr);
	mmdrop(mr->mm);
	atomic_long_sub(mr->npages, &pd->live_pinned_pages);
	atomic_dec(&pd->live_mrs);
	kvfree(mr->pages);
	kfree(mr);
}

static void percs_mr_free_work(struct work_struct *work)
{
	percs_mr_free(container_of(work, struct percs_mr, work));
}

/* The grace period after the last reference is over: free, in a worker. */
static void percs_mr_free_rcu(struct rcu_head *head)
{
	struct percs_mr *mr = container_of(head, struct percs_mr, rcu);

	INIT_WORK(&mr->work, percs_mr_free_work);
	queue_work(mr->pd->nmmu_wq, &mr->work);
}

/**
 * percs_mr_release() - the last reference went
 * @mr: the registration, its count zero, unpublished
 *
 * Any context (see percs_mr_put()): the pages are uncharged now, and
 * unpinned and the struct freed after an RCU grace period.
 */
void percs_mr_release(struct percs_mr *mr)
{
	percs_mr_uncharge(mr, mr->mm);
	percs_quota_uncharge(mr->pd, mr->quota, PERCS_QUOTA_MRS);
	call_rcu(&mr->rcu, percs_mr_free_rcu);
}

/**
 * percs_mr_discard() - undo percs_mr_create() of a registration never
 *	published
 * @mr: the registration, with its one reference; process context
 */
void percs_mr_discard(struct percs_mr *mr)
{
	percs_mr_uncharge(mr, mr->mm);
	percs_quota_uncharge(mr->pd, mr->quota, PERCS_QUOTA_MRS);
	percs_mr_free(mr);
}

/**
 * percs_mr_hold() - one more reference on a registration already held
 * @mr: a registration from percs_mr_get(), whose reference the caller
 *	keeps while calling this
 */
void percs_mr_hold(struct percs_mr *mr)
{
	refcount_inc(&mr->ref);
}

/**
 * percs_mr_unpublish() - a registration erased from its window's table
 *	goes from the translation cache too
 * @w: the window
 * @mr: the registration, already erased from @w's table
 *
 * Later lookups fail, and no cache entry keeps the pointer once the
 * table's reference is dropped.
 */
void percs_mr_unpublish(struct percs_window *w, struct percs_mr *mr)
{
	WRITE_ONCE(mr->dead, true);
	smp_mb();	/* @dead before the entry: pairs with percs_mr_cache() */
	cmpxchg((struct percs_mr **)percs_mr_tlb_entry(w, mr->handle), mr,
		NULL);
}

/* Cache @mr, found in the table and referenced (see the header). */
static void percs_mr_cache(struct percs_window *w, struct percs_mr *mr)
{
	struct percs_mr __rcu **e = percs_mr_tlb_entry(w, mr->handle);

	rcu_assign_pointer(*e, mr);
	smp_mb();	/* the entry before @dead: pairs with the unpublish */
	if (READ_ONCE(mr->dead))
		cmpxchg((struct percs_mr **)e, mr, NULL);
}

/*
 * The range rules of every registration.  Return: 0, -EINVAL (unknown
 * access bits, zero or too long, wraps) or -EFAULT (not user addresses).
 */
static int percs_mr_check_range(u64 addr, u64 length, u32 access)
{
	u64 end;

	if (access & ~PERCS_ACCESS_ALL)
		return -EINVAL;
	if (!length || length > PERCS_MR_MAX_LENGTH ||
	    check_add_overflow(addr, length, &end))
		return -EINVAL;
	if (addr != (unsigned long)addr ||
	    !access_ok(u64_to_user_ptr(addr), length))
		return -EFAULT;
	return 0;
}

/**
 * percs_mr_create() - pin and charge a range of the caller's memory
 * @pd: the system
 * @addr: first byte (checked by percs_mr_check_range())
 * @length: bytes (likewise)
 * @access: PERCS_ACCESS_* (likewise)
 *
 * The one way registrations are made, for windows (PERCS_IOC_MR_REGISTER)
 * and for kernel clients (percs_kapi_mr_pin()): the user's quota of
 * registrations, RLIMIT_MEMLOCK and the live counts.  No handle, in no
 * table.  Process context.
 *
 * Return: the registration with one reference, or ERR_PTR(-EDQUOT,
 * -ENOMEM, -EFAULT, -EINTR, ...) as percs_mr_register().
 */
struct percs_mr *percs_mr_create(struct percs_dev *pd, u64 addr, u64 length,
				 u32 access)
{
	struct percs_mr *mr;
	int ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->quota = percs_quota_charge(pd, PERCS_QUOTA_MRS);
	if (IS_ERR(mr->quota)) {
		ret = PTR_ERR(mr->quota);
		kfree(mr);
		return ERR_PTR(ret);
	}
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->pd = pd;
	mr->npages = (PAGE_ALIGN(addr + length) - (addr & PAGE_MASK)) >>
		     PAGE_SHIFT;
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = percs_mr_pin(mr);
	if (ret)
		goto out_free;
	atomic_inc(&pd->live_mrs);
	atomic_long_add(mr->npages, &pd->live_pinned_pages);
	refcount_set(&mr->ref, 1);
	return mr;

out_free:
	percs_quota_uncharge(pd, mr->quota, PERCS_QUOTA_MRS);
	kvfree(mr->pages);
	kfree(mr);
	return ERR_PTR(ret);
}

/**
 * percs_mr_create_checked() - percs_mr_create() with the range rules
 * @pd: the system
 * @addr: first byte
 * @length: bytes
 * @access: PERCS_ACCESS_*
 *
 * Return: as percs_mr_create(), or ERR_PTR(-EINVAL, -EFAULT) from the
 * range rules of PERCS_IOC_MR_REGISTER.
 */
struct percs_mr *percs_mr_create_checked(struct percs_dev *pd, u64 addr,
					 u64 length, u32 access)
{
	int ret = percs_mr_check_range(addr, length, access);

	return ret ? ERR_PTR(ret) : percs_mr_create(pd, addr, length, access);
}

/**
 * percs_mr_atomic64() - apply a fetch-add or compare-swap on a word
 * @mr: the registration
 * @addr: the word, 8-byte aligned
 * @cmp_swap: compare-and-swap (else fetch-and-add)
 * @a: addend, or value compared
 * @b: value swapped in
 * @orig: out: the value found
 *
 * Return: 0 or the error of percs_mr_map_operand().
 */
int percs_mr_atomic64(struct percs_mr *mr, u64 addr, bool cmp_swap, u64 a,
		      u64 b, u64 *orig)
{
	u64 *p = percs_mr_map_operand(mr, addr, sizeof(u64));

	if (IS_ERR(p))
		return PTR_ERR(p);
	if (cmp_swap)
		*orig = cmpxchg64(p, a, b);
	else
		*orig = atomic64_fetch_add(a, (atomic64_t *)p);
	percs_mr_unmap_operand(p);
	return 0;
}

/**
 * percs_mr_register() - PERCS_IOC_MR_REGISTER
 * @w: the window
 * @req: the request (kernel copy); @req->handle is filled in
 * @ureq: the caller's copy, for the answer
 * @usize: the caller's struct size (at least sizeof(*@req))
 *
 * The registration is published only after the answer reached user
 * space, so a failure leaves nothing behind: nothing pinned, nothing
 * charged, no handle.
 *
 * With %PERCS_MR_F_INVALIDATE the registration follows the address space
 * (nmmu_notify.c).
 *
 * Return: 0; -EINVAL for flags other than %PERCS_MR_F_INVALIDATE, a
 * non-zero handle, unknown access bits, a zero length, one above %PERCS_MR_MAX_LENGTH or a range that wraps;
 * -EFAULT for a range outside the user address space or not mapped with
 * the access asked; -ENOMEM when the caller's user (all its processes and
 * the registrations they made, wherever the windows went since) would hold
 * more than RLIMIT_MEMLOCK pinned without CAP_IPC_LOCK, or out of memory;
 * -EDQUOT when the caller's user holds max_mrs_per_user registrations;
 * -ENOSPC when the window holds %PERCS_MR_MAX_PER_WINDOW registrations;
 * -EOPNOTSUPP for %PERCS_MR_F_INVALIDATE on a kernel without MMU
 * notifiers; -EAGAIN when the range kept changing while being pinned;
 * another error of pin_user_pages() (-EOPNOTSUPP for file DAX).
 */
int percs_mr_register(struct percs_window *w, struct percs_mr_register *req,
		      struct percs_mr_register __user *ureq, u32 usize)
{
	struct percs_dev *pd = w->hfi->pd;
	struct percs_mr *mr;
	u32 slot;
	int ret;

	if ((req->flags & ~PERCS_MR_F_INVALIDATE) || req->handle)
		return -EINVAL;
	ret = percs_mr_check_range(req->addr, req->length, req->access);
	if (ret)
		return ret;

	/* Reserve a slot first: a full table fails before pinning. */
	ret = xa_alloc(&w->mrs, &slot, NULL,
		       XA_LIMIT(1, PERCS_MR_MAX_PER_WINDOW), GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret == -EBUSY ? -ENOSPC : ret;
	if (req->flags & PERCS_MR_F_INVALIDATE)
		mr = percs_mrn_create(w, req->addr, req->length, req->access);
	else
		mr = percs_mr_create(pd, req->addr, req->length, req->access);
	if (IS_ERR(mr)) {
		xa_erase(&w->mrs, slot);
		return PTR_ERR(mr);
	}
	mr->handle = (u32)atomic_inc_return(&w->mr_gen) << PERCS_MR_SLOT_BITS |
		     slot;

	req->handle = mr->handle;
	if (copy_to_user(ureq, req, min_t(size_t, usize, sizeof(*req)))) {
		ret = -EFAULT;
		goto out_unpublished;
	}
	/* The slot is reserved: storing into it allocates nothing. */
	ret = xa_err(xa_store(&w->mrs, slot, mr, GFP_KERNEL_ACCOUNT));
	if (ret)
		goto out_unpublished;
	if (mr->notify)
		percs_mrn_publish(w, mr);
	return 0;

out_unpublished:
	xa_erase(&w->mrs, slot);
	percs_mrn_stop(mr);
	percs_mr_discard(mr);
	return ret;
}

/**
 * percs_mr_deregister() - PERCS_IOC_MR_DEREGISTER
 * @w: the window
 * @req: the request (kernel copy)
 *
 * The handle is gone when this returns; the pages are unpinned now, or
 * when the last transfer using them drops its reference.
 *
 * Return: 0; -EINVAL for non-zero flags or reserved; -ENOENT when the
 * window has no registration with this handle (never had, it was
 * deregistered, or it was invalidated).
 */
int percs_mr_deregister(struct percs_window *w,
			const struct percs_mr_deregister *req)
{
	u32 slot = req->handle & PERCS_MR_SLOT_MASK;
	struct percs_mr *mr;

	if (req->flags || req->reserved)
		return -EINVAL;
	xa_lock(&w->mrs);
	mr = xa_load(&w->mrs, slot);
	/* Dead here: invalidated, its own teardown is queued. */
	if (!mr || mr->handle != req->handle || READ_ONCE(mr->dead)) {
		xa_unlock(&w->mrs);
		return -ENOENT;
	}
	__xa_erase(&w->mrs, slot);
	xa_unlock(&w->mrs);
	percs_mrn_stop(mr);
	percs_mr_unpublish(w, mr);
	percs_mr_put(mr);
	return 0;
}

/**
 * percs_mr_find_rcu() - the translation cache missed: look in the table
 * @w: the window, kept valid by the caller
 * @handle: the handle
 *
 * Caller holds rcu_read_lock().  What is found is cached, under a
 * reference held for that (see the header).
 *
 * Return: the registration, valid until rcu_read_unlock(), or NULL.
 */
struct percs_mr *percs_mr_find_rcu(struct percs_window *w, u32 handle)
{
	struct percs_mr *mr = xa_load(&w->mrs, handle & PERCS_MR_SLOT_MASK);

	if (!mr || mr->handle != handle || READ_ONCE(mr->dead) ||
	    !refcount_inc_not_zero(&mr->ref))
		return NULL;
	percs_mr_cache(w, mr);
	percs_mr_put(mr);
	return mr;
}

/**
 * percs_mr_get() - translate (window, handle, range, right) for a transfer
 * @w: the window that owns the handle (the target of an RDMA or atomic
 *	packet, or the initiator for its local side); the caller keeps it
 *	valid for the call (rcu_read_lock() around a window lookup, or a
 *	reference to its file)
 * @handle: the registration handle the packet carries
 * @addr: effective address of the first byte the transfer touches
 * @len: bytes it touches (0 is accepted anywhere in [start, end])
 * @access: the PERCS_ACCESS_* rights the transfer needs, all of them
 *
 * Any context: takes no lock, never sleeps.  percs_mr_get_rcu() is the
 * same for a caller inside rcu_read_lock().  The checks run in this
 * order and each failure has its own errno, so a completion status can
 * carry it as is.
 *
 * Return: the registration with a reference held (drop it with
 * percs_mr_put() when the transfer is done with the pages), or
 * ERR_PTR(-ENOENT) when @w has no registration @handle (never had, or it
 * was deregistered or the window released), ERR_PTR(-ERANGE) when
 * [@addr, @addr + @len) is not inside the registration (or wraps),
 * ERR_PTR(-EPERM) when the registration does not grant every right in
 * @access, ERR_PTR(-EINVAL) for unknown bits in @access.
 */
struct percs_mr *percs_mr_get(struct percs_window *w, u32 handle, u64 addr,
			      u64 len, u32 access)
{
	struct percs_mr *mr;

	rcu_read_lock();
	mr = percs_mr_get_rcu(w, handle, addr, len, access);
	rcu_read_unlock();
	return mr;
}

/*
 * Copy between a kernel buffer and mapped user pages: whole words when
 * both sides can be brought to 8-byte alignment together (memcpy() is a
 * byte loop under emulators, see percs_copy()), memcpy() otherwise.
 */
static void percs_mr_memcpy(u8 *dst, const u8 *src, size_t n)
{
	size_t head;

	if (((unsigned long)dst ^ (unsigned long)src) & 7) {
		memcpy(dst, src, n);
		return;
	}
	head = min_t(size_t, n, -(unsigned long)dst & 7);
	memcpy(dst, src, head);
	percs_copy(dst + head, src + head, n - head);
}

static int percs_mr_copy(struct percs_mr *mr, u64 addr, u8 *buf, size_t len,
			 bool to_mr)
{
	u64 off;

	if (!percs_mr_covers(mr, addr, len))
		return -ERANGE;
	off = percs_mr_offset(mr, addr);
	while (len) {
		struct page *page = mr->pages[off >> PAGE_SHIFT];
		size_t poff = off & ~PAGE_MASK;
		size_t n = min_t(size_t, len, PAGE_SIZE - poff);
		u8 *p = kmap_local_page(page);

		if (to_mr) {
			percs_mr_memcpy(p + poff, buf, n);
			flush_dcache_page(page);
		} else {
			percs_mr_memcpy(buf, p + poff, n);
		}
		kunmap_local(p);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * percs_mr_copy_to() - write bytes into registered memory
 * @mr: a registration from percs_mr_get()
 * @addr: effective address of the first byte to write
 * @src: kernel buffer
 * @len: bytes
 *
 * Any alignment, across pages; any context.  The rights were checked by
 * percs_mr_get(); the range is checked again here.
 *
 * Return: 0, or -ERANGE (nothing written) when [@addr, @addr + @len) is
 * not inside @mr.
 */
int percs_mr_copy_to(struct percs_mr *mr, u64 addr, const void *src,
		     size_t len)
{
	return percs_mr_copy(mr, addr, (u8 *)src, len, true);
}

/**
 * percs_mr_copy_from() - read bytes out of registered memory
 * @mr: a registration from percs_mr_get()
 * @addr: effective address of the first byte to read
 * @dst: kernel buffer
 * @len: bytes
 *
 * As percs_mr_copy_to(), the other way.
 *
 * Return: 0, or -ERANGE (nothing read) when the range is not inside @mr.
 */
int percs_mr_copy_from(struct percs_mr *mr, u64 addr, void *dst, size_t len)
{
	return percs_mr_copy(mr, addr, dst, len, false);
}

/**
 * percs_mr_copy_mr() - copy registered memory to registered memory
 * @dst: a registration from percs_mr_get(), written
 * @daddr: effective address of the first byte to write
 * @src: a registration from percs_mr_get(), read
 * @saddr: effective address of the first byte to read
 * @len: bytes
 *
 * The RDMA engine's bulk path: page by page between the pinned pages,
 * both mapped with kmap_local_page(), whole words when both sides are
 * 8-byte aligned together.  Any context.
 *
 * Return: 0, or -ERANGE (nothing copied) when either range is outside
 * its registration.
 */
int percs_mr_copy_mr(struct percs_mr *dst, u64 daddr, struct percs_mr *src,
		     u64 saddr, size_t len)
{
	u64 doff, soff;

	if (!percs_mr_covers(dst, daddr, len) ||
	    !percs_mr_covers(src, saddr, len))
		return -ERANGE;
	doff = percs_mr_offset(dst, daddr);
	soff = percs_mr_offset(src, saddr);
	while (len) {
		size_t dpo = doff & ~PAGE_MASK, spo = soff & ~PAGE_MASK;
		size_t n = min3(len, PAGE_SIZE - dpo, PAGE_SIZE - spo);
		struct page *dpage = dst->pages[doff >> PAGE_SHIFT];
		u8 *s = kmap_local_page(src->pages[soff >> PAGE_SHIFT]);
		u8 *d = kmap_local_page(dpage);

		percs_mr_memcpy(d + dpo, s + spo, n);
		flush_dcache_page(dpage);
		kunmap_local(d);
		kunmap_local(s);
		doff += n;
		soff += n;
		len -= n;
	}
	return 0;
}

/**
 * percs_mr_window_init() - a new window has no registrations
 * @w: the window
 */
void percs_mr_window_init(struct percs_window *w)
{
	xa_init_flags(&w->mrs, XA_FLAGS_ALLOC);
	percs_mrn_window_init(w);
}

/**
 * percs_mr_window_fini() - deregister everything at the window's release
 * @w: the window, unpublished: no ioctl can reach it any more
 *
 * Process context.  Registrations that a transfer still uses are freed
 * when it drops them.
 */
void percs_mr_window_fini(struct percs_window *w)
{
	struct percs_mr *mr;
	unsigned long slot;

	xa_for_each(&w->mrs, slot, mr) {
		/* An invalidation's work may have taken it meanwhile. */
		if (xa_cmpxchg(&w->mrs, slot, mr, NULL, 0) != mr)
			continue;
		percs_mrn_stop(mr);
		percs_mr_unpublish(w, mr);
		percs_mr_put(mr);
		cond_resched();
	}
	percs_mrn_window_fini(w);
	xa_destroy(&w->mrs);
}

/**
 * percs_nmmu_init() - the release work queue, and the self-check
 * @pd: the system
 *
 * The self-check is test code (selftest.c): only a PERCS_TEST=1 build
 * runs it.
 *
 * Return: 0, -ENOMEM, or -EINVAL when the self-check fails (logged).
 */
int __init percs_nmmu_init(struct percs_dev *pd)
{
	int ret;

	pd->nmmu_wq = alloc_workqueue("percs-nmmu", WQ_UNBOUND, 0);
	if (!pd->nmmu_wq)
		return -ENOMEM;
	ret = percs_test_nmmu_selfcheck(pd);
	if (ret) {
		destroy_workqueue(pd->nmmu_wq);
		pd->nmmu_wq = NULL;
	}
	return ret;
}

/**
 * percs_nmmu_exit() - wait for the last deferred releases
 * @pd: the system; every window is gone (each holds the module)
 */
void percs_nmmu_exit(struct percs_dev *pd)
{
	rcu_barrier();	/* the grace periods queue the last frees */
	destroy_workqueue(pd->nmmu_wq);
	WARN_ON(atomic_read(&pd->live_mrs));
}
