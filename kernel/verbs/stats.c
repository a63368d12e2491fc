// SPDX-License-Identifier: GPL-2.0
/*
 * percs_verbs: counters of the verbs calls each device served.
 *
 * With ABI version 1 every post, poll and notify is a uverbs system call,
 * so these counts are the system calls the data path cost; the benchmark
 * (tools/bench/verbs-vs-rxe.sh) divides them by its iterations.  Shown as
 * the port's hw_counters in sysfs and by "rdma statistic".
 */
#include "verbs.h"

static const struct rdma_stat_desc pv_stat_descs[PV_NR_STATS] = {
	[PV_STAT_POST_SEND] = { .name = "post_send_calls" },
	[PV_STAT_POST_RECV] = { .name = "post_recv_calls" },
	[PV_STAT_POLL_CQ] = { .name = "poll_cq_calls" },
	[PV_STAT_POLL_CQ_EMPTY] = { .name = "poll_cq_empty" },
	[PV_STAT_REQ_NOTIFY] = { .name = "req_notify_calls" },
};

struct rdma_hw_stats *pv_alloc_hw_port_stats(struct ib_device *ibdev,
					     u32 port)
{
	return rdma_alloc_hw_stats_struct(pv_stat_descs, PV_NR_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int pv_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		    u32 port, int index)
{
	struct pv_dev *dev = to_pv_dev(ibdev);
	int i;

	for (i = 0; i < PV_NR_STATS; i++)
		stats->value[i] = atomic64_read(&dev->stats[i]);
	return PV_NR_STATS;
}
