// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: memory regions.  Each is a registration of percs.ko's NMMU
 * (percs_kapi_mr_pin()): pinned and charged to RLIMIT_MEMLOCK exactly as
 * a native window's registration.  lkey == rkey == (table index << 8) |
 * a random byte, so a stale key finds nothing for a while.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include <linux/percs.h>
#include "verbs.h"

#define PV_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			     IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			     IB_ACCESS_RELAXED_ORDERING)

static u32 pv_percs_access(int access)
{
	u32 a = 0;

	if (access & IB_ACCESS_LOCAL_WRITE)
		a |= PERCS_ACCESS_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_WRITE)
		a |= PERCS_ACCESS_REMOTE_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		a |= PERCS_ACCESS_REMOTE_READ;
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		a |= PERCS_ACCESS_REMOTE_ATOMIC;
	return a;
}

/**
 * pv_reg_user_mr() - register user memory
 * @ibpd: the PD
 * @start: first byte, in the caller's address space
 * @length: bytes
 * @iova: the address work requests name the first byte by
 * @access: IB_ACCESS_*
 * @udata: unused
 *
 * Return: the MR, or ERR_PTR(-EOPNOTSUPP) for an access flag not
 * supported (on-demand paging, memory windows, ...), the errors of
 * percs_kapi_mr_pin() (-EINVAL for a zero length, -EFAULT, -ENOMEM
 * past RLIMIT_MEMLOCK, -EDQUOT), -ENOSPC when the device holds
 * %PV_MAX_MR regions.
 */
struct ib_mr *pv_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			     u64 iova, int access, struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibpd->device);
	struct pv_mr *mr;
	u32 index;
	int ret;

	if (access & ~PV_ACCESS_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pmr = percs_kapi_mr_pin(percs_kapi_system(), start, length,
				    pv_percs_access(access));
	if (IS_ERR(mr->pmr)) {
		ret = PTR_ERR(mr->pmr);
		goto out_free;
	}
	mr->start = start;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	ret = xa_alloc(&dev->mrs, &index, NULL, XA_LIMIT(1, PV_MAX_MR),
		       GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY)
			ret = -ENOSPC;
		goto out_unpin;
	}
	mr->ib.lkey = index << PV_MR_KEY_BITS | get_random_u8();
	mr->ib.rkey = mr->ib.lkey;
	mr->ib.length = length;
	mr->ib.iova = iova;
	/* Published complete: lookups run under RCU without the lock. */
	xa_store(&dev->mrs, index, mr, GFP_KERNEL);
	return &mr->ib;

out_unpin:
	percs_kapi_mr_unpin(mr->pmr);
out_free:
	kfree(mr);
	return ERR_PTR(ret);
}

/*
 * Kernel consumers (ib_alloc_pd() asks for a DMA MR) are not supported:
 * every transfer names user memory pinned by pv_reg_user_mr().
 */
struct ib_mr *pv_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

int pv_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct pv_dev *dev = to_pv_dev(ibmr->device);
	struct pv_mr *mr = to_pv_mr(ibmr);

	xa_erase(&dev->mrs, ibmr->lkey >> PV_MR_KEY_BITS);
	/* Readers that found it finish before the pages and @mr go. */
	percs_kapi_mr_unpin(mr->pmr);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * pv_mr_lookup_rcu() - the MR of a key, under rcu_read_lock()
 * @dev: the device that issued the key
 * @key: an lkey or rkey
 *
 * Return: the MR, valid until rcu_read_unlock(), or NULL.
 */
struct pv_mr *pv_mr_lookup_rcu(struct pv_dev *dev, u32 key)
{
	struct pv_mr *mr = xa_load(&dev->mrs, key >> PV_MR_KEY_BITS);

	return mr && mr->ib.lkey == key ? mr : NULL;
}

/**
 * pv_mr_check() - may a transfer use [@iova, @iova + @len) of @mr?
 * @mr: the region
 * @pd: the PD of the QP that uses it
 * @iova: first byte
 * @len: bytes
 * @access: IB_ACCESS_* it needs (0: a local read)
 *
 * Return: 0, -EACCES (another PD, or a right missing), -ERANGE.
 */
int pv_mr_check(struct pv_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		int access)
{
	u64 end;

	if (mr->ib.pd != pd || (mr->access & access) != access)
		return -EACCES;
	if (check_add_overflow(iova, len, &end) || iova < mr->iova ||
	    end > mr->iova + mr->length)
		return -ERANGE;
	return 0;
}
