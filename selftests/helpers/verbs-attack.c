// SPDX-License-Identifier: GPL-2.0
/*
 * verbs-attack: a native window tries to reach the windows of verbs QPs
 * (selftests/verbs.sh runs it while a verbs QP exists on the HFI).
 *
 *   verbs-attack HUB UNIT
 *
 * Finds the kernel windows of the HFI (PERCS_WINDOW_F_KERNEL in
 * PERCS_IOC_WINDOW_QUERY; run as root, which sees every window), then
 * checks that their job is not the native window's (the verbs job has no
 * fd: no reservation can name it) and that a FIFO packet from a native
 * window to each completes with -EACCES while the window's received
 * count does not move.  Prints one line per check, "ok ..." or
 * "FAIL ...", and exits 0 when all held, 1 when one did not, 2 when the
 * HFI has no kernel window.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/percs.h>
#include "percs.h"

static int failures;

static void check(int cond, const char *what, long got)
{
	printf("%s %s (%ld)\n", cond ? "ok" : "FAIL", what, got);
	if (!cond)
		failures++;
}

static int query(int hfd, unsigned int idx, struct percs_window_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->window = idx;
	return ioctl(hfd, PERCS_IOC_WINDOW_QUERY, q);
}

int main(int argc, char **argv)
{
	struct percs_window_attr attr = { .window = PERCS_WINDOW_ANY };
	struct percs_window_query q, after;
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned int hub, unit, idx, found = 0;
	struct percs_window *native;
	uint32_t native_key = 0;
	struct percs_hfi *hfi;
	struct percs_cqe cqe;
	int ret, n, tries;

	if (argc != 3)
		return fprintf(stderr, "usage: verbs-attack HUB UNIT\n"), 2;
	hub = strtoul(argv[1], NULL, 0);
	unit = strtoul(argv[2], NULL, 0);
	ret = percs_hfi_open(hub, unit, &hfi);
	if (ret)
		return fprintf(stderr, "open HFI: %s\n", strerror(-ret)), 2;
	ret = percs_hfi_info(hfi, &info);
	if (!ret)
		ret = percs_window_reserve(hfi, &attr, &native);
	if (!ret)
		ret = percs_job_key(percs_job_default(hfi), &native_key);
	if (ret) {
		fprintf(stderr, "HFI info, reserve or job: %s\n",
			strerror(-ret));
		percs_hfi_close(hfi);
		return 2;
	}

	for (idx = 0; idx < info.windows_total; idx++) {
		struct percs_addr dst = { .hub = hub, .hfi = unit,
					  .window = idx };

		if (query(percs_hfi_fd(hfi), idx, &q) ||
		    !(q.wflags & PERCS_WINDOW_F_KERNEL))
			continue;
		found++;
		check(q.job_key && q.job_key != native_key,
		      "the verbs QP window is in a job of its own", q.job_key);

		ret = percs_send(native, &dst, "attack", 6, idx,
				 PERCS_PKT_F_NOTIFY);
		n = 0;
		for (tries = 0; ret == 0 && n == 0 && tries < 1000; tries++) {
			percs_kick(native, PERCS_KICK_F_ALL);
			n = percs_cq_poll(native, &cqe, 1);
		}
		check(ret == 0 && n == 1 && cqe.res == -EACCES,
		      "FIFO packet to a verbs QP window completes with -EACCES",
		      n == 1 ? cqe.res : ret);
		query(percs_hfi_fd(hfi), idx, &after);
		check(after.packets_received == q.packets_received,
		      "the verbs QP window received nothing",
		      (long)(after.packets_received - q.packets_received));
	}
	percs_window_release(native);
	percs_hfi_close(hfi);
	if (!found) {
		printf("FAIL no kernel window on hub %u HFI %u\n", hub, unit);
		return 2;
	}
	return failures ? 1 : 0;
}
