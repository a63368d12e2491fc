// SPDX-License-Identifier: GPL-2.0
/*
 * badinput: every user-supplied size, flag, index, offset and shared index
 * is checked and answered with the errno Documentation/design.rst gives;
 * a window keeps working after a bad trigger or credit.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K PERCS_FIFO_MIN_SIZE
#define PAGE 4096

/* The ioctls of an HFI fd, each with a valid argument builder. */
struct hfi_ioctl {
	const char *name;
	unsigned long cmd;
	size_t size;
	size_t min;	/* the first ABI version's size */
};

static const struct hfi_ioctl hfi_ioctls[] = {
	{ "HFI_INFO", PERCS_IOC_HFI_INFO, sizeof(struct percs_hfi_info),
	  sizeof(struct percs_hfi_info) },
	{ "WINDOW_RESERVE", PERCS_IOC_WINDOW_RESERVE,
	  sizeof(struct percs_window_reserve),
	  sizeof(struct percs_window_reserve) },
	{ "WINDOW_QUERY", PERCS_IOC_WINDOW_QUERY,
	  sizeof(struct percs_window_query), PERCS_WINDOW_QUERY_SIZE_VER0 },
	{ "JOB_CREATE", PERCS_IOC_JOB_CREATE, sizeof(struct percs_job_create),
	  sizeof(struct percs_job_create) },
};

/* The job of the test's windows (made by the fixture). */
static uint32_t test_key;

/*
 * Fill @buf (zeroed, at least hfi_ioctls[i].size bytes) with a valid
 * argument: for QUERY, of window @busy (reserved, so the answer is 0).
 */
static void valid_arg(unsigned int i, void *buf, uint32_t size, uint32_t busy)
{
	if (hfi_ioctls[i].cmd == PERCS_IOC_WINDOW_RESERVE) {
		struct percs_window_reserve *r = buf;

		r->send_fifo_size = FIFO_4K;
		r->recv_fifo_size = FIFO_4K;
		r->job_fd = pt_job_fd(test_key);
		r->window = PERCS_WINDOW_ANY;
	} else if (hfi_ioctls[i].cmd == PERCS_IOC_WINDOW_QUERY) {
		((struct percs_window_query *)buf)->window = busy;
	}
	*(uint32_t *)buf = size;
}

/* ioctl result: >= 0, or -errno; closes a window fd it got back. */
static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	if (ret < 0)
		return -errno;
	if (cmd == PERCS_IOC_WINDOW_RESERVE || cmd == PERCS_IOC_JOB_CREATE) {
		close(ret);
		return 0;
	}
	return ret;
}

FIXTURE(hfi) {
	int hfd;
	int busy_fd;		/* a reserved window, for QUERY */
	uint32_t busy;
	struct percs_hfi_info info;
};

FIXTURE_SETUP(hfi)
{
	struct percs_window_reserve req;

	self->hfd = -1;
	self->busy_fd = -1;
	PT_REQUIRE_DEVICE();
	self->hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, self->hfd);
	self->info.size = sizeof(self->info);
	ASSERT_EQ(0, ioctl(self->hfd, PERCS_IOC_HFI_INFO, &self->info));
	test_key = pt_new_key();
	self->busy_fd = pt_reserve_raw(self->hfd, 0, FIFO_4K, FIFO_4K,
				       test_key, PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, self->busy_fd);
	self->busy = req.window;
}

FIXTURE_TEARDOWN(hfi)
{
	if (self->busy_fd >= 0)
		close(self->busy_fd);
	if (self->hfd >= 0)
		close(self->hfd);
}

/* size 0 and every size below the first ABI version's struct: EINVAL. */
TEST_F(hfi, ioctl_size_too_small)
{
	uint8_t buf[1024];
	unsigned int i;
	uint32_t sz;

	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		for (sz = 0; sz < hfi_ioctls[i].min; sz += 4) {
			memset(buf, 0, sizeof(buf));
			valid_arg(i, buf, sz, self->busy);
			EXPECT_EQ(-EINVAL, do_ioctl(self->hfd,
						    hfi_ioctls[i].cmd, buf))
				TH_LOG("%s size %u", hfi_ioctls[i].name, sz);
		}
		memset(buf, 0, sizeof(buf));
		valid_arg(i, buf, hfi_ioctls[i].min - 1, self->busy);
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, hfi_ioctls[i].cmd, buf));
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/*
 * An older program's size (the first ABI version's struct, up to today's):
 * accepted, and the kernel writes nothing past the size it was given.
 */
TEST_F(hfi, ioctl_size_older_version_accepted)
{
	uint8_t buf[1024];
	unsigned int i;
	uint32_t sz;

	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		for (sz = hfi_ioctls[i].min; sz <= hfi_ioctls[i].size; sz += 8) {
			memset(buf, 0, sizeof(buf));
			valid_arg(i, buf, sz, self->busy);
			memset(buf + sz, 0xa5, sizeof(buf) - sz);
			EXPECT_EQ(0, do_ioctl(self->hfd, hfi_ioctls[i].cmd, buf))
				TH_LOG("%s size %u", hfi_ioctls[i].name, sz);
			EXPECT_EQ(0xa5, buf[sz])
				TH_LOG("%s size %u", hfi_ioctls[i].name, sz);
		}
	}
}

/* Exactly the struct size, and larger with zero trailing bytes: accepted. */
TEST_F(hfi, ioctl_size_larger_zero_tail_accepted)
{
	uint8_t buf[1024];
	unsigned int i, extra;

	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		for (extra = 0; extra <= 512; extra += 8 + extra) {
			uint32_t sz = hfi_ioctls[i].size + extra;

			memset(buf, 0, sizeof(buf));
			valid_arg(i, buf, sz, self->busy);
			EXPECT_EQ(0, do_ioctl(self->hfd, hfi_ioctls[i].cmd,
					      buf))
				TH_LOG("%s size %u", hfi_ioctls[i].name, sz);
			/* the answer stays inside the kernel's struct */
			EXPECT_EQ(0, buf[hfi_ioctls[i].size]);
		}
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* Larger with a non-zero byte after the struct: E2BIG. */
TEST_F(hfi, ioctl_size_larger_nonzero_tail_e2big)
{
	uint8_t buf[1024];
	unsigned int i;
	uint32_t extra;

	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		for (extra = 1; extra <= 256; extra *= 4) {
			uint32_t sz = hfi_ioctls[i].size + extra;

			memset(buf, 0, sizeof(buf));
			valid_arg(i, buf, sz, self->busy);
			buf[sz - 1] = 0x5a;
			EXPECT_EQ(-E2BIG, do_ioctl(self->hfd,
						   hfi_ioctls[i].cmd, buf))
				TH_LOG("%s size %u", hfi_ioctls[i].name, sz);
		}
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* NULL, small and kernel pointers, a struct running off the mapping. */
TEST_F(hfi, ioctl_bad_pointer_efault)
{
	static void *const bad[] = {
		NULL, (void *)1, (void *)4095,
		(void *)0xffff888000000000ull, (void *)-8l,
	};
	unsigned int i, b;
	uint8_t *pages;

	/* two pages, the second unmapped */
	pages = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	ASSERT_EQ(0, munmap(pages + PAGE, PAGE));

	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		for (b = 0; b < ARRAY_SIZE(bad); b++) {
			EXPECT_EQ(-EFAULT, do_ioctl(self->hfd,
						    hfi_ioctls[i].cmd, bad[b]))
				TH_LOG("%s %p", hfi_ioctls[i].name, bad[b]);
		}
		/* size field readable, the rest of the struct is not */
		memset(pages, 0, PAGE);
		*(uint32_t *)(pages + PAGE - 4) = hfi_ioctls[i].size;
		EXPECT_EQ(-EFAULT, do_ioctl(self->hfd, hfi_ioctls[i].cmd,
					    pages + PAGE - 4));
		/* the struct fits, its claimed extension does not */
		memset(pages, 0, PAGE);
		valid_arg(i, pages, 2 * PAGE, self->busy);
		EXPECT_EQ(-EFAULT, do_ioctl(self->hfd, hfi_ioctls[i].cmd,
					    pages));
	}
	munmap(pages, PAGE);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/*
 * The answer cannot be written back (read-only memory): EFAULT, and a
 * reservation leaves nothing behind (no window, no fd).
 */
TEST_F(hfi, ioctl_readonly_answer_efault)
{
	unsigned int i;
	uint8_t *page;
	int fd_before, fd_after;

	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	fd_before = dup(0);
	close(fd_before);
	for (i = 0; i < ARRAY_SIZE(hfi_ioctls); i++) {
		ASSERT_EQ(0, mprotect(page, PAGE, PROT_READ | PROT_WRITE));
		memset(page, 0, PAGE);
		valid_arg(i, page, hfi_ioctls[i].size, self->busy);
		ASSERT_EQ(0, mprotect(page, PAGE, PROT_READ));
		EXPECT_EQ(-EFAULT, do_ioctl(self->hfd, hfi_ioctls[i].cmd, page))
			TH_LOG("%s", hfi_ioctls[i].name);
	}
	/* a poll-mode reservation, named window */
	ASSERT_EQ(0, mprotect(page, PAGE, PROT_READ | PROT_WRITE));
	memset(page, 0, PAGE);
	valid_arg(1, page, sizeof(struct percs_window_reserve), self->busy);
	((struct percs_window_reserve *)page)->flags = PERCS_WINDOW_F_POLL;
	((struct percs_window_reserve *)page)->window = self->busy + 1;
	ASSERT_EQ(0, mprotect(page, PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, do_ioctl(self->hfd, PERCS_IOC_WINDOW_RESERVE, page));
	munmap(page, PAGE);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
	/* no fd was installed */
	fd_after = dup(0);
	EXPECT_EQ(fd_before, fd_after);
	close(fd_after);
}

/* Unknown ioctl numbers on an HFI fd and on a window fd: ENOTTY. */
TEST_F(hfi, unknown_ioctl_enotty)
{
	static const unsigned long hfi_bad[] = {
		_IO(PERCS_IOCTL_TYPE, 0x05), _IO(PERCS_IOCTL_TYPE, 0x0f),
		PERCS_IOC_JOB_QUERY,
		_IO(PERCS_IOCTL_TYPE, 0xff), PERCS_IOC_KICK,
		PERCS_IOC_MR_REGISTER, PERCS_IOC_MR_DEREGISTER,
		_IOWR(PERCS_IOCTL_TYPE, 0x00, struct percs_hfi_info),
		_IOR(PERCS_IOCTL_TYPE, 0x01, struct percs_window_reserve),
		_IO('T', 0x00), _IO('T', 0x01), 0,
	};
	static const unsigned long win_bad[] = {
		PERCS_IOC_HFI_INFO, PERCS_IOC_WINDOW_RESERVE,
		PERCS_IOC_WINDOW_QUERY, PERCS_IOC_JOB_CREATE,
		PERCS_IOC_JOB_QUERY, _IO(PERCS_IOCTL_TYPE, 0x7f),
		_IOWR(PERCS_IOCTL_TYPE, 0x11, struct percs_mr_register),
		_IOW(PERCS_IOCTL_TYPE, 0x10, __u32), _IO('T', 0x10), 0,
	};
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hfi_bad); i++) {
		EXPECT_EQ(-ENOTTY, do_ioctl(self->hfd, hfi_bad[i], &info))
			TH_LOG("hfi cmd %#lx", hfi_bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(win_bad); i++) {
		EXPECT_EQ(-ENOTTY, do_ioctl(self->busy_fd, win_bad[i], &info))
			TH_LOG("window cmd %#lx", win_bad[i]);
	}
}

/* Unknown flags: EINVAL (HFI_INFO, WINDOW_RESERVE, WINDOW_QUERY). */
TEST_F(hfi, unknown_flags_einval)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	struct percs_hfi_info info;
	uint32_t bit;

	for (bit = 0; bit < 32; bit++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.flags = 1u << bit;
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_HFI_INFO,
					    &info));
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.flags = 1u << bit;
		q.window = self->busy;
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_WINDOW_QUERY,
					    &q));
		if ((1u << bit) & PERCS_WINDOW_F_ALL)
			continue;
		EXPECT_EQ(-EINVAL, pt_reserve_raw(self->hfd, 1u << bit,
						  FIFO_4K, FIFO_4K,
						  pt_new_key(),
						  PERCS_WINDOW_ANY, &req))
			TH_LOG("reserve flag bit %u", bit);
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* Non-zero reserved and output-only fields of a request: EINVAL. */
TEST_F(hfi, nonzero_reserved_einval)
{
	struct percs_window_reserve req;
	struct percs_hfi_info info;
	unsigned int r;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.reserved = 1;
	EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_HFI_INFO, &info));

	for (r = 0; r < 4; r++) {
		memset(&req, 0, sizeof(req));
		req.size = sizeof(req);
		req.send_fifo_size = FIFO_4K;
		req.recv_fifo_size = FIFO_4K;
		req.job_fd = pt_job_fd(pt_new_key());
		req.window = PERCS_WINDOW_ANY;
		switch (r) {
		case 0:
			req.job_key = 1;
			break;
		case 1:
			req.fd = 3;
			break;
		case 2:
			req.imm_slots = PERCS_IMM_SLOTS;
			break;
		case 3:
			req.cq_entries = PERCS_CQ_ENTRIES;
			break;
		}
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_WINDOW_RESERVE,
					    &req))
			TH_LOG("field %u", r);
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* A window in the job of @job_fd: its fd, or -errno. */
static int reserve_in(int hfd, int job_fd, uint32_t flags)
{
	struct percs_window_reserve req = {
		.size = sizeof(req), .flags = flags,
		.send_fifo_size = FIFO_4K, .recv_fifo_size = FIFO_4K,
		.job_fd = job_fd, .window = PERCS_WINDOW_ANY,
	};
	int fd = ioctl(hfd, PERCS_IOC_WINDOW_RESERVE, &req);

	return fd < 0 ? -errno : fd;
}

/*
 * A job fd that is no job: EBADF when it is not open, EINVAL when it is
 * another file (the HFI, a window, /dev/null); nothing reserved.
 */
TEST_F(hfi, job_fd_not_a_job)
{
	struct pt_live before, after;
	int closed, null, wfd, fd;

	wfd = reserve_in(self->hfd, pt_job_fd(pt_new_key()), 0);
	ASSERT_LE(0, wfd);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	closed = dup(null);
	ASSERT_LE(0, closed);
	close(closed);
	ASSERT_EQ(0, pt_read_live(&before));
	for (unsigned int poll = 0; poll < 2; poll++) {
		uint32_t f = poll ? PERCS_WINDOW_F_POLL : 0;

		EXPECT_EQ(-EBADF, reserve_in(self->hfd, -1, f));
		EXPECT_EQ(-EBADF, reserve_in(self->hfd, closed, f));
		EXPECT_EQ(-EBADF, reserve_in(self->hfd, INT32_MAX, f));
		EXPECT_EQ(-EINVAL, reserve_in(self->hfd, self->hfd, f));
		EXPECT_EQ(-EINVAL, reserve_in(self->hfd, wfd, f));
		EXPECT_EQ(-EINVAL, reserve_in(self->hfd, null, f));
	}
	ASSERT_EQ(0, pt_read_live(&after));
	EXPECT_EQ(before.windows, after.windows);
	EXPECT_EQ(before.jobs, after.jobs);
	EXPECT_EQ(2, pt_sysfs_windows_in_use(0, 0));
	/* JOB_QUERY on anything but a job: ENOTTY. */
	struct percs_job_query q = { .size = sizeof(q) };

	EXPECT_EQ(-ENOTTY, do_ioctl(wfd, PERCS_IOC_JOB_QUERY, &q));
	EXPECT_EQ(-ENOTTY, do_ioctl(self->hfd, PERCS_IOC_JOB_QUERY, &q));
	close(null);
	close(wfd);
	fd = reserve_in(self->hfd, pt_job_fd(pt_new_key()), 0);
	EXPECT_LE(0, fd);
	close(fd);
}

/* JOB_CREATE and JOB_QUERY: bad sizes, flags and output fields. */
TEST_F(hfi, job_ioctls_einval)
{
	struct percs_job_create jc;
	struct percs_job_query q;
	struct pt_live before, after;
	uint32_t key = pt_new_key();
	int job = pt_job_fd(key);

	ASSERT_NE(0, key);
	ASSERT_EQ(0, pt_read_live(&before));
	for (unsigned int f = 0; f < 4; f++) {
		memset(&jc, 0, sizeof(jc));
		jc.size = sizeof(jc);
		if (f == 0)
			jc.flags = 1;
		else if (f == 1)
			jc.fd = 5;
		else if (f == 2)
			jc.job_key = 7;
		else
			jc.size = offsetof(struct percs_job_create, job_key);
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_JOB_CREATE,
					    &jc)) TH_LOG("case %u", f);
	}
	EXPECT_EQ(-EFAULT, do_ioctl(self->hfd, PERCS_IOC_JOB_CREATE, NULL));
	ASSERT_EQ(0, pt_read_live(&after));
	EXPECT_EQ(before.jobs, after.jobs);

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	EXPECT_EQ(0, do_ioctl(job, PERCS_IOC_JOB_QUERY, &q));
	EXPECT_EQ(key, q.job_key);
	EXPECT_EQ(0, q.windows);
	EXPECT_EQ(geteuid(), q.uid);
	q.flags = 1;
	EXPECT_EQ(-EINVAL, do_ioctl(job, PERCS_IOC_JOB_QUERY, &q));
	memset(&q, 0, sizeof(q));
	q.size = offsetof(struct percs_job_query, uid);
	EXPECT_EQ(-EINVAL, do_ioctl(job, PERCS_IOC_JOB_QUERY, &q));
	EXPECT_EQ(-EFAULT, do_ioctl(job, PERCS_IOC_JOB_QUERY, NULL));
	EXPECT_EQ(-ENOTTY, do_ioctl(job, PERCS_IOC_HFI_INFO, &q));
	/* The fsync doorbell is a window fd's only (uapi.rst): EINVAL. */
	EXPECT_EQ(-1, fsync(job));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, fdatasync(self->hfd));
	EXPECT_EQ(EINVAL, errno);
}

/* FIFO sizes outside [4 KiB, 4 MiB] or not a power of two: EINVAL. */
TEST_F(hfi, fifo_sizes_einval)
{
	static const uint32_t bad[] = {
		0, 1, 2048, 4095, 4097, 6144, 12288, 65535, 65537,
		(4u << 20) + 4096, 8u << 20, 1u << 31, 0xffffffffu,
	};
	static const uint32_t good[] = { 4096, 8192, 65536, 4u << 20 };
	struct percs_window_reserve req;
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, pt_reserve_raw(self->hfd, 0, bad[i],
						  FIFO_4K, pt_new_key(),
						  PERCS_WINDOW_ANY, &req))
			TH_LOG("send size %u", bad[i]);
		EXPECT_EQ(-EINVAL, pt_reserve_raw(self->hfd, 0, FIFO_4K,
						  bad[i], pt_new_key(),
						  PERCS_WINDOW_ANY, &req))
			TH_LOG("recv size %u", bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		fd = pt_reserve_raw(self->hfd, 0, good[i], good[i],
				    pt_new_key(), PERCS_WINDOW_ANY, &req);
		EXPECT_LE(0, fd) TH_LOG("size %u", good[i]);
		close(fd);
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* Window index >= windows_total: EINVAL (reserve and query). */
TEST_F(hfi, window_index_out_of_range_einval)
{
	struct percs_window_reserve req;
	struct percs_window_query q;
	const uint32_t total = self->info.windows_total;
	const uint32_t bad[] = { total, total + 1, 0xfffffffe };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, pt_reserve_raw(self->hfd, 0, FIFO_4K,
						  FIFO_4K, pt_new_key(),
						  bad[i], &req));
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.window = bad[i];
		EXPECT_EQ(-EINVAL, do_ioctl(self->hfd, PERCS_IOC_WINDOW_QUERY,
					    &q));
	}
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* No fd left for the window (RLIMIT_NOFILE): EMFILE, nothing leaked. */
TEST_F(hfi, reserve_without_free_fd_emfile)
{
	struct percs_window_reserve req;
	struct pt_live before, after;
	struct rlimit rl, low;
	int next;

	uint32_t key_a = pt_new_key(), key_b = pt_new_key();

	ASSERT_EQ(0, pt_read_live(&before));
	next = dup(0);
	ASSERT_LE(0, next);
	close(next);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	low = rl;
	low.rlim_cur = next;	/* every fd below the lowest free one is used */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, pt_reserve_raw(self->hfd, 0, FIFO_4K, FIFO_4K,
					  key_a, PERCS_WINDOW_ANY, &req));
	EXPECT_EQ(-EMFILE, pt_reserve_raw(self->hfd, PERCS_WINDOW_F_POLL,
					  FIFO_4K, FIFO_4K, key_b,
					  PERCS_WINDOW_ANY, &req));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, pt_read_live(&after));
	EXPECT_EQ(before.windows, after.windows);
	EXPECT_EQ(before.jobs, after.jobs);
	EXPECT_EQ(1, pt_sysfs_windows_in_use(0, 0));
}

/* KICK with unknown flag bits: EINVAL; known ones (and 0) accepted. */
TEST_F(hfi, kick_unknown_flags_einval)
{
	unsigned long bit;

	for (bit = 3; bit < 64; bit++) {
		EXPECT_EQ(-EINVAL, do_ioctl(self->busy_fd, PERCS_IOC_KICK,
					    (void *)(1ul << bit)))
			TH_LOG("bit %lu", bit);
	}
	EXPECT_EQ(-EINVAL, do_ioctl(self->busy_fd, PERCS_IOC_KICK,
				    (void *)~0ul));
	EXPECT_EQ(0, do_ioctl(self->busy_fd, PERCS_IOC_KICK, (void *)0));
	EXPECT_EQ(0, do_ioctl(self->busy_fd, PERCS_IOC_KICK,
			      (void *)(unsigned long)PERCS_KICK_F_ALL));
}

/* ---- mmap ---- */

FIXTURE(map) {
	int hfd, wfd;
	struct percs_window_reserve req;
};

FIXTURE_SETUP(map)
{
	self->hfd = -1;
	self->wfd = -1;
	PT_REQUIRE_DEVICE();
	self->hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, self->hfd);
	/* two-page FIFOs, so that partial unmaps are possible */
	self->wfd = pt_reserve_raw(self->hfd, 0, 2 * PAGE, 2 * PAGE,
				   pt_new_key(), PERCS_WINDOW_ANY, &self->req);
	ASSERT_LE(0, self->wfd);
}

FIXTURE_TEARDOWN(map)
{
	if (self->wfd >= 0)
		close(self->wfd);
	if (self->hfd >= 0)
		close(self->hfd);
}

static int try_mmap(int fd, size_t len, int prot, int flags, uint64_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

#define REG(r) (self->req.regions[PERCS_REGION_##r])

/* Offsets that are no region key: EINVAL. */
TEST_F(map, mmap_bad_offset_einval)
{
	const uint64_t key0 = REG(SEND_FIFO).offset;
	const uint64_t bad[] = {
		0, PAGE, key0 + PAGE, REG(CQ).offset + PAGE,
		REG(CQ).offset + REG(CQ).length,
		key0 * 8, key0 * 9, key0 * 1000, key0 / 2,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, try_mmap(self->wfd, PAGE, PROT_READ,
					    MAP_SHARED, bad[i]))
			TH_LOG("offset %#llx", (unsigned long long)bad[i]);
	}
	/* the real keys work */
	for (i = 0; i <= PERCS_REGION_CLOCK; i++)
		EXPECT_EQ(0, try_mmap(self->wfd, self->req.regions[i].length,
				      PROT_READ, MAP_SHARED,
				      self->req.regions[i].offset));
	/* region 6 is the clock; region 7 is unused */
	EXPECT_EQ(PERCS_REGION_F_VALID,
		  self->req.regions[PERCS_REGION_CLOCK].flags);
	EXPECT_EQ(0, self->req.regions[7].flags);
}

/* A length one page short or one page long: EINVAL. */
TEST_F(map, mmap_bad_length_einval)
{
	unsigned int r;

	for (r = 0; r <= PERCS_REGION_CLOCK; r++) {
		const struct percs_region *reg = &self->req.regions[r];

		if (reg->length > PAGE) {
			EXPECT_EQ(-EINVAL, try_mmap(self->wfd,
						    reg->length - PAGE,
						    PROT_READ, MAP_SHARED,
						    reg->offset))
				TH_LOG("region %u short", r);
		}
		EXPECT_EQ(-EINVAL, try_mmap(self->wfd, reg->length + PAGE,
					    PROT_READ, MAP_SHARED, reg->offset))
			TH_LOG("region %u long", r);
	}
}

/* MAP_PRIVATE: EINVAL, for every region. */
TEST_F(map, mmap_private_einval)
{
	unsigned int r;

	for (r = 0; r <= PERCS_REGION_CLOCK; r++) {
		EXPECT_EQ(-EINVAL, try_mmap(self->wfd,
					    self->req.regions[r].length,
					    PROT_READ, MAP_PRIVATE,
					    self->req.regions[r].offset))
			TH_LOG("region %u", r);
	}
}

/* PROT_WRITE on RECV_FIFO, STATUS, CQ, CLOCK: EPERM; on the others fine. */
TEST_F(map, mmap_write_readonly_eperm)
{
	static const unsigned int ro[] = {
		PERCS_REGION_RECV_FIFO, PERCS_REGION_STATUS, PERCS_REGION_CQ,
		PERCS_REGION_CLOCK,
	};
	static const unsigned int rw[] = {
		PERCS_REGION_SEND_FIFO, PERCS_REGION_DOORBELL, PERCS_REGION_IMM,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		const struct percs_region *reg = &self->req.regions[ro[i]];

		EXPECT_EQ(-EPERM, try_mmap(self->wfd, reg->length,
					   PROT_READ | PROT_WRITE, MAP_SHARED,
					   reg->offset))
			TH_LOG("region %u", ro[i]);
		EXPECT_EQ(-EPERM, try_mmap(self->wfd, reg->length, PROT_WRITE,
					   MAP_SHARED, reg->offset));
	}
	for (i = 0; i < ARRAY_SIZE(rw); i++) {
		const struct percs_region *reg = &self->req.regions[rw[i]];

		EXPECT_EQ(0, try_mmap(self->wfd, reg->length,
				      PROT_READ | PROT_WRITE, MAP_SHARED,
				      reg->offset));
	}
}

/* A read-only mapping can never become writable (mprotect: EACCES). */
TEST_F(map, mprotect_readonly_fails)
{
	static const unsigned int ro[] = {
		PERCS_REGION_RECV_FIFO, PERCS_REGION_STATUS, PERCS_REGION_CQ,
		PERCS_REGION_CLOCK,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		const struct percs_region *reg = &self->req.regions[ro[i]];
		void *p = mmap(NULL, reg->length, PROT_READ, MAP_SHARED,
			       self->wfd, (off_t)reg->offset);

		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(-1, mprotect(p, reg->length, PROT_READ | PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(0, mprotect(p, reg->length, PROT_NONE));
		EXPECT_EQ(-1, mprotect(p, reg->length, PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(0, munmap(p, reg->length));
	}
}

/* Partial munmap (or mprotect) of a region splits it: refused (EINVAL). */
TEST_F(map, partial_munmap_einval)
{
	static const unsigned int two_page[] = {
		PERCS_REGION_SEND_FIFO, PERCS_REGION_RECV_FIFO,
	};
	struct pt_live live;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(two_page); i++) {
		const struct percs_region *reg = &self->req.regions[two_page[i]];
		uint8_t *p = mmap(NULL, reg->length, PROT_READ, MAP_SHARED,
				  self->wfd, (off_t)reg->offset);

		ASSERT_EQ(2 * PAGE, reg->length);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(-1, munmap(p, PAGE));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, munmap(p + PAGE, PAGE));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, mprotect(p + PAGE, PAGE, PROT_NONE));
		EXPECT_EQ(EINVAL, errno);
		/* still mapped whole */
		EXPECT_EQ(0, p[PAGE + 1]);
		ASSERT_EQ(0, pt_read_live(&live));
		EXPECT_EQ(1, live.mappings);
		EXPECT_EQ(0, munmap(p, reg->length));
	}
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.mappings);
}

/* mremap cannot grow a region (VM_DONTEXPAND: EFAULT) nor split it. */
TEST_F(map, mremap_grow_fails)
{
	const struct percs_region *reg = &REG(SEND_FIFO);
	uint8_t *p, *q;

	p = mmap(NULL, reg->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->wfd, (off_t)reg->offset);
	ASSERT_NE(MAP_FAILED, p);
	q = mremap(p, reg->length, reg->length + PAGE, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EFAULT, errno);
	q = mremap(p, reg->length, reg->length + PAGE, 0);
	EXPECT_EQ(MAP_FAILED, q);
	/* shrinking would split the region */
	q = mremap(p, reg->length, PAGE, 0);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EINVAL, errno);
	p[0] = 1;	/* still mapped */
	EXPECT_EQ(0, munmap(p, reg->length));
}

/* Moving a whole region elsewhere is fine: still one live mapping. */
TEST_F(map, mremap_move_whole_region)
{
	const struct percs_region *reg = &REG(DOORBELL);
	struct pt_live live;
	uint8_t *p, *q, *hole;

	p = mmap(NULL, reg->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->wfd, (off_t)reg->offset);
	ASSERT_NE(MAP_FAILED, p);
	p[8] = 0x42;
	hole = mmap(NULL, reg->length, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	q = mremap(p, reg->length, reg->length, MREMAP_MAYMOVE | MREMAP_FIXED,
		   hole);
	ASSERT_EQ(hole, q);
	EXPECT_EQ(0x42, q[8]);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.mappings);
	EXPECT_EQ(0, munmap(q, reg->length));
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.mappings);
}

/* mmap on the HFI fd itself is not supported (ENODEV). */
TEST_F(map, mmap_hfi_fd_enodev)
{
	EXPECT_EQ(-ENODEV, try_mmap(self->hfd, PAGE, PROT_READ, MAP_SHARED,
				    REG(DOORBELL).offset));
}

/* ---- shared indices and packet headers ---- */

/* Sender s on (0,0) and receiver r on (0,1), same key, kick mode. */
FIXTURE(pkt) {
	int hfd_s, hfd_r;
	struct pt_rawwin s, r;
	uint64_t pos;		/* s's send FIFO position (units) */
	uint64_t imm;		/* s's imm_tail */
	uint64_t cq_head;	/* s's CQ consumer */
};

FIXTURE_SETUP(pkt)
{
	uint32_t key = pt_new_key();

	self->hfd_s = self->hfd_r = -1;
	self->s.fd = self->r.fd = -1;
	PT_REQUIRE_DEVICE();
	self->hfd_s = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, self->hfd_s);
	self->hfd_r = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, self->hfd_r);
	/* 64 KiB send FIFO: no test here comes near wrapping it */
	ASSERT_EQ(0, pt_rawwin_open(&self->s, self->hfd_s, 0, 65536, FIFO_4K,
				    key));
	ASSERT_EQ(0, pt_rawwin_open(&self->r, self->hfd_r, 0, FIFO_4K,
				    FIFO_4K, key));
}

FIXTURE_TEARDOWN(pkt)
{
	pt_rawwin_close(&self->s);
	pt_rawwin_close(&self->r);
	if (self->hfd_s >= 0)
		close(self->hfd_s);
	if (self->hfd_r >= 0)
		close(self->hfd_r);
}

static struct percs_pkt_hdr fifo_hdr(const struct pt_rawwin *to,
				     uint16_t len, uint32_t tag)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_FIFO;
	h.length = len;
	h.dst = to->req.addr;
	h.tag = tag;
	return h;
}

/* Take one CQE from @rw's queue: 1, or 0 if none. */
static int raw_cqe(struct pt_rawwin *rw, uint64_t *head, struct percs_cqe *c)
{
	const struct percs_cqe *cq = rw->map[PERCS_REGION_CQ];
	uint64_t tail = __atomic_load_n(&pt_rawwin_st(rw)->cq_tail,
					__ATOMIC_ACQUIRE);

	if (tail == *head)
		return 0;
	*c = cq[*head % PERCS_CQ_ENTRIES];
	(*head)++;
	__atomic_store_n(&pt_rawwin_db(rw)->cq_head, *head, __ATOMIC_RELEASE);
	return 1;
}

/* Compose @h (+ payload) at the sender's position, trigger and kick. */
static int send_one(FIXTURE_DATA(pkt) *self, const struct percs_pkt_hdr *h,
		    const void *payload)
{
	self->pos = pt_raw_put(&self->s, self->pos, h, payload);
	return pt_raw_trigger(&self->s, self->pos, true);
}

/* Put @h (+ payload) in the next immediate slot and kick. */
static int imm_one(FIXTURE_DATA(pkt) *self, const struct percs_pkt_hdr *h,
		   const void *payload)
{
	uint8_t *slot = (uint8_t *)self->s.map[PERCS_REGION_IMM] +
			(self->imm % PERCS_IMM_SLOTS) * PERCS_FLIT_SIZE;
	size_t len = h->length;

	if (len > PERCS_IMM_PAYLOAD)
		len = PERCS_IMM_PAYLOAD;	/* a slot is one flit */
	memcpy(slot, h, sizeof(*h));
	if (payload)
		memcpy(slot + sizeof(*h), payload, len);
	self->imm++;
	__atomic_store_n(&pt_rawwin_db(&self->s)->imm_tail, self->imm,
			 __ATOMIC_RELEASE);
	return pt_raw_kick(&self->s, PERCS_KICK_F_IMM);
}

#define EXPECT_CQE(_tag, _res, _kind, _flags) do {			\
	struct percs_cqe __c;						\
	ASSERT_EQ(1, raw_cqe(&self->s, &self->cq_head, &__c));		\
	EXPECT_EQ((uint64_t)(_tag), __c.user_data);			\
	EXPECT_EQ((_res), __c.res);					\
	EXPECT_EQ((_kind), __c.kind);					\
	EXPECT_EQ((_flags), __c.flags);					\
} while (0)

#define EXPECT_NO_CQE() do {						\
	struct percs_cqe __c;						\
	EXPECT_EQ(0, raw_cqe(&self->s, &self->cq_head, &__c));		\
} while (0)

/* The receiver has got exactly @n packets. */
#define EXPECT_RECEIVED(n) do {						\
	EXPECT_EQ((n), pt_rawwin_st(&self->r)->packets_received);	\
} while (0)

/* A good packet still goes through: the window works. */
#define EXPECT_WINDOW_WORKS(tag) do {					\
	struct percs_pkt_hdr __h = fifo_hdr(&self->r, 8, (tag));	\
	uint64_t __got = pt_rawwin_st(&self->r)->packets_received;	\
	__h.flags = PERCS_PKT_F_NOTIFY;					\
	EXPECT_EQ(1, send_one(self, &__h, "payload!"));			\
	EXPECT_CQE((tag), 0, PERCS_PKT_FIFO, 0);			\
	EXPECT_EQ(__got + 1, pt_rawwin_st(&self->r)->packets_received);	\
} while (0)

/* A trigger more than the ring past send_head: -EINVAL, ERROR set. */
TEST_F(pkt, trigger_beyond_ring_einval)
{
	const uint64_t units = 65536 / PERCS_FLIT_SIZE;
	const uint64_t bad[] = { units + 1, units + 2, 1ull << 40, ~0ull };
	const volatile struct percs_status *st = pt_rawwin_st(&self->s);
	struct pollfd p = { .fd = self->s.fd, .events = POLLIN };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, pt_raw_trigger(&self->s, bad[i], true))
			TH_LOG("trigger %#llx", (unsigned long long)bad[i]);
		EXPECT_TRUE(st->flags & PERCS_STATUS_ERROR);
		EXPECT_EQ(EINVAL, st->error);
		EXPECT_EQ(0, st->send_head);
	}
	/* poll() reports the error */
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLERR);
	EXPECT_NO_CQE();
	EXPECT_RECEIVED(0);
	/* a valid trigger afterwards works */
	EXPECT_WINDOW_WORKS(0x600d);
	EXPECT_EQ(1, st->send_head);
}

/* A trigger moved backwards: -EINVAL, ERROR set, window keeps working. */
TEST_F(pkt, trigger_backwards_einval)
{
	const volatile struct percs_status *st = pt_rawwin_st(&self->s);
	struct percs_pkt_hdr h = fifo_hdr(&self->r, 8, 1);

	ASSERT_EQ(1, send_one(self, &h, "12345678"));
	ASSERT_EQ(1, send_one(self, &h, "12345678"));
	EXPECT_FALSE(st->flags & PERCS_STATUS_ERROR);
	EXPECT_EQ(2, st->send_head);
	EXPECT_EQ(-EINVAL, pt_raw_trigger(&self->s, 1, true));
	EXPECT_TRUE(st->flags & PERCS_STATUS_ERROR);
	EXPECT_EQ(EINVAL, st->error);
	EXPECT_EQ(-EINVAL, pt_raw_trigger(&self->s, 0, true));
	EXPECT_EQ(2, st->send_head);
	EXPECT_RECEIVED(2);
	/* write the valid trigger again, then a new packet */
	EXPECT_EQ(0, pt_raw_trigger(&self->s, 2, true));
	EXPECT_WINDOW_WORKS(0x600e);
	EXPECT_EQ(3, st->send_head);
}

/* A header claiming more units than the trigger covers: -EINVAL. */
TEST_F(pkt, header_past_trigger_einval)
{
	const volatile struct percs_status *st = pt_rawwin_st(&self->s);
	struct percs_pkt_hdr h = fifo_hdr(&self->r, 300, 0x7a11);
	uint8_t payload[300] = { 0 };

	/* 3 units composed, only 1 triggered */
	pt_raw_put(&self->s, self->pos, &h, payload);
	EXPECT_EQ(1, pt_raw_trigger(&self->s, self->pos + 1, true));
	self->pos += 1;
	EXPECT_CQE(0x7a11, -EINVAL, PERCS_PKT_FIFO, PERCS_CQE_F_UNASKED);
	EXPECT_EQ(1, st->send_head);	/* skipped to the trigger */
	EXPECT_EQ(1, st->send_errors);
	EXPECT_RECEIVED(0);
	EXPECT_WINDOW_WORKS(0x7a12);

	/* a 16-unit packet with 15 units triggered */
	h = fifo_hdr(&self->r, PERCS_MAX_PAYLOAD, 0x7a13);
	pt_raw_put(&self->s, self->pos, &h, NULL);
	EXPECT_EQ(1, pt_raw_trigger(&self->s, self->pos + 15, true));
	self->pos += 15;
	EXPECT_CQE(0x7a13, -EINVAL, PERCS_PKT_FIFO, PERCS_CQE_F_UNASKED);
	EXPECT_RECEIVED(1);
	EXPECT_WINDOW_WORKS(0x7a14);
}

/* Length above the path's maximum: -EMSGSIZE (FIFO 2017, slot 97). */
TEST_F(pkt, oversize_emsgsize)
{
	struct percs_pkt_hdr h = fifo_hdr(&self->r, PERCS_MAX_PAYLOAD + 1,
					  0xb16);
	static uint8_t big[PERCS_MAX_PAYLOAD + 1];

	/* 17 units, all triggered */
	EXPECT_EQ(1, send_one(self, &h, big));
	EXPECT_CQE(0xb16, -EMSGSIZE, PERCS_PKT_FIFO, PERCS_CQE_F_UNASKED);
	EXPECT_EQ(17, pt_rawwin_st(&self->s)->send_head);
	EXPECT_RECEIVED(0);

	h.kind = PERCS_PKT_IMM;
	h.length = PERCS_IMM_PAYLOAD + 1;
	h.tag = 0xb17;
	EXPECT_EQ(1, imm_one(self, &h, big));
	EXPECT_CQE(0xb17, -EMSGSIZE, PERCS_PKT_IMM,
		   PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
	EXPECT_EQ(1, pt_rawwin_st(&self->s)->imm_head);
	EXPECT_RECEIVED(0);
	/* the maxima themselves are fine */
	h.length = PERCS_IMM_PAYLOAD;
	h.tag = 0xb18;
	h.flags = PERCS_PKT_F_NOTIFY;
	EXPECT_EQ(1, imm_one(self, &h, big));
	EXPECT_CQE(0xb18, 0, PERCS_PKT_IMM, PERCS_CQE_F_IMM);
	h = fifo_hdr(&self->r, PERCS_MAX_PAYLOAD, 0xb19);
	EXPECT_EQ(1, send_one(self, &h, big));
	EXPECT_RECEIVED(2);
	EXPECT_WINDOW_WORKS(0xb20);
}

/* Kinds this module does not execute: -EOPNOTSUPP (in a FIFO). */
TEST_F(pkt, unsupported_kind_eopnotsupp)
{
	static const uint8_t kinds[] = {
		PERCS_PKT_IP,
	};
	uint8_t payload[64] = { 0 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct percs_pkt_hdr h = fifo_hdr(&self->r, sizeof(payload),
						  0xe0 + i);

		h.kind = kinds[i];
		EXPECT_EQ(1, send_one(self, &h, payload));
		EXPECT_CQE(0xe0 + i, -EOPNOTSUPP, kinds[i], PERCS_CQE_F_UNASKED);
	}
	EXPECT_RECEIVED(0);
	EXPECT_NO_CQE();
	EXPECT_WINDOW_WORKS(0xe9);
}

/* Route modes other than direct are not executed: -EOPNOTSUPP. */
TEST_F(pkt, route_modes_and_bad_intermediate_supernode)
{
	static const struct {
		uint8_t route;
		uint16_t arg;
		int res;
	} c[] = {
		/* Two HFIs of one hub: the empty route, in every mode. */
		{ PERCS_ROUTE_DIRECT_STRIPED, 0, 0 },
		{ PERCS_ROUTE_SW_INDIRECT, 1, 0 },
		{ PERCS_ROUTE_HW_INDIRECT, 0, 0 },
		/* The source's own supernode, or none (2 supernodes). */
		{ PERCS_ROUTE_SW_INDIRECT, 0, -EINVAL },
		{ PERCS_ROUTE_SW_INDIRECT, 2, -EINVAL },
		{ PERCS_ROUTE_SW_INDIRECT, 0xffff, -EINVAL },
	};
	unsigned int i, ok = 0;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct percs_pkt_hdr h = fifo_hdr(&self->r, 4, 0xf0 + i);

		h.route = c[i].route;
		h.route_arg = c[i].arg;
		h.flags = PERCS_PKT_F_NOTIFY;
		EXPECT_EQ(1, send_one(self, &h, "abcd"));
		EXPECT_CQE(0xf0 + i, c[i].res, PERCS_PKT_FIFO, 0);
		ok += !c[i].res;
	}
	EXPECT_RECEIVED(ok);
	EXPECT_WINDOW_WORKS(0xf9);
}

/* Malformed headers in the FIFO: -EINVAL, with the tag. */
TEST_F(pkt, malformed_fifo_header_einval)
{
	struct percs_pkt_hdr h;
	unsigned int c;

	for (c = 0; c < 9; c++) {
		h = fifo_hdr(&self->r, 4, 0xd00 + c);
		switch (c) {
		case 0:
			h.kind = 200;
			break;
		case 1:
			h.kind = PERCS_PKT_KIND_MAX + 1;
			break;
		case 2:
			h.kind = PERCS_PKT_IMM;	/* only in a slot */
			break;
		case 3:
			/* the lowest flag bit that means nothing */
			h.flags = PERCS_PKT_F_ALL + 1;
			break;
		case 4:
			h.flags = 0x8000;
			break;
		case 5:
			h.route = PERCS_ROUTE_MAX + 1;
			break;
		case 6:
			h.route = 0xff;
			break;
		case 7:
			h.route_arg = 1;	/* with a direct route */
			break;
		case 8:
			h.dst.reserved = 1;
			break;
		}
		EXPECT_EQ(1, send_one(self, &h, "abcd"));
		EXPECT_CQE(0xd00 + c, -EINVAL, h.kind, PERCS_CQE_F_UNASKED);
	}
	EXPECT_RECEIVED(0);
	EXPECT_EQ(9, pt_rawwin_st(&self->s)->send_errors);
	EXPECT_EQ(0, pt_rawwin_st(&self->s)->packets_sent);
	EXPECT_WINDOW_WORKS(0xd99);
}

/* A pad that does not fill the rest of the ring: -EINVAL. */
TEST_F(pkt, bad_pad_einval)
{
	struct percs_pkt_hdr h;

	memset(&h, 0, sizeof(h));
	h.kind = PERCS_PKT_PAD;
	h.length = PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;	/* 1 unit */
	h.tag = 0xbad;
	EXPECT_EQ(1, send_one(self, &h, NULL));
	EXPECT_CQE(0xbad, -EINVAL, PERCS_PKT_PAD, PERCS_CQE_F_UNASKED);
	EXPECT_RECEIVED(0);
	EXPECT_WINDOW_WORKS(0xbae);
}

/* Malformed headers in an immediate slot: -EINVAL, CQE flagged IMM. */
TEST_F(pkt, malformed_imm_header_einval)
{
	static const uint8_t kinds[] = {
		PERCS_PKT_PAD, PERCS_PKT_FIFO, PERCS_PKT_IP, PERCS_PKT_RDMA,
		PERCS_PKT_ATOMIC, PERCS_PKT_COLL, 7, 200,
	};
	struct percs_pkt_hdr h;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		h = fifo_hdr(&self->r, 4, 0x100 + i);
		h.kind = kinds[i];
		EXPECT_EQ(1, imm_one(self, &h, "abcd"));
		EXPECT_CQE(0x100 + i, -EINVAL, kinds[i],
			   PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
	}
	h = fifo_hdr(&self->r, 4, 0x1ff);
	h.kind = PERCS_PKT_IMM;
	h.flags = 0x10;
	EXPECT_EQ(1, imm_one(self, &h, "abcd"));
	EXPECT_CQE(0x1ff, -EINVAL, PERCS_PKT_IMM,
		   PERCS_CQE_F_IMM | PERCS_CQE_F_UNASKED);
	EXPECT_RECEIVED(0);
	/* a good one */
	h.flags = PERCS_PKT_F_NOTIFY;
	h.tag = 0x200;
	EXPECT_EQ(1, imm_one(self, &h, "abcd"));
	EXPECT_CQE(0x200, 0, PERCS_PKT_IMM, PERCS_CQE_F_IMM);
	EXPECT_RECEIVED(1);
}

/* imm_tail more than 32 slots ahead (or behind): -EINVAL, ERROR set. */
TEST_F(pkt, imm_tail_beyond_slots_einval)
{
	const volatile struct percs_status *st = pt_rawwin_st(&self->s);
	volatile struct percs_doorbell *db = pt_rawwin_db(&self->s);
	const uint64_t bad[] = { PERCS_IMM_SLOTS + 1, 1000, ~0ull };
	struct percs_pkt_hdr h;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		db->imm_tail = bad[i];
		EXPECT_EQ(-EINVAL, pt_raw_kick(&self->s, PERCS_KICK_F_IMM))
			TH_LOG("imm_tail %#llx", (unsigned long long)bad[i]);
		EXPECT_TRUE(st->flags & PERCS_STATUS_ERROR);
		EXPECT_EQ(EINVAL, st->error);
		EXPECT_EQ(0, st->imm_head);
	}
	EXPECT_NO_CQE();
	EXPECT_RECEIVED(0);
	/* exactly 32 ahead is allowed: fill every slot */
	h = fifo_hdr(&self->r, 4, 0x320);
	h.kind = PERCS_PKT_IMM;
	for (i = 0; i < PERCS_IMM_SLOTS; i++)
		memcpy((uint8_t *)self->s.map[PERCS_REGION_IMM] +
		       i * PERCS_FLIT_SIZE, &h, sizeof(h));
	db->imm_tail = PERCS_IMM_SLOTS;
	self->imm = PERCS_IMM_SLOTS;
	EXPECT_EQ(PERCS_IMM_SLOTS, pt_raw_kick(&self->s, PERCS_KICK_F_IMM));
	EXPECT_EQ(PERCS_IMM_SLOTS, st->imm_head);
	EXPECT_RECEIVED(PERCS_IMM_SLOTS);
}

/*
 * Credits beyond the receive tail are ignored: no space is freed (the
 * blocked sender stays blocked) and the receiver gets ERROR / EINVAL.
 */
TEST_F(pkt, credit_beyond_tail_ignored)
{
	const volatile struct percs_status *ss = pt_rawwin_st(&self->s);
	const volatile struct percs_status *rs = pt_rawwin_st(&self->r);
	volatile struct percs_doorbell *rdb = pt_rawwin_db(&self->r);
	const uint64_t ring = FIFO_4K / PERCS_FLIT_SIZE;	/* 32 units */
	struct percs_pkt_hdr h = fifo_hdr(&self->r, 8, 0xc0);
	struct pt_live live;
	unsigned int i;

	/* fill the receiver: 32 one-unit packets, then one more blocks */
	for (i = 0; i < ring; i++)
		self->pos = pt_raw_put(&self->s, self->pos, &h, "8 bytes!");
	EXPECT_EQ(ring, pt_raw_trigger(&self->s, self->pos, true));
	EXPECT_EQ(ring, rs->recv_tail);
	EXPECT_EQ(0, send_one(self, &h, "8 bytes!"));
	EXPECT_TRUE(ss->flags & PERCS_STATUS_SEND_BLOCKED);
	EXPECT_TRUE(rs->flags & PERCS_STATUS_SENDERS_WAIT);
	EXPECT_EQ(ring, ss->send_head);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.blocked_senders);
	EXPECT_FALSE(rs->flags & PERCS_STATUS_ERROR);

	/* credit past the tail, and kick the retry */
	rdb->recv_head = ring + 5;
	EXPECT_EQ(0, pt_raw_kick(&self->r, PERCS_KICK_F_CREDIT));
	EXPECT_TRUE(rs->flags & PERCS_STATUS_ERROR);
	EXPECT_EQ(EINVAL, rs->error);
	EXPECT_EQ(ring, rs->recv_tail);		/* nothing delivered */
	EXPECT_EQ(ring, ss->send_head);
	EXPECT_TRUE(ss->flags & PERCS_STATUS_SEND_BLOCKED);
	/* the sender's own kick does not get through either */
	EXPECT_EQ(0, pt_raw_kick(&self->s, PERCS_KICK_F_SEND));
	EXPECT_EQ(ring, rs->recv_tail);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(1, live.blocked_senders);
	EXPECT_NO_CQE();

	/* a valid credit frees the space: the packet goes through */
	rdb->recv_head = ring;
	EXPECT_EQ(0, pt_raw_kick(&self->r, PERCS_KICK_F_CREDIT));
	EXPECT_EQ(ring + 1, rs->recv_tail);
	EXPECT_EQ(ring + 1, ss->send_head);
	EXPECT_FALSE(ss->flags & PERCS_STATUS_SEND_BLOCKED);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(0, live.blocked_senders);
	EXPECT_NO_CQE();
}

/* A credit moved backwards is ignored too and flags the receiver. */
TEST_F(pkt, credit_backwards_ignored)
{
	const volatile struct percs_status *rs = pt_rawwin_st(&self->r);
	volatile struct percs_doorbell *rdb = pt_rawwin_db(&self->r);
	struct percs_pkt_hdr h = fifo_hdr(&self->r, 8, 0xc1);

	const uint64_t ring = FIFO_4K / PERCS_FLIT_SIZE;	/* 32 units */
	uint64_t n;

	/*
	 * The HFI reads the credit when it runs out of room by the last one
	 * it saw: fill the ring so that it must, with a valid credit (2)
	 * and then a backwards one (1).
	 */
	for (n = 0; n < ring; n++)
		EXPECT_EQ(1, send_one(self, &h, "8 bytes!"));
	rdb->recv_head = 2;
	EXPECT_EQ(1, send_one(self, &h, "8 bytes!"));	/* reads the credit */
	EXPECT_EQ(1, send_one(self, &h, "8 bytes!"));
	EXPECT_FALSE(rs->flags & PERCS_STATUS_ERROR);
	rdb->recv_head = 1;
	EXPECT_EQ(0, send_one(self, &h, "8 bytes!"));	/* no room freed */
	EXPECT_TRUE(rs->flags & PERCS_STATUS_ERROR);
	EXPECT_EQ(EINVAL, rs->error);
	EXPECT_RECEIVED(ring + 2);
}

TEST_HARNESS_MAIN
