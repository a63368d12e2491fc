// SPDX-License-Identifier: GPL-2.0
/*
 * percs: per-user quotas on the shared tables - windows, memory
 * registrations, CAU trees and jobs.
 *
 * Every HFI is open to every user, so one user could otherwise take every
 * window of an HFI, every tree entry of every CAU, or fill the NMMU.  Each
 * object is charged, when it is created, to the real uid of the process
 * creating it (as RLIMIT_NPROC counts processes), and uncharged when it
 * goes, whoever holds it then: a window passed to another process or
 * inherited stays charged to the user who reserved it.  The limits are
 * module parameters, writable by root at run time in
 * /sys/module/percs/parameters/; 0 means no limit.  Beyond a limit the
 * call fails with -EDQUOT.
 *
 * A user's counters live in a &struct percs_user found by uid in a small
 * hash table; the entry exists while the user has anything charged, and
 * each charge holds a reference on it.  Uncharging takes a spinlock only,
 * so it may happen in any context (the lock is taken with interrupts off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "percs.h"

static unsigned int percs_quota_limit[PERCS_QUOTA_NR] = {
	[PERCS_QUOTA_WINDOWS] = PERCS_DEF_USER_WINDOWS,
	[PERCS_QUOTA_MRS] = PERCS_DEF_USER_MRS,
	[PERCS_QUOTA_CAU_TREES] = PERCS_DEF_USER_CAU_TREES,
	[PERCS_QUOTA_JOBS] = PERCS_DEF_USER_JOBS,
};

module_param_named(max_windows_per_user,
		   percs_quota_limit[PERCS_QUOTA_WINDOWS], uint, 0644);
MODULE_PARM_DESC(max_windows_per_user,
		 "Windows one user may hold over all HFIs, 0: no limit (default 4096)");
module_param_named(max_mrs_per_user, percs_quota_limit[PERCS_QUOTA_MRS],
		   uint, 0644);
MODULE_PARM_DESC(max_mrs_per_user,
		 "Memory registrations one user may hold, 0: no limit (default 65536)");
module_param_named(max_cau_trees_per_user,
		   percs_quota_limit[PERCS_QUOTA_CAU_TREES], uint, 0644);
MODULE_PARM_DESC(max_cau_trees_per_user,
		 "CAU trees one user may have created, 0: no limit (default 512)");
module_param_named(max_jobs_per_user, percs_quota_limit[PERCS_QUOTA_JOBS],
		   uint, 0644);
MODULE_PARM_DESC(max_jobs_per_user,
		 "Jobs one user may have created, 0: no limit (default 4096)");

/**
 * struct percs_user - what one user has charged
 * @node: entry in pd->users
 * @uid: the user
 * @ref: one per charge, and one per lookup in progress
 * @used: objects charged, by enum percs_quota
 */
struct percs_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_t used[PERCS_QUOTA_NR];
};

static struct hlist_head *percs_users_bucket(struct percs_dev *pd, kuid_t uid)
{
	return &pd->users[hash_32(__kuid_val(uid), PERCS_USERS_HASH_BITS)];
}

static struct percs_user *percs_users_find(struct percs_dev *pd, kuid_t uid)
{
	struct percs_user *u;

	lockdep_assert_held(&pd->users_lock);
	hlist_for_each_entry(u, percs_users_bucket(pd, uid), node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* The caller's entry, referenced; created if it has none. */
static struct percs_user *percs_user_get(struct percs_dev *pd)
{
	kuid_t uid = current_uid();
	struct percs_user *u, *fresh;

	spin_lock_irq(&pd->users_lock);
	u = percs_users_find(pd, uid);
	if (u)
		refcount_inc(&u->ref);
	spin_unlock_irq(&pd->users_lock);
	if (u)
		return u;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return NULL;
	fresh->uid = uid;
	refcount_set(&fresh->ref, 1);
	spin_lock_irq(&pd->users_lock);
	u = percs_users_find(pd, uid);
	if (u) {
		refcount_inc(&u->ref);
	} else {
		hlist_add_head(&fresh->node, percs_users_bucket(pd, uid));
		pd->nr_users++;
		u = fresh;
		fresh = NULL;
	}
	spin_unlock_irq(&pd->users_lock);
	kfree(fresh);
	return u;
}

static void percs_user_put(struct percs_dev *pd, struct percs_user *u)
{
	unsigned long flags;

	/* Under the lock, so a lookup never finds an entry at zero. */
	spin_lock_irqsave(&pd->users_lock, flags);
	if (refcount_dec_and_test(&u->ref)) {
		hlist_del(&u->node);
		pd->nr_users--;
	} else {
		u = NULL;
	}
	spin_unlock_irqrestore(&pd->users_lock, flags);
	kfree(u);
}

/**
 * percs_quota_charge() - charge one object to the calling user
 * @pd: the system
 * @q: which quota (enum percs_quota)
 *
 * Process context.  The object keeps the returned entry and gives it to
 * percs_quota_uncharge() when it goes.
 *
 * Return: the user's entry, ERR_PTR(-EDQUOT) when the user holds the
 * limit's number of such objects already, ERR_PTR(-ENOMEM).
 */
struct percs_user *percs_quota_charge(struct percs_dev *pd,
				      enum percs_quota q)
{
	unsigned int limit = READ_ONCE(percs_quota_limit[q]);
	struct percs_user *u = percs_user_get(pd);
	int used;

	if (!u)
		return ERR_PTR(-ENOMEM);
	/* A limit lowered below what is held refuses until enough went. */
	used = atomic_read(&u->used[q]);
	do {
		if (limit && used >= limit) {
			percs_user_put(pd, u);
			return ERR_PTR(-EDQUOT);
		}
	} while (!atomic_try_cmpxchg(&u->used[q], &used, used + 1));
	return u;
}

/**
 * percs_quota_uncharge() - an object charged by percs_quota_charge() went
 * @pd: the system
 * @u: the entry it was charged to (NULL: nothing was)
 * @q: the same quota
 *
 * Any context.
 */
void percs_quota_uncharge(struct percs_dev *pd, struct percs_user *u,
			  enum percs_quota q)
{
	if (!u)
		return;
	atomic_dec(&u->used[q]);
	percs_user_put(pd, u);
}

/**
 * percs_quota_users() - users with something charged
 * @pd: the system
 *
 * Return: their number (debugfs live).
 */
unsigned int percs_quota_users(struct percs_dev *pd)
{
	return READ_ONCE(pd->nr_users);
}

/**
 * percs_quota_init() - no user has anything charged
 * @pd: the system
 */
void percs_quota_init(struct percs_dev *pd)
{
	unsigned int i;

	spin_lock_init(&pd->users_lock);
	for (i = 0; i < ARRAY_SIZE(pd->users); i++)
		INIT_HLIST_HEAD(&pd->users[i]);
}
