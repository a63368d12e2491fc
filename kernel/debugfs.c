// SPDX-License-Identifier: GPL-2.0
/*
 * percs: debugfs - live object counters (tests check they return to zero)
 * and per-HFI packet counts by route class.
 *
 * /sys/kernel/debug/percs/live:   "name value" lines
 * /sys/kernel/debug/percs/routes: one line per HFI
 * /sys/kernel/debug/percs/isr/:   the network's fault knobs (reorder_ppm,
 *	reorder_depth, hold_us; a value out of range is refused with
 *	-EINVAL) and "flight", its counters
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "percs.h"

static int percs_live_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	unsigned int blocked = 0, i, in_use = 0;
	struct list_head *pos;

	spin_lock(&pd->blocked_lock);
	list_for_each(pos, &pd->blocked)
		blocked++;
	spin_unlock(&pd->blocked_lock);
	for (i = 0; i < pd->nr_hfis; i++)
		in_use += READ_ONCE(pd->hfis[i].in_use);

	seq_printf(m, "windows %d\n", atomic_read(&pd->live_windows));
	seq_printf(m, "windows_reserved %u\n", in_use);
	seq_printf(m, "mappings %d\n", atomic_read(&pd->live_mappings));
	seq_printf(m, "registrations %d\n", atomic_read(&pd->live_mrs));
	seq_printf(m, "pinned_pages %ld\n",
		   atomic_long_read(&pd->live_pinned_pages));
	seq_printf(m, "blocked_senders %u\n", blocked);
	seq_printf(m, "job_keys %u\n", percs_jobkey_count(pd));
	seq_printf(m, "packets_in_flight %d\n", atomic_read(&pd->flight.live));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_live);

static int percs_routes_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	unsigned int i, c, cpu;

	seq_puts(m, "hfi same_hub intra_supernode inter_supernode\n");
	for (i = 0; i < pd->nr_hfis; i++) {
		u64 sum[PERCS_NR_ROUTE_CLASSES] = { 0 };

		for_each_possible_cpu(cpu)
			for (c = 0; c < PERCS_NR_ROUTE_CLASSES; c++)
				sum[c] += per_cpu_ptr(pd->hfis[i].stats,
						      cpu)->packets[c];
		seq_printf(m, "%u %llu %llu %llu\n", i, sum[FM_ROUTE_SAME_HUB],
			   sum[FM_ROUTE_INTRA_SN], sum[FM_ROUTE_INTER_SN]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_routes);

static int percs_flight_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;

	seq_printf(m, "in_flight %d\n", atomic_read(&pd->flight.live));
	seq_printf(m, "held %lld\n", atomic64_read(&pd->flight.held));
	seq_printf(m, "discarded %lld\n", atomic64_read(&pd->flight.discarded));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_flight);

/*
 * u32 knobs with a range: debugfs_create_u32() would take any value.
 * Each file's private data is a &struct percs_knob_file.
 */
struct percs_knob {
	const char *name;
	size_t offset;		/* of the u32 in struct percs_dev */
	u32 min, max;
};

struct percs_knob_file {
	const struct percs_knob *knob;
	u32 *val;
};

static const struct percs_knob percs_isr_knobs[] = {
	{ "reorder_ppm", offsetof(struct percs_dev, flight.reorder_ppm),
	  0, 1000000 },
	{ "reorder_depth", offsetof(struct percs_dev, flight.reorder_depth),
	  1, PERCS_FLIGHT_MAX_DEPTH },
	{ "hold_us", offsetof(struct percs_dev, flight.hold_us),
	  1, PERCS_FLIGHT_MAX_HOLD_US },
};

static int percs_knob_show(struct seq_file *m, void *unused)
{
	struct percs_knob_file *kf = m->private;

	seq_printf(m, "%u\n", READ_ONCE(*kf->val));
	return 0;
}

static int percs_knob_open(struct inode *inode, struct file *file)
{
	return single_open(file, percs_knob_show, inode->i_private);
}

static ssize_t percs_knob_write(struct file *file, const char __user *buf,
				size_t len, loff_t *ppos)
{
	struct percs_knob_file *kf =
		((struct seq_file *)file->private_data)->private;
	u32 v;
	int ret;

	ret = kstrtou32_from_user(buf, len, 0, &v);
	if (ret)
		return ret;
	if (v < kf->knob->min || v > kf->knob->max)
		return -EINVAL;
	WRITE_ONCE(*kf->val, v);
	return len;
}

static const struct file_operations percs_knob_fops = {
	.owner = THIS_MODULE,
	.open = percs_knob_open,
	.read = seq_read,
	.write = percs_knob_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void percs_debugfs_knobs(struct percs_dev *pd, struct dentry *dir)
{
	unsigned int i, n = ARRAY_SIZE(percs_isr_knobs);

	pd->knobs = kcalloc(n, sizeof(*pd->knobs), GFP_KERNEL);
	if (!pd->knobs)
		return;
	for (i = 0; i < n; i++) {
		pd->knobs[i].knob = &percs_isr_knobs[i];
		pd->knobs[i].val = (u32 *)((u8 *)pd +
					   percs_isr_knobs[i].offset);
		debugfs_create_file(percs_isr_knobs[i].name, 0644, dir,
				    &pd->knobs[i], &percs_knob_fops);
	}
}

/**
 * percs_debugfs_init() - create /sys/kernel/debug/percs
 * @pd: the system
 *
 * debugfs failures are not fatal: the files are for inspection.
 */
void percs_debugfs_init(struct percs_dev *pd)
{
	struct dentry *isr;

	pd->debugfs = debugfs_create_dir("percs", NULL);
	debugfs_create_file("live", 0444, pd->debugfs, pd, &percs_live_fops);
	debugfs_create_file("routes", 0444, pd->debugfs, pd,
			    &percs_routes_fops);
	isr = debugfs_create_dir("isr", pd->debugfs);
	debugfs_create_file("flight", 0444, isr, pd, &percs_flight_fops);
	percs_debugfs_knobs(pd, isr);
}

/**
 * percs_debugfs_exit() - remove /sys/kernel/debug/percs
 * @pd: the system
 */
void percs_debugfs_exit(struct percs_dev *pd)
{
	debugfs_remove_recursive(pd->debugfs);
	kfree(pd->knobs);
}
