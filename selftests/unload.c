// SPDX-License-Identifier: GPL-2.0
/*
 * unload: rmmod while the network still holds datagrams.
 *
 * With the reorder knob on, the network holds atomic requests and replies
 * back (dgram.c) for up to isr/hold_us (20 ms here, 200 ms on a debug
 * kernel); the flight layer's flush work
 * delivers them later, looking their target windows up in the HFI table.
 * Each round: the knob on, a burst of atomics between two hubs, both
 * windows closed at once (the datagrams stay held: they belong to the
 * network, not to a window), then delete_module() right away, while
 * datagrams are held and the flush work is due within milliseconds; then
 * the module is inserted again ($PERCS_MODULE, default parameters).  The
 * unload must stop the flush work and free the held datagrams before the
 * HFIs go: on a KASAN kernel the runner's oracle finds any use after free
 * in the kernel log, on any kernel a crash or a WARN.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "common.h"

#define ROUNDS		10
/* How long the network holds a datagram at most; 10x on a debug kernel. */
#define HOLD_US		20000

static int load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	uint64_t deadline = pt_now_ms() + 10000;

	/* A window's last references may go a moment after close(). */
	while (syscall(__NR_delete_module, "percs", O_NONBLOCK)) {
		if ((errno != EAGAIN && errno != EBUSY) ||
		    pt_now_ms() >= deadline)
			return -errno;
		usleep(1000);
	}
	return 0;
}

/* Atomics from hub 0 to hub 1 until the window has no room; how many. */
static int burst(void)
{
	struct pt_side a = { 0 }, b = { 0 };
	uint32_t key = pt_new_key();
	int n = 0, ret;

	if (pt_side_open(&a, 0, 0, key, 4096, PERCS_ACCESS_REMOTE_ATOMIC,
			 PT_SIDE_PREFAULT) ||
	    pt_side_open(&b, 1, 0, key, 4096, PERCS_ACCESS_REMOTE_ATOMIC,
			 PT_SIDE_PREFAULT)) {
		n = -1;
		goto out;
	}
	for (;;) {
		ret = percs_amo(a.w, &b.rmr, 8 * (n % 64), PERCS_ATOMIC_ADD, 8,
				1, 0, NULL, 0);
		if (ret)
			break;
		if (++n >= 512)
			break;
	}
	percs_kick(a.w, PERCS_KICK_F_SEND);
out:
	/* Closed with the datagrams in the network; the job too (its fd
	 * holds the module, as a window's does). */
	pt_side_close(&a);
	pt_side_close(&b);
	pt_jobs_close();
	return n;
}

TEST(unload_with_held_datagrams)
{
	const char *ko = getenv("PERCS_MODULE");
	long held, max_held = 0;
	int round, rounds = pt_scale(ROUNDS) < 3 ? 3 : pt_scale(ROUNDS);
	/* A debug kernel (PERCS_TEST_SCALE < 1) closes windows 20x slower. */
	unsigned long hold_us = pt_scale(100) < 100 ? 10 * HOLD_US : HOLD_US;
	int sent;

	PT_REQUIRE_DEVICE();
	if (geteuid() != 0)
		SKIP(return, "needs root to unload the module");
	if (!ko || access(ko, R_OK))
		SKIP(return, "PERCS_MODULE does not name percs.ko");

	for (round = 0; round < rounds; round++) {
		ASSERT_EQ(0, pt_isr_set("reorder_ppm", 1000000));
		ASSERT_EQ(0, pt_isr_set("hold_us", hold_us));
		sent = burst();
		ASSERT_LT(0, sent);
		held = pt_live_field("packets_in_flight");
		if (held > max_held)
			max_held = held;
		ASSERT_EQ(0, unload());
		ASSERT_EQ(0, load(ko));
	}
	TH_LOG("%d rounds; up to %ld datagrams held at an unload", rounds,
	       max_held);
	/* The condition was there: something was held at an unload. */
	EXPECT_LT(0, max_held);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
