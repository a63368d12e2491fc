// SPDX-License-Identifier: GPL-2.0
/*
 * percs: debugfs - live object counters (tests check they return to zero)
 * and per-HFI packet counts by route class.
 *
 * /sys/kernel/debug/percs/live:   "name value" lines
 * /sys/kernel/debug/percs/routes: one line per HFI
 * /sys/kernel/debug/percs/isr/:   the network's fault knobs (reorder_ppm,
 *	reorder_depth, hold_us; a value out of range is refused with
 *	-EINVAL) and "flight", its counters; "topology"; "links", one line
 *	per link with its state and counters; "link_down" and "link_up"
 *	take a link id, "link_error" takes "ID PPM" or "all PPM";
 *	"route_cost" times the route look-up of every mode when read
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "net.h"

static int percs_live_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	unsigned int blocked = 0, i, in_use = 0;
	u64 issued, completed, outstanding;
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
	seq_printf(m, "jobs %u\n", percs_job_count(pd));
	seq_printf(m, "packets_in_flight %d\n", atomic_read(&pd->flight.live) +
		   atomic_read(&pd->dgram.nr_held));
	percs_amo_counts(pd, &issued, &completed, &outstanding);
	seq_printf(m, "atomics_outstanding %lld\n", (s64)outstanding);
	seq_printf(m, "cau_trees %u\n", percs_cau_count(pd));
	seq_printf(m, "quota_users %u\n", percs_quota_users(pd));
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
	seq_printf(m, "datagrams_held %d\n", atomic_read(&pd->dgram.nr_held));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_flight);

/* The delivery table: each kind's handler and the packets it refused. */
static int percs_net_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	static const char * const kinds[PERCS_NET_NR_KINDS] = {
		[PERCS_NET_FIFO] = "fifo",
		[PERCS_NET_RDMA_SEG] = "rdma_seg",
		[PERCS_NET_AMO_REQ] = "amo_req",
		[PERCS_NET_AMO_REPLY] = "amo_reply",
	};
	unsigned int k;

	seq_puts(m, "kind handler refused\n");
	for (k = 0; k < PERCS_NET_NR_KINDS; k++)
		seq_printf(m, "%s %s %lld\n", kinds[k],
			   READ_ONCE(pd->net.handlers[k])->name,
			   atomic64_read(&pd->net.refused[k]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_net);

static int percs_cau_file_show(struct seq_file *m, void *unused)
{
	percs_cau_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_cau_file);

/* The atomics' counters and what the lossy stage did to their packets. */
static int percs_atomic_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	struct percs_amo_stats *a = &pd->amo;
	u64 issued, completed, outstanding;

	percs_amo_counts(pd, &issued, &completed, &outstanding);
	seq_printf(m, "issued %llu\n", issued);
	seq_printf(m, "completed %llu\n", completed);
	seq_printf(m, "retransmits %lld\n", atomic64_read(&a->retransmits));
	seq_printf(m, "duplicates %lld\n", atomic64_read(&a->duplicates));
	seq_printf(m, "stale %lld\n", atomic64_read(&a->stale));
	seq_printf(m, "dropped %lld\n", atomic64_read(&pd->dgram.dropped));
	seq_printf(m, "duplicated %lld\n",
		   atomic64_read(&pd->dgram.duplicated));
	seq_printf(m, "delayed %lld\n", atomic64_read(&pd->dgram.delayed));
	seq_printf(m, "timeouts %lld\n", atomic64_read(&a->timeouts));
	seq_printf(m, "outstanding %lld\n", (s64)outstanding);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_atomic);

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
	  0, PERCS_PPM_MAX },
	{ "reorder_depth", offsetof(struct percs_dev, flight.reorder_depth),
	  1, PERCS_FLIGHT_MAX_DEPTH },
	{ "hold_us", offsetof(struct percs_dev, flight.hold_us),
	  1, PERCS_FLIGHT_MAX_HOLD_US },
	{ "drop_ppm", offsetof(struct percs_dev, dgram.drop_ppm),
	  0, PERCS_DGRAM_MAX_PPM },
	{ "dup_ppm", offsetof(struct percs_dev, dgram.dup_ppm),
	  0, PERCS_DGRAM_MAX_PPM },
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

static int percs_topology_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	char spec[FM_SPEC_MAX_LEN + 1];

	if (fm_topo_format(&pd->topo, spec, sizeof(spec)) < 0)
		strscpy(spec, "?", sizeof(spec));
	seq_printf(m, "spec %s\n", spec);
	seq_printf(m, "supernodes %u\n", pd->topo.nr_supernodes);
	seq_printf(m, "hubs_per_supernode %u\n", pd->topo.hubs_per_sn);
	seq_printf(m, "hubs %u\n", pd->topo.nr_hubs);
	seq_printf(m, "links %u\n", pd->topo.nr_links);
	seq_printf(m, "d_links_per_pair %u\n", pd->topo.d_links_per_pair);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_topology);

static int percs_links_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;
	struct percs_link_stats st;
	struct fm_link_info li;
	u32 id;

	seq_puts(m, "id class hub_a hub_b port_a port_b state error_ppm packets flits flits_vc0 flits_vc1 flits_vc2 replays drops\n");
	for (id = 0; id < pd->topo.nr_links; id++) {
		u64 vc[FM_L_VCS];
		unsigned int v;

		if (fm_link_info(&pd->topo, id, &li))
			continue;
		percs_isr_link_stats(pd, id, &st);
		for (v = 0; v < FM_L_VCS; v++)
			vc[v] = st.dir[0].flits[v] + st.dir[1].flits[v];
		seq_printf(m, "%u %s %u %u %u %u %s %u %llu %llu %llu %llu %llu %llu %llu\n",
			   id, fm_link_class_name(li.link_class), li.hub[0],
			   li.hub[1], li.port[0], li.port[1],
			   fm_link_is_up(&pd->topo, id) ? "up" : "down",
			   READ_ONCE(pd->isr.error_ppm[id]),
			   st.dir[0].packets + st.dir[1].packets,
			   vc[0] + vc[1] + vc[2], vc[0], vc[1], vc[2],
			   st.dir[0].replays + st.dir[1].replays,
			   st.dir[0].drops + st.dir[1].drops);
		cond_resched();
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(percs_links);

/* Copy a short command written to a debugfs file into @buf. */
static int percs_debugfs_command(const char __user *ubuf, size_t len,
				 char *buf, size_t size)
{
	if (!len || len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	return 0;
}

static ssize_t percs_link_state_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      bool up)
{
	struct percs_dev *pd = file_inode(file)->i_private;
	char buf[24];
	u32 id;
	int ret;

	ret = percs_debugfs_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = kstrtou32(buf, 10, &id);
	if (!ret)
		ret = percs_isr_set_link(pd, id, up);
	return ret ? ret : len;
}

static ssize_t percs_link_down_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	return percs_link_state_write(file, ubuf, len, false);
}

static ssize_t percs_link_up_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	return percs_link_state_write(file, ubuf, len, true);
}

/* "ID PPM" or "all PPM" */
static ssize_t percs_link_error_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	struct percs_dev *pd = file_inode(file)->i_private;
	char buf[48], *rate;
	u32 id, ppm;
	int ret;

	ret = percs_debugfs_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	rate = strchr(buf, ' ');
	if (!rate)
		return -EINVAL;
	*rate++ = '\0';
	ret = kstrtou32(skip_spaces(rate), 10, &ppm);
	if (ret)
		return ret;
	if (!strcmp(buf, "all"))
		id = PERCS_ISR_ALL_LINKS;
	else if (kstrtou32(buf, 10, &id) || id == PERCS_ISR_ALL_LINKS)
		return -EINVAL;
	ret = percs_isr_set_error_ppm(pd, id, ppm);
	return ret ? ret : len;
}

static const struct file_operations percs_link_down_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = percs_link_down_write,
	.llseek = no_llseek,
};

static const struct file_operations percs_link_up_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = percs_link_up_write,
	.llseek = no_llseek,
};

static const struct file_operations percs_link_error_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = percs_link_error_write,
	.llseek = no_llseek,
};

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
	debugfs_create_file("atomic", 0444, pd->debugfs, pd,
			    &percs_atomic_fops);
	debugfs_create_file("cau", 0444, pd->debugfs, pd,
			    &percs_cau_file_fops);
	isr = debugfs_create_dir("isr", pd->debugfs);
	debugfs_create_file("flight", 0444, isr, pd, &percs_flight_fops);
	debugfs_create_file("net", 0444, isr, pd, &percs_net_fops);
	percs_debugfs_knobs(pd, isr);
	debugfs_create_file("topology", 0444, isr, pd, &percs_topology_fops);
	debugfs_create_file("links", 0444, isr, pd, &percs_links_fops);
	percs_test_debugfs_init(pd, isr);
	debugfs_create_file("link_down", 0200, isr, pd, &percs_link_down_fops);
	debugfs_create_file("link_up", 0200, isr, pd, &percs_link_up_fops);
	debugfs_create_file("link_error", 0200, isr, pd,
			    &percs_link_error_fops);
}

static int percs_poll_park_show(struct seq_file *m, void *unused)
{
	struct percs_dev *pd = m->private;

	seq_printf(m, "%u\n", READ_ONCE(pd->poll_park));
	return 0;
}

static int percs_poll_park_open(struct inode *inode, struct file *file)
{
	return single_open(file, percs_poll_park_show, inode->i_private);
}

/* 1 parks every HFI's polling thread, 0 lets them run; nothing else. */
static ssize_t percs_poll_park_write(struct file *file,
				     const char __user *buf, size_t len,
				     loff_t *ppos)
{
	struct percs_dev *pd = ((struct seq_file *)file->private_data)->private;
	u32 v;
	int ret;

	ret = kstrtou32_from_user(buf, len, 0, &v);
	if (ret)
		return ret;
	if (v > 1)
		return -EINVAL;
	ret = percs_poll_park_set(pd, v);
	return ret ? ret : len;
}

static const struct file_operations percs_poll_park_fops = {
	.owner = THIS_MODULE,
	.open = percs_poll_park_open,
	.read = seq_read,
	.write = percs_poll_park_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * percs_debugfs_hfi_init() - the files that need the HFIs: poll_park
 * @pd: the system, its HFIs created
 */
void percs_debugfs_hfi_init(struct percs_dev *pd)
{
	debugfs_create_file("poll_park", 0644, pd->debugfs, pd,
			    &percs_poll_park_fops);
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
