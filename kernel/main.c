// SPDX-License-Identifier: GPL-2.0
/*
 * percs: emulated IBM PERCS Hub chips - module entry points and parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "nmmu.h"
#include "net.h"

static unsigned int supernodes = PERCS_DEF_SUPERNODES;
module_param(supernodes, uint, 0444);
MODULE_PARM_DESC(supernodes, "Supernodes in the emulated system (default 2)");

static unsigned int hubs_per_supernode = PERCS_DEF_HUBS_PER_SN;
module_param(hubs_per_supernode, uint, 0444);
MODULE_PARM_DESC(hubs_per_supernode, "Hubs per supernode, 1..32 (default 4)");

static char *topology;
module_param(topology, charp, 0444);
MODULE_PARM_DESC(topology,
		 "Topology spec, e.g. 2x4, 3x8,dpair=2 or d1 (instead of supernodes and hubs_per_supernode)");

static unsigned int windows_per_hfi = PERCS_DEF_WINDOWS;
module_param(windows_per_hfi, uint, 0444);
MODULE_PARM_DESC(windows_per_hfi, "Windows of each HFI, 1..4096 (default 256)");

static unsigned int cau_trees = PERCS_DEF_CAU_TREES;
module_param(cau_trees, uint, 0444);
MODULE_PARM_DESC(cau_trees, "Tree entries of each hub's CAU, 1..4096 (default 64)");

unsigned int percs_poll_idle_us = PERCS_DEF_POLL_IDLE_US;
module_param_named(poll_idle_us, percs_poll_idle_us, uint, 0644);
MODULE_PARM_DESC(poll_idle_us,
		 "Idle time before a polling engine sleeps, microseconds");

static struct percs_dev *percs;

/*
 * The topology comes from topology= or, as before it existed, from
 * supernodes= and hubs_per_supernode= (whose messages name them).
 */
static int __init percs_topology(struct percs_dev *pd)
{
	char spec[32], err[160];

	if (topology) {
		if (supernodes != PERCS_DEF_SUPERNODES ||
		    hubs_per_supernode != PERCS_DEF_HUBS_PER_SN) {
			pr_err("topology=%s: give a topology spec or supernodes= and hubs_per_supernode=, not both\n",
			       topology);
			return -EINVAL;
		}
		return percs_isr_init(pd, topology);
	}
	if (fm_topo_init(&pd->topo, supernodes, hubs_per_supernode, err,
			 sizeof(err))) {
		pr_err("bad topology: %s\n", err);
		return -EINVAL;
	}
	snprintf(spec, sizeof(spec), "%ux%u", supernodes, hubs_per_supernode);
	return percs_isr_init(pd, spec);
}

static int __init percs_init(void)
{
	int ret;

	if (!windows_per_hfi || windows_per_hfi > PERCS_MAX_WINDOWS) {
		pr_err("windows_per_hfi=%u: must be 1..%u\n", windows_per_hfi,
		       PERCS_MAX_WINDOWS);
		return -EINVAL;
	}
	if (!cau_trees || cau_trees > PERCS_MAX_CAU_TREES) {
		pr_err("cau_trees=%u: must be 1..%u\n", cau_trees,
		       PERCS_MAX_CAU_TREES);
		return -EINVAL;
	}

	percs = kzalloc(sizeof(*percs), GFP_KERNEL);
	if (!percs)
		return -ENOMEM;

	ret = percs_topology(percs);
	if (ret)
		goto out_free;
	percs->windows_per_hfi = windows_per_hfi;
	percs->nr_hfis = percs->topo.nr_hubs * PERCS_HFIS_PER_HUB;
	spin_lock_init(&percs->blocked_lock);
	mutex_init(&percs->poll_park_lock);
	INIT_LIST_HEAD(&percs->blocked);
	percs_job_init(percs);
	percs_quota_init(percs);

	percs_flight_init(percs);
	percs_dgram_init(percs);
	percs_net_register(percs, PERCS_NET_FIFO, &percs_fifo_net_handler);
	percs_net_register(percs, PERCS_NET_RDMA_SEG, &percs_rdma_net_handler);
	percs_net_register(percs, PERCS_NET_AMO_REQ, &percs_amo_req_net_handler);
	percs_net_register(percs, PERCS_NET_AMO_REPLY,
			   &percs_amo_reply_net_handler);
	percs_debugfs_init(percs);
	ret = percs_clock_init(percs);
	if (ret)
		goto out_debugfs;
	ret = percs_nmmu_init(percs);
	if (ret)
		goto out_clock;
	ret = percs_cau_init(percs, cau_trees);
	if (ret)
		goto out_cau;
	ret = percs_hfi_init_all(percs);
	if (ret)
		goto out_cau;
	percs_debugfs_hfi_init(percs);

	percs_kapi_init(percs);
	pr_info("%u supernodes x %u hubs, %u links, %u HFIs, %u windows each\n",
		percs->topo.nr_supernodes, percs->topo.hubs_per_sn,
		percs->topo.nr_links, percs->nr_hfis, percs->windows_per_hfi);
	return 0;

out_cau:
	percs_cau_exit(percs);
	percs_nmmu_exit(percs);
out_clock:
	percs_clock_exit(percs);
out_debugfs:
	percs_debugfs_exit(percs);
	percs_job_exit(percs);
	percs_isr_exit(percs);
out_free:
	kfree(percs);
	return ret;
}

/*
 * Every window is gone (each window file holds a module reference), but
 * the network may still hold datagrams, which the flight layer's flush
 * work delivers by looking their windows up in the HFI table.  So the work
 * is stopped and what it would deliver freed first, then the clock and
 * debugfs (whose files read the HFIs), and only then the HFIs.
 */
static void __exit percs_exit(void)
{
	u64 issued, completed, outstanding;

	percs_kapi_exit();
	percs_rdma_exit(percs);
	percs_amo_counts(percs, &issued, &completed, &outstanding);
	WARN_ON(outstanding);
	percs_flight_exit(percs);
	percs_dgram_exit(percs);
	/* Removes its own debugfs files: before the directory goes. */
	percs_clock_exit(percs);
	percs_debugfs_exit(percs);
	percs_hfi_exit_all(percs);
	percs_cau_exit(percs);
	/* After the windows: a last transfer may have deferred a release. */
	percs_nmmu_exit(percs);
	percs_job_exit(percs);
	percs_isr_exit(percs);
	WARN_ON(atomic_read(&percs->live_windows));
	WARN_ON(percs_quota_users(percs));
	/* Windows are freed after an RCU grace period. */
	rcu_barrier();
	kfree(percs);
}

module_init(percs_init);
module_exit(percs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Emulated IBM PERCS Hub chip network interface");
MODULE_AUTHOR("percs developers");
