// SPDX-License-Identifier: GPL-2.0
/*
 * reserve: HFI_INFO, window reservation, lifetime and WINDOW_QUERY.
 *
 * Every behaviour is one TEST; errnos are the ones Documentation/design.rst
 * and include/uapi/linux/percs.h give.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K PERCS_FIFO_MIN_SIZE

/* The 6.1 harness has TEST_F_TIMEOUT only: an empty fixture for it. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

static int hfi_info(int fd, struct percs_hfi_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, PERCS_IOC_HFI_INFO, info) ? -errno : 0;
}

static int window_query(int fd, uint32_t window, struct percs_window_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->window = window;
	return ioctl(fd, PERCS_IOC_WINDOW_QUERY, q) ? -errno : 0;
}

static long module_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/percs/parameters/%s", name);
	return pt_sysfs_read_long(path);
}

/* HFI_INFO describes each HFI and the system, as sysfs and the params do. */
TEST(hfi_info_fields)
{
	struct percs_hfi_info info0, info;
	unsigned int hubs[4], i;
	int fd;

	PT_REQUIRE_DEVICE();
	fd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hfi_info(fd, &info0));
	close(fd);
	ASSERT_EQ(module_param("supernodes"), info0.nr_supernodes);
	ASSERT_EQ(module_param("hubs_per_supernode"), info0.hubs_per_supernode);
	ASSERT_EQ(module_param("windows_per_hfi"), info0.windows_total);
	ASSERT_EQ(info0.nr_supernodes * info0.hubs_per_supernode,
		  info0.nr_hubs);

	hubs[0] = 0;
	hubs[1] = 1 % info0.nr_hubs;
	hubs[2] = info0.hubs_per_supernode % info0.nr_hubs; /* next SN */
	hubs[3] = info0.nr_hubs - 1;
	for (i = 0; i < 8; i++) {
		unsigned int hub = hubs[i / 2], unit = i % 2;

		fd = pt_hfi_open_fd(hub, unit);
		ASSERT_LE(0, fd) TH_LOG("hub %u unit %u", hub, unit);
		ASSERT_EQ(0, hfi_info(fd, &info));
		close(fd);
		EXPECT_EQ(sizeof(info), info.size);
		EXPECT_EQ(0, info.flags);
		EXPECT_EQ(hub, info.hub);
		EXPECT_EQ(hub / info0.hubs_per_supernode, info.supernode);
		EXPECT_EQ(unit, info.unit);
		EXPECT_EQ(info0.windows_total, info.windows_total);
		EXPECT_EQ(0, info.windows_in_use);
		EXPECT_EQ(info0.nr_supernodes, info.nr_supernodes);
		EXPECT_EQ(info0.hubs_per_supernode, info.hubs_per_supernode);
		EXPECT_EQ(info0.nr_hubs, info.nr_hubs);
		EXPECT_EQ(2, info.hfis_per_hub);
		EXPECT_EQ(PERCS_MAX_PACKET, info.max_packet);
		EXPECT_EQ(PERCS_FLIT_SIZE, info.flit_size);
		EXPECT_EQ(0, info.reserved);
		/* sysfs agrees */
		EXPECT_EQ(hub, pt_sysfs_hfi_attr(hub, unit, "hub"));
		EXPECT_EQ(unit, pt_sysfs_hfi_attr(hub, unit, "unit"));
		EXPECT_EQ(info.supernode,
			  pt_sysfs_hfi_attr(hub, unit, "supernode"));
		EXPECT_EQ(info.windows_total,
			  pt_sysfs_hfi_attr(hub, unit, "windows_total"));
	}
	/* No HFI past the last hub. */
	EXPECT_EQ(-ENOENT, pt_hfi_open_fd(info0.nr_hubs, 0));
}

/* libpercs opens the same HFI and reports the same info. */
TEST(hfi_info_libpercs)
{
	struct percs_hfi_info info;
	struct percs_hfi *hfi;

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(0, 1, &hfi));
	ASSERT_EQ(0, percs_hfi_info(hfi, &info));
	EXPECT_EQ(0, info.hub);
	EXPECT_EQ(1, info.unit);
	EXPECT_EQ(PERCS_FLIT_SIZE, info.flit_size);
	percs_hfi_close(hfi);
}

/* The reserve answer: fd, index, address, slot counts and region layout. */
TEST(reserve_answer)
{
	struct percs_window_reserve req;
	static const uint32_t fixed_len[PERCS_REGION_MAX] = {
		[PERCS_REGION_DOORBELL] = 4096,
		[PERCS_REGION_STATUS] = 4096,
		[PERCS_REGION_IMM] = PERCS_IMM_SLOTS * PERCS_FLIT_SIZE,
		[PERCS_REGION_CQ] = PERCS_CQ_ENTRIES * sizeof(struct percs_cqe),
		[PERCS_REGION_CLOCK] = 4096,
	};
	int hfd, wfd, r;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(1, 1);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, 8192, 16384, pt_new_key(),
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ((uint32_t)wfd, req.fd);
	EXPECT_EQ(0, req.window);	/* the first free index */
	EXPECT_EQ(1, req.addr.hub);
	EXPECT_EQ(1, req.addr.hfi);
	EXPECT_EQ(0, req.addr.reserved);
	EXPECT_EQ(req.window, req.addr.window);
	EXPECT_EQ(PERCS_IMM_SLOTS, req.imm_slots);
	EXPECT_EQ(PERCS_CQ_ENTRIES, req.cq_entries);
	EXPECT_EQ(8192, req.regions[PERCS_REGION_SEND_FIFO].length);
	EXPECT_EQ(16384, req.regions[PERCS_REGION_RECV_FIFO].length);
	for (r = 0; r < PERCS_REGION_MAX; r++) {
		const struct percs_region *reg = &req.regions[r];
		bool writable = r == PERCS_REGION_SEND_FIFO ||
				r == PERCS_REGION_DOORBELL ||
				r == PERCS_REGION_IMM;

		if (r > PERCS_REGION_CLOCK) {
			EXPECT_EQ(0, reg->flags);
			EXPECT_EQ(0, reg->length);
			continue;
		}
		EXPECT_TRUE(reg->flags & PERCS_REGION_F_VALID);
		EXPECT_EQ(writable, !!(reg->flags & PERCS_REGION_F_WRITABLE));
		EXPECT_EQ(0, reg->length % 4096);
		EXPECT_EQ(0, reg->offset % 4096);
		if (fixed_len[r]) {
			EXPECT_LE(fixed_len[r], reg->length);
		}
	}
	close(wfd);
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/*
 * Every window of an HFI can be reserved; one more fails with ENOSPC;
 * windows_in_use (sysfs and HFI_INFO) follows.
 */
TEST_F_TIMEOUT(slow, reserve_all_then_enospc, 120)
{
	struct percs_window_reserve req;
	struct percs_hfi_info info;
	uint32_t key = pt_new_key();
	struct rlimit rl;
	unsigned int i, total;
	int hfd, *fds;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, hfi_info(hfd, &info));
	total = info.windows_total;
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < total + 64) {
		rl.rlim_cur = total + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	fds = calloc(total, sizeof(*fds));
	ASSERT_NE(NULL, fds);

	for (i = 0; i < total; i++) {
		fds[i] = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key,
					PERCS_WINDOW_ANY, &req);
		ASSERT_LE(0, fds[i]) TH_LOG("window %u: %s", i,
					    strerror(-fds[i]));
		ASSERT_EQ(i, req.window);
	}
	EXPECT_EQ(total, pt_sysfs_windows_in_use(0, 0));
	ASSERT_EQ(0, hfi_info(hfd, &info));
	EXPECT_EQ(total, info.windows_in_use);
	/* The other unit of the hub is unaffected. */
	EXPECT_EQ(0, pt_sysfs_windows_in_use(0, 1));

	EXPECT_EQ(-ENOSPC, pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key,
					  PERCS_WINDOW_ANY, &req));
	EXPECT_EQ(-ENOSPC, pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K,
					  pt_new_key(), PERCS_WINDOW_ANY,
					  &req));
	/* Nothing leaked by the failures. */
	EXPECT_EQ(total, pt_sysfs_windows_in_use(0, 0));

	/* Free one in the middle: exactly that one is handed out next. */
	close(fds[total / 2]);
	EXPECT_EQ(total - 1, pt_sysfs_windows_in_use(0, 0));
	fds[total / 2] = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key,
					PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, fds[total / 2]);
	EXPECT_EQ(total / 2, req.window);

	for (i = 0; i < total; i++)
		close(fds[i]);
	free(fds);
	EXPECT_EQ(0, pt_sysfs_windows_in_use(0, 0));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* A named window that is taken gives EBUSY, whatever the key. */
TEST(named_window_busy)
{
	struct percs_window_reserve req;
	uint32_t key = pt_new_key();
	int hfd, wfd, h2, w2;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, 7, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(7, req.window);
	EXPECT_EQ(7, req.addr.window);
	EXPECT_EQ(-EBUSY, pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, 7,
					 &req));
	EXPECT_EQ(-EBUSY, pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K,
					 pt_new_key(), 7, &req));
	EXPECT_EQ(-EBUSY, pt_reserve_raw(hfd, PERCS_WINDOW_F_POLL, FIFO_4K,
					 FIFO_4K, key, 7, &req));
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 1));
	/* The same index on the other HFI of the hub is free. */
	h2 = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, h2);
	w2 = pt_reserve_raw(h2, 0, FIFO_4K, FIFO_4K, key, 7, &req);
	EXPECT_LE(0, w2);
	close(w2);
	close(h2);
	close(wfd);
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* Closing a window frees it: it can be reserved again, sysfs follows. */
TEST(close_frees_window)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	int hfd, wfd;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(1, 0);
	ASSERT_LE(0, hfd);
	EXPECT_EQ(0, pt_sysfs_windows_in_use(1, 0));
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(), 3, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(1, 0));
	EXPECT_EQ(0, window_query(hfd, 3, &q));
	close(wfd);
	EXPECT_EQ(0, pt_sysfs_windows_in_use(1, 0));
	EXPECT_EQ(-ENOENT, window_query(hfd, 3, &q));

	/* Re-reserve the same index, with another key and poll mode. */
	wfd = pt_reserve_raw(hfd, PERCS_WINDOW_F_POLL, FIFO_4K, FIFO_4K,
			     pt_new_key(), 3, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(3, req.window);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(1, 0));
	close(wfd);
	EXPECT_EQ(0, pt_sysfs_windows_in_use(1, 0));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* The HFI fd is not needed once the window is reserved. */
TEST(window_outlives_hfi_fd)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	int hfd, wfd;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(1, 1);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(), 5, &req);
	ASSERT_LE(0, wfd);
	close(hfd);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(1, 1));
	hfd = pt_hfi_open_fd(1, 1);
	ASSERT_LE(0, hfd);
	EXPECT_EQ(0, window_query(hfd, 5, &q));
	close(wfd);
	EXPECT_EQ(-ENOENT, window_query(hfd, 5, &q));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* 10,000 reserve/mmap/close cycles leave nothing behind. */
TEST_F_TIMEOUT(slow, reserve_mmap_close_cycles, 300)
{
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint32_t key = pt_new_key();
	struct pt_live live;
	int i;

	PT_REQUIRE_DEVICE();
	ASSERT_EQ(0, pt_hfi_open(0, 0, &hfi));
	for (i = 0; i < (int)pt_scale(10000); i++) {
		int ret = pt_reserve(hfi, i % 7 == 6 ? PERCS_WINDOW_F_POLL : 0,
				     FIFO_4K, FIFO_4K, key, PERCS_WINDOW_ANY,
				     &w);

		ASSERT_EQ(0, ret) TH_LOG("cycle %d: %s", i, strerror(-ret));
		/* touch the mappings */
		ASSERT_EQ(0, percs_window_status(w)->send_head);
		if (i % 1000 == 0) {
			ASSERT_EQ(0, pt_read_live(&live));
			EXPECT_EQ(1, live.windows);
			EXPECT_EQ(1, live.windows_reserved);
			EXPECT_EQ(PERCS_REGION_CLOCK + 1, live.mappings);
			EXPECT_EQ(1, live.jobs);
		}
		percs_window_release(w);
	}
	percs_hfi_close(hfi);
	EXPECT_EQ(0, pt_sysfs_windows_in_use(0, 0));
	ASSERT_LIVE_ZERO();
}

/* The window fd is O_CLOEXEC: it does not survive exec. */
TEST(window_fd_cloexec)
{
	struct percs_window_reserve req;
	int hfd, wfd, status;
	char cmd[64];
	pid_t pid;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(),
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(wfd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(wfd, F_GETFL) & O_ACCMODE);

	/* exit 0 if fd wfd is closed in the exec'ed shell */
	snprintf(cmd, sizeof(cmd), "[ ! -e /proc/$$/fd/%d ]", wfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(wfd);
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* A mapping keeps the window reserved after close(fd), until munmap. */
TEST(mapping_keeps_window)
{
	struct percs_region st;
	struct percs_window_reserve req;
	struct percs_window_query q;
	struct pt_live live;
	uint32_t key = pt_new_key();
	int hfd, wfd;
	void *map;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, 11, &req);
	ASSERT_LE(0, wfd);
	st = req.regions[PERCS_REGION_STATUS];
	map = mmap(NULL, st.length, PROT_READ, MAP_SHARED, wfd,
		   (off_t)st.offset);
	ASSERT_NE(MAP_FAILED, map);
	close(wfd);

	EXPECT_EQ(0, window_query(hfd, 11, &q));
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, q.state);
	EXPECT_EQ(key, q.job_key);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 1));
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.windows);
	EXPECT_EQ(1, live.mappings);
	/* The index stays taken. */
	EXPECT_EQ(-EBUSY, pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, key, 11,
					 &req));
	/* The status page is still readable. */
	EXPECT_EQ(0, ((const volatile struct percs_status *)map)->send_head);

	ASSERT_EQ(0, munmap(map, st.length));
	EXPECT_EQ(-ENOENT, window_query(hfd, 11, &q));
	EXPECT_EQ(0, pt_sysfs_windows_in_use(0, 1));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* A duplicated fd keeps the window too (the file, not the fd, owns it). */
TEST(dup_keeps_window)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	int hfd, wfd, dfd;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(), 2, &req);
	ASSERT_LE(0, wfd);
	dfd = dup(wfd);
	ASSERT_LE(0, dfd);
	close(wfd);
	EXPECT_EQ(0, window_query(hfd, 2, &q));
	close(dfd);
	EXPECT_EQ(-ENOENT, window_query(hfd, 2, &q));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* WINDOW_QUERY: key, pid, uid, flags and sizes of a reserved window. */
TEST(window_query_active)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	uint32_t key = pt_new_key();
	int hfd, wfd, pfd;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(1, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, 8192, 65536, key, 20, &req);
	ASSERT_LE(0, wfd);
	pfd = pt_reserve_raw(hfd, PERCS_WINDOW_F_POLL, FIFO_4K, 4u << 20, key,
			     21, &req);
	ASSERT_LE(0, pfd);

	ASSERT_EQ(0, window_query(hfd, 20, &q));
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_EQ(0, q.flags);
	EXPECT_EQ(20, q.window);
	EXPECT_EQ(PERCS_WSTATE_ACTIVE, q.state);
	EXPECT_EQ(key, q.job_key);
	EXPECT_EQ((uint32_t)getpid(), q.pid);
	EXPECT_EQ(geteuid(), q.uid);
	EXPECT_EQ(0, q.wflags);
	EXPECT_EQ(8192, q.send_fifo_size);
	EXPECT_EQ(65536, q.recv_fifo_size);
	EXPECT_EQ(0, q.packets_sent);
	EXPECT_EQ(0, q.packets_received);
	EXPECT_EQ(0, q.send_errors);
	EXPECT_EQ(0, q.send_blocked);

	ASSERT_EQ(0, window_query(hfd, 21, &q));
	EXPECT_EQ(PERCS_WINDOW_F_POLL, q.wflags);
	EXPECT_EQ(FIFO_4K, q.send_fifo_size);
	EXPECT_EQ(4u << 20, q.recv_fifo_size);

	close(wfd);
	close(pfd);
	close(hfd);
	ASSERT_LIVE_ZERO();
}

/* WINDOW_QUERY on a free window: ENOENT, state FREE, the rest zero. */
TEST(window_query_free)
{
	struct percs_hfi_info info;
	struct percs_window_query q;
	int hfd;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	ASSERT_EQ(0, hfi_info(hfd, &info));
	memset(&q, 0xff, sizeof(q));
	q.size = sizeof(q);
	q.flags = 0;
	q.window = info.windows_total - 1;
	ASSERT_EQ(-1, ioctl(hfd, PERCS_IOC_WINDOW_QUERY, &q));
	ASSERT_EQ(ENOENT, errno);
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_EQ(info.windows_total - 1, q.window);
	EXPECT_EQ(PERCS_WSTATE_FREE, q.state);
	EXPECT_EQ(0, q.job_key);
	EXPECT_EQ(0, q.pid);
	EXPECT_EQ(0, q.uid);
	EXPECT_EQ(0, q.send_fifo_size);
	close(hfd);
}

/* A window reserved by a child that exited is released with the child. */
TEST(child_exit_releases)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	int hfd, status;
	pid_t pid;

	PT_REQUIRE_DEVICE();
	hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, hfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int w = pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(),
				       9, &req);

		_exit(w < 0 ? 1 : 0);	/* exit without closing */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, window_query(hfd, 9, &q));
	close(hfd);
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
