// SPDX-License-Identifier: GPL-2.0
/*
 * percs: who may use a job key.
 *
 * The first window reserved with a key binds the key to the reserver's
 * effective uid until the last window of that key is released.  Another
 * uid may join only with CAP_SYS_ADMIN (a job launcher).  So one user can
 * never inject packets into another user's job by guessing its key.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/slab.h>

#include "percs.h"

struct percs_jobkey {
	kuid_t uid;
	unsigned int windows;
};

/**
 * percs_jobkey_get() - take a reference on a job key for a new window
 * @pd: the system
 * @key: the key (non-zero)
 *
 * Return: 0, -EACCES if the key belongs to another user, -ENOMEM.
 */
int percs_jobkey_get(struct percs_dev *pd, u32 key)
{
	struct percs_jobkey *jk;
	kuid_t uid = current_euid();
	int ret = 0;

	mutex_lock(&pd->jobkey_lock);
	jk = xa_load(&pd->jobkeys, key);
	if (jk) {
		if (!uid_eq(jk->uid, uid) && !capable(CAP_SYS_ADMIN))
			ret = -EACCES;
		else
			jk->windows++;
		goto out;
	}
	jk = kzalloc(sizeof(*jk), GFP_KERNEL_ACCOUNT);
	if (!jk) {
		ret = -ENOMEM;
		goto out;
	}
	jk->uid = uid;
	jk->windows = 1;
	ret = xa_err(xa_store(&pd->jobkeys, key, jk, GFP_KERNEL_ACCOUNT));
	if (ret)
		kfree(jk);
out:
	mutex_unlock(&pd->jobkey_lock);
	return ret;
}

/**
 * percs_jobkey_put() - drop a window's reference on its job key
 * @pd: the system
 * @key: the key
 */
void percs_jobkey_put(struct percs_dev *pd, u32 key)
{
	struct percs_jobkey *jk;

	mutex_lock(&pd->jobkey_lock);
	jk = xa_load(&pd->jobkeys, key);
	if (!WARN_ON(!jk) && !--jk->windows) {
		xa_erase(&pd->jobkeys, key);
		kfree(jk);
	}
	mutex_unlock(&pd->jobkey_lock);
}

/**
 * percs_jobkey_destroy() - free the key table (module unload)
 * @pd: the system
 */
void percs_jobkey_destroy(struct percs_dev *pd)
{
	struct percs_jobkey *jk;
	unsigned long key;

	xa_for_each(&pd->jobkeys, key, jk)
		kfree(jk);
	xa_destroy(&pd->jobkeys);
}

/**
 * percs_jobkey_count() - job keys in use (debugfs)
 * @pd: the system
 */
unsigned int percs_jobkey_count(struct percs_dev *pd)
{
	struct percs_jobkey *jk;
	unsigned long key;
	unsigned int n = 0;

	mutex_lock(&pd->jobkey_lock);
	xa_for_each(&pd->jobkeys, key, jk)
		n++;
	mutex_unlock(&pd->jobkey_lock);
	return n;
}
