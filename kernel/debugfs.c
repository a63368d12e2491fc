// SPDX-License-Identifier: GPL-2.0
/*
 * percs: debugfs - live object counters (tests check they return to zero)
 * and per-HFI packet counts by route class.
 *
 * /sys/kernel/debug/percs/live:   "name value" lines
 * /sys/kernel/debug/percs/routes: one line per HFI
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

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
	seq_printf(m, "blocked_senders %u\n", blocked);
	seq_printf(m, "job_keys %u\n", percs_jobkey_count(pd));
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

/**
 * percs_debugfs_init() - create /sys/kernel/debug/percs
 * @pd: the system
 *
 * debugfs failures are not fatal: the files are for inspection.
 */
void percs_debugfs_init(struct percs_dev *pd)
{
	pd->debugfs = debugfs_create_dir("percs", NULL);
	debugfs_create_file("live", 0444, pd->debugfs, pd, &percs_live_fops);
	debugfs_create_file("routes", 0444, pd->debugfs, pd,
			    &percs_routes_fops);
}

/**
 * percs_debugfs_exit() - remove /sys/kernel/debug/percs
 * @pd: the system
 */
void percs_debugfs_exit(struct percs_dev *pd)
{
	debugfs_remove_recursive(pd->debugfs);
}
