// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the HFI character devices, their ioctls and sysfs attributes.
 *
 * ioctls go through one table (the iommufd pattern): every argument struct
 * starts with __u32 size; the struct is copied with copy_struct_from_user()
 * so it can grow, and answers are copied back up to the caller's size.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/kthread.h>
#include <linux/percpu.h>

#include "percs.h"

static int percs_hfi_open(struct inode *inode, struct file *file)
{
	file->private_data = container_of(inode->i_cdev, struct percs_hfi,
					  cdev);
	return nonseekable_open(inode, file);
}

union percs_ucmd_buf {
	struct percs_hfi_info info;
	struct percs_window_reserve reserve;
	struct percs_window_query query;
	struct percs_job_create job_create;
};

/**
 * struct percs_ucmd - one ioctl call being served
 * @ubuf: the caller's struct
 * @user_size: its size as the caller gave it
 * @cmd: the kernel copy
 */
struct percs_ucmd {
	void __user *ubuf;
	u32 user_size;
	void *cmd;
};

static int percs_ucmd_respond(struct percs_ucmd *ucmd, size_t len)
{
	if (copy_to_user(ucmd->ubuf, ucmd->cmd, min_t(size_t, ucmd->user_size,
						      len)))
		return -EFAULT;
	return 0;
}

static int percs_ioctl_hfi_info(struct percs_hfi *hfi, struct percs_ucmd *ucmd)
{
	struct percs_hfi_info *info = ucmd->cmd;
	struct percs_dev *pd = hfi->pd;

	if (info->flags || info->reserved)
		return -EINVAL;
	info->hub = hfi->hub;
	info->supernode = fm_hub_supernode(&pd->topo, hfi->hub);
	info->unit = hfi->unit;
	info->windows_total = pd->windows_per_hfi;
	info->windows_in_use = READ_ONCE(hfi->in_use);
	info->nr_supernodes = pd->topo.nr_supernodes;
	info->hubs_per_supernode = pd->topo.hubs_per_sn;
	info->nr_hubs = pd->topo.nr_hubs;
	info->hfis_per_hub = PERCS_HFIS_PER_HUB;
	info->max_packet = PERCS_MAX_PACKET;
	info->flit_size = PERCS_FLIT_SIZE;
	return percs_ucmd_respond(ucmd, sizeof(*info));
}

static int percs_ioctl_window_reserve(struct percs_hfi *hfi,
				      struct percs_ucmd *ucmd)
{
	return percs_window_reserve(hfi, ucmd->cmd, ucmd->ubuf,
				    ucmd->user_size);
}

static_assert(offsetofend(struct percs_window_query, send_blocked) ==
	      PERCS_WINDOW_QUERY_SIZE_VER0);

static int percs_ioctl_window_query(struct percs_hfi *hfi,
				    struct percs_ucmd *ucmd)
{
	struct percs_window_query *q = ucmd->cmd;
	int ret;

	ret = percs_window_query(hfi, q);
	if (ret && ret != -ENOENT)
		return ret;
	if (percs_ucmd_respond(ucmd, sizeof(*q)))
		return -EFAULT;
	return ret;
}

static int percs_ioctl_job_create(struct percs_hfi *hfi,
				  struct percs_ucmd *ucmd)
{
	return percs_job_create(hfi->pd, ucmd->cmd, ucmd->ubuf,
				ucmd->user_size);
}

struct percs_ioctl_op {
	unsigned int cmd;
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct percs_hfi *hfi, struct percs_ucmd *ucmd);
};

#define PERCS_IOCTL_OP(_ioctl, _fn, _struct, _last)			\
	[_IOC_NR(_ioctl)] = {						\
		.cmd = _ioctl,						\
		.size = sizeof(_struct),				\
		.min_size = offsetofend(_struct, _last),		\
		.execute = _fn,						\
	}

static const struct percs_ioctl_op percs_hfi_ops[] = {
	PERCS_IOCTL_OP(PERCS_IOC_HFI_INFO, percs_ioctl_hfi_info,
		       struct percs_hfi_info, reserved),
	PERCS_IOCTL_OP(PERCS_IOC_WINDOW_RESERVE, percs_ioctl_window_reserve,
		       struct percs_window_reserve, regions),
	PERCS_IOCTL_OP(PERCS_IOC_WINDOW_QUERY, percs_ioctl_window_query,
		       struct percs_window_query, send_blocked),
	PERCS_IOCTL_OP(PERCS_IOC_JOB_CREATE, percs_ioctl_job_create,
		       struct percs_job_create, job_key),
};

static long percs_hfi_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct percs_hfi *hfi = file->private_data;
	const struct percs_ioctl_op *op;
	union percs_ucmd_buf buf;
	struct percs_ucmd ucmd;
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (nr >= ARRAY_SIZE(percs_hfi_ops))
		return -ENOTTY;
	op = &percs_hfi_ops[nr];
	if (op->cmd != cmd || !op->execute)
		return -ENOTTY;

	ucmd.ubuf = (void __user *)arg;
	if (get_user(ucmd.user_size, (u32 __user *)ucmd.ubuf))
		return -EFAULT;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, ucmd.ubuf,
				    ucmd.user_size);
	if (ret)
		return ret;
	ucmd.cmd = &buf;
	return op->execute(hfi, &ucmd);
}

static const struct file_operations percs_hfi_fops = {
	.owner = THIS_MODULE,
	.open = percs_hfi_open,
	.unlocked_ioctl = percs_hfi_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

/* sysfs: /sys/class/percs/percs-hfiN/ */

static ssize_t hub_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	struct percs_hfi *hfi = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", hfi->hub);
}
static DEVICE_ATTR_RO(hub);

static ssize_t supernode_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct percs_hfi *hfi = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n",
			  fm_hub_supernode(&hfi->pd->topo, hfi->hub));
}
static DEVICE_ATTR_RO(supernode);

static ssize_t unit_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct percs_hfi *hfi = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", hfi->unit);
}
static DEVICE_ATTR_RO(unit);

static ssize_t windows_total_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct percs_hfi *hfi = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", hfi->pd->windows_per_hfi);
}
static DEVICE_ATTR_RO(windows_total);

static ssize_t windows_in_use_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct percs_hfi *hfi = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(hfi->in_use));
}
static DEVICE_ATTR_RO(windows_in_use);

static struct attribute *percs_hfi_attrs[] = {
	&dev_attr_hub.attr,
	&dev_attr_supernode.attr,
	&dev_attr_unit.attr,
	&dev_attr_windows_total.attr,
	&dev_attr_windows_in_use.attr,
	NULL,
};
ATTRIBUTE_GROUPS(percs_hfi);

static void percs_hfi_destroy(struct percs_dev *pd, struct percs_hfi *hfi)
{
	if (hfi->dev) {
		device_destroy(pd->class, hfi->dev->devt);
		cdev_del(&hfi->cdev);
	}
	percs_poll_stop(hfi);
	free_percpu(hfi->stats);
	bitmap_free(hfi->claimed);
	kfree(hfi->windows);
}

static int percs_hfi_create(struct percs_dev *pd, struct percs_hfi *hfi,
			    u32 id)
{
	dev_t devt = MKDEV(MAJOR(pd->devt), id);
	int ret;

	hfi->pd = pd;
	hfi->id = id;
	hfi->hub = id / PERCS_HFIS_PER_HUB;
	hfi->unit = id % PERCS_HFIS_PER_HUB;
	mutex_init(&hfi->lock);
	INIT_LIST_HEAD(&hfi->poll_list);
	init_waitqueue_head(&hfi->poll_wq);
	hfi->windows = kcalloc(pd->windows_per_hfi, sizeof(*hfi->windows),
			       GFP_KERNEL);
	hfi->claimed = bitmap_zalloc(pd->windows_per_hfi, GFP_KERNEL);
	hfi->stats = alloc_percpu(struct percs_hfi_stats);
	if (!hfi->windows || !hfi->claimed || !hfi->stats)
		return -ENOMEM;

	cdev_init(&hfi->cdev, &percs_hfi_fops);
	hfi->cdev.owner = THIS_MODULE;
	ret = cdev_add(&hfi->cdev, devt, 1);
	if (ret)
		return ret;
	hfi->dev = device_create(pd->class, NULL, devt, hfi, "percs-hfi%u",
				 id);
	if (IS_ERR(hfi->dev)) {
		ret = PTR_ERR(hfi->dev);
		hfi->dev = NULL;
		cdev_del(&hfi->cdev);
		return ret;
	}
	return 0;
}

static char *percs_devnode(struct device *dev, umode_t *mode)
{
	/* Any user may open an HFI; job keys decide who talks to whom. */
	if (mode)
		*mode = 0666;
	return NULL;
}

/**
 * percs_hfi_init_all() - create the class, then every HFI's device
 * @pd: the system, with its topology set
 *
 * Return: 0 or -errno; on failure nothing is left behind.
 */
int percs_hfi_init_all(struct percs_dev *pd)
{
	u32 i;
	int ret;

	pd->hfis = kcalloc(pd->nr_hfis, sizeof(*pd->hfis), GFP_KERNEL);
	if (!pd->hfis)
		return -ENOMEM;
	ret = alloc_chrdev_region(&pd->devt, 0, pd->nr_hfis, "percs");
	if (ret)
		goto out_free;
	pd->class = class_create(THIS_MODULE, "percs");
	if (IS_ERR(pd->class)) {
		ret = PTR_ERR(pd->class);
		goto out_region;
	}
	pd->class->dev_groups = percs_hfi_groups;
	pd->class->devnode = percs_devnode;

	for (i = 0; i < pd->nr_hfis; i++) {
		ret = percs_hfi_create(pd, &pd->hfis[i], i);
		if (ret) {
			pr_err("HFI %u: cannot create its device (%d)\n", i,
			       ret);
			percs_hfi_destroy(pd, &pd->hfis[i]);
			while (i--)
				percs_hfi_destroy(pd, &pd->hfis[i]);
			goto out_class;
		}
	}
	return 0;

out_class:
	class_destroy(pd->class);
out_region:
	unregister_chrdev_region(pd->devt, pd->nr_hfis);
out_free:
	kfree(pd->hfis);
	return ret;
}

/**
 * percs_hfi_exit_all() - remove every HFI (no window can be open: each
 *	window file holds a module reference)
 * @pd: the system
 */
void percs_hfi_exit_all(struct percs_dev *pd)
{
	u32 i;

	for (i = 0; i < pd->nr_hfis; i++)
		percs_hfi_destroy(pd, &pd->hfis[i]);
	class_destroy(pd->class);
	unregister_chrdev_region(pd->devt, pd->nr_hfis);
	kfree(pd->hfis);
}
