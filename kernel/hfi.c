// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the HFI character devices and their sysfs attributes.  Their
 * ioctls go through the front door of every percs file (ioctl.c).
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

const struct file_operations percs_hfi_fops = {
	.owner = THIS_MODULE,
	.open = percs_hfi_open,
	.unlocked_ioctl = percs_ioctl,
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
