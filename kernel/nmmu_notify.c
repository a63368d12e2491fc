// SPDX-License-Identifier: GPL-2.0
/*
 * percs: registrations that follow the address space (PERCS_MR_F_INVALIDATE).
 *
 * A registration pins the pages its range had when it was made.  If the
 * process then unmaps the range and maps new memory there, a registration
 * cache in user space that reuses the handle for the same address would
 * move the old pages: silent corruption.  So a registration made with
 * PERCS_MR_F_INVALIDATE carries an mmu_interval_notifier on its range;
 * when the mapping changes, the notifier ends it as a deregistration would
 * and reports the handle in the window's status page, where the cache
 * looks before every reuse.
 *
 * The notifier may run in any thread of the process, with mmap_lock held
 * and sometimes unable to sleep, so it only marks the registration dead
 * (lookups and running transfers fail with ENOENT at once), writes the
 * report under w->mr_inval_lock and queues a work item.  The work item
 * takes the registration out of the window's table, removes the notifier
 * (mmu_interval_notifier_remove() sleeps and must not run inside an
 * invalidation) and drops the table's reference: the pages go when no
 * transfer in flight holds them.  Whoever erases the registration from the
 * table (that work, PERCS_IOC_MR_DEREGISTER or the window's release) owns
 * the rest of the teardown; the other two find nothing to do.  The window
 * waits at its release for the work items it queued (w->mr_inval_pending),
 * as the notifier and the work reach the window through the registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "nmmu.h"

/* Pinning is retried this often when the range changes meanwhile. */
#define PERCS_MRN_PIN_TRIES	4

/**
 * enum percs_mrn_state - where a notified registration is
 * @PERCS_MRN_ARMING: being registered: an invalidation only moves the
 *	sequence, which the registration checks before publishing
 * @PERCS_MRN_LIVE: published: an invalidation ends it
 * @PERCS_MRN_ENDED: ended (reported, or torn down by its owner): the
 *	notifier does nothing more
 */
enum percs_mrn_state {
	PERCS_MRN_ARMING,
	PERCS_MRN_LIVE,
	PERCS_MRN_ENDED,
};

/**
 * struct percs_mr_notify - the notifier of one registration
 * @mni: the interval notifier on the pages covering the range
 * @w: the window the registration belongs to
 * @mr: the registration (set under @w->mr_inval_lock before it goes live)
 * @state: &enum percs_mrn_state, written under @w->mr_inval_lock
 * @work: the teardown after an invalidation, in process context
 */
struct percs_mr_notify {
	struct mmu_interval_notifier mni;
	struct percs_window *w;
	struct percs_mr *mr;
	int state;
	struct work_struct work;
};

/* Events that keep every page where it is: nothing to report. */
static bool percs_mrn_same_pages(enum mmu_notifier_event event)
{
	return event == MMU_NOTIFY_PROTECTION_VMA ||
	       event == MMU_NOTIFY_PROTECTION_PAGE ||
	       event == MMU_NOTIFY_SOFT_DIRTY;
}

/*
 * End a live registration: dead for every lookup, reported in the status
 * page, its teardown queued.  Caller holds w->mr_inval_lock.
 */
static void percs_mrn_end_locked(struct percs_window *w,
				 struct percs_mr_notify *n)
{
	struct percs_status *st = w->st;
	u64 i = w->mr_inval_count++;

	WRITE_ONCE(n->state, PERCS_MRN_ENDED);
	percs_mr_unpublish(w, n->mr);
	WRITE_ONCE(st->mr_inval_ring[i % PERCS_MR_INVAL_RING], n->mr->handle);
	/* The handle before the count: pairs with the reader's acquire. */
	smp_store_release(&st->mr_invalidated, i + 1);
	atomic_inc(&w->mr_inval_pending);
	queue_work(w->hfi->pd->nmmu_wq, &n->work);
}

static bool percs_mrn_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct percs_mr_notify *n = container_of(mni, struct percs_mr_notify,
						 mni);
	struct percs_window *w;

	/*
	 * Ended: the window may be going (its release waits only for the
	 * invalidations that queued work, and the owner's notifier removal
	 * waits for the ones running now).
	 */
	if (READ_ONCE(n->state) == PERCS_MRN_ENDED)
		return true;
	w = n->w;
	spin_lock(&w->mr_inval_lock);
	mmu_interval_set_seq(mni, cur_seq);
	if (n->state == PERCS_MRN_LIVE && !percs_mrn_same_pages(range->event))
		percs_mrn_end_locked(w, n);
	spin_unlock(&w->mr_inval_lock);
	return true;
}

static const struct mmu_interval_notifier_ops percs_mrn_ops = {
	.invalidate = percs_mrn_invalidate,
};

/* One queued work item of @w is done. */
static void percs_mrn_work_done(struct percs_window *w)
{
	if (atomic_dec_and_test(&w->mr_inval_pending))
		wake_up_var(&w->mr_inval_pending);
}

/* The teardown after an invalidation, unless an owner took it over. */
static void percs_mrn_work(struct work_struct *work)
{
	struct percs_mr_notify *n = container_of(work, struct percs_mr_notify,
						 work);
	struct percs_window *w = n->w;
	struct percs_mr *mr = n->mr;
	unsigned long slot = mr->handle & PERCS_MR_SLOT_MASK;

	if (xa_cmpxchg(&w->mrs, slot, mr, NULL, 0) == mr) {
		/* Waits for the invalidations still running on it. */
		mmu_interval_notifier_remove(&n->mni);
		percs_mr_put(mr);	/* the table's; frees @n eventually */
	}
	percs_mrn_work_done(w);
}

/**
 * percs_mrn_stop() - the owner of a registration tears its notifier down
 * @mr: a registration just erased from its window's table by the caller
 *	(deregistration, the window's release), or never published
 *
 * Process context.  Afterwards no invalidation runs or will run for @mr
 * and its work item neither.  Nothing for a registration without notifier.
 */
void percs_mrn_stop(struct percs_mr *mr)
{
	struct percs_mr_notify *n = mr->notify;

	if (!n)
		return;
	mmu_interval_notifier_remove(&n->mni);
	WRITE_ONCE(n->state, PERCS_MRN_ENDED);
	/* Queued but not run: its count is the owner's to drop. */
	if (cancel_work_sync(&n->work))
		percs_mrn_work_done(n->w);
}

/**
 * percs_mrn_free() - free a registration's notifier
 * @mr: the registration being freed; percs_mrn_stop() ran on it
 */
void percs_mrn_free(struct percs_mr *mr)
{
	kfree(mr->notify);
	mr->notify = NULL;
}

/**
 * percs_mrn_create() - pin a registration under a notifier on its range
 * @w: the window
 * @addr: first byte (range rules checked)
 * @length: bytes
 * @access: PERCS_ACCESS_*
 *
 * The notifier is inserted before the pages are pinned, and the pinning
 * is redone when the range changed meanwhile (breaking copy-on-write
 * while pinning is such a change), so the pages pinned are the ones
 * mapped when the notifier's sequence was read.  percs_mrn_publish()
 * checks the sequence once more.  Process context.
 *
 * Return: the registration with one reference and its notifier armed, or
 * ERR_PTR() as percs_mr_create(), or ERR_PTR(-EAGAIN) when the range kept
 * changing.
 */
struct percs_mr *percs_mrn_create(struct percs_window *w, u64 addr,
				  u64 length, u32 access)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned long end = PAGE_ALIGN(addr + length);
	struct percs_mr_notify *n;
	struct percs_mr *mr;
	unsigned long seq;
	int tries, ret;

	n = kzalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (!n)
		return ERR_PTR(-ENOMEM);
	n->w = w;
	n->state = PERCS_MRN_ARMING;
	INIT_WORK(&n->work, percs_mrn_work);
	ret = mmu_interval_notifier_insert(&n->mni, current->mm, start,
					   end - start, &percs_mrn_ops);
	if (ret) {
		kfree(n);
		return ERR_PTR(ret);
	}
	for (tries = 0; tries < PERCS_MRN_PIN_TRIES; tries++) {
		seq = mmu_interval_read_begin(&n->mni);
		mr = percs_mr_create(w->hfi->pd, addr, length, access);
		if (IS_ERR(mr))
			break;
		mr->notify = n;
		mr->notify_seq = seq;
		if (!mmu_interval_read_retry(&n->mni, seq))
			return mr;
		mr->notify = NULL;
		percs_mr_discard(mr);
		mr = ERR_PTR(-EAGAIN);
	}
	mmu_interval_notifier_remove(&n->mni);
	kfree(n);
	return mr;
}

/**
 * percs_mrn_publish() - a registration from percs_mrn_create() is in the
 *	window's table: from now on an invalidation ends it
 * @w: the window
 * @mr: the registration, stored in @w's table under its handle
 *
 * If the range changed since the pages were pinned, it is ended now, as
 * the invalidation would have: user space learns it from the status page.
 */
void percs_mrn_publish(struct percs_window *w, struct percs_mr *mr)
{
	struct percs_mr_notify *n = mr->notify;

	spin_lock(&w->mr_inval_lock);
	n->mr = mr;
	n->state = PERCS_MRN_LIVE;
	if (mmu_interval_read_retry(&n->mni, mr->notify_seq))
		percs_mrn_end_locked(w, n);
	spin_unlock(&w->mr_inval_lock);
}

/**
 * percs_mrn_window_init() - a new window has reported no invalidation
 * @w: the window
 */
void percs_mrn_window_init(struct percs_window *w)
{
	spin_lock_init(&w->mr_inval_lock);
	atomic_set(&w->mr_inval_pending, 0);
	w->mr_inval_count = 0;
}

/**
 * percs_mrn_window_fini() - wait for the window's invalidation work
 * @w: the window; its table is empty and every owner stopped its notifiers
 *
 * Process context, not on the NMMU work queue.
 */
void percs_mrn_window_fini(struct percs_window *w)
{
	wait_var_event(&w->mr_inval_pending,
		       !atomic_read(&w->mr_inval_pending));
}
