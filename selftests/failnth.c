// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: a fail-nth sweep over every ioctl and every mmap region.
 *
 * For each operation (HFI_INFO, WINDOW_QUERY of a busy and of a free
 * window, WINDOW_RESERVE in kick mode, in poll mode on an HFI whose
 * polling engine is not running yet and in poll mode with it running,
 * KICK and fdatasync carrying the first send of a fresh window, the first
 * immediate send, a poll-mode kick, mmap of each region, memory
 * registration and deregistration) and for n = 1, 2,
 * ...: write n to /proc/thread-self/fail-nth, make the call, read the file
 * back (0: the n-th fault point of the call was failed; see the kernel's
 * Documentation/fault-injection/fault-injection.rst, "Systematic faults
 * using fail-nth"), until a call runs with no fault injected.  Looping on
 * "no fault injected" rather than "the call succeeded" matters: with
 * kmemleak the fault can land in kmemleak's own allocation and the call
 * succeeds anyway.
 *
 * For every n the call either succeeds or fails with a documented errno
 * (ENOMEM; EFAULT when the fault hit a user copy), leaves nothing behind
 * (debugfs live counters, open fds) and a following normal call works.
 *
 * The fixture sets the global fault-injection knobs so that fail-nth can
 * reach the module's GFP_KERNEL allocations (failslab and fail_page_alloc
 * ignore-gfp-wait N, fail_page_alloc ignore-gfp-highmem N and min-order 0:
 * vmalloc pages too) and silences them (verbose 0), and restores them.
 * An injected vmalloc failure still makes the kernel print "vmalloc error"
 * with a stack (warn_alloc()): the sweep is bracketed by "percs failnth:"
 * lines in the kernel log so that the log oracle can tell those reports
 * from real ones.
 *
 * Needs CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_DEBUG_FS (the debug kernels): without
 * /proc/thread-self/fail-nth every test is skipped.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096u
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FI_DIR		"/sys/kernel/debug"
#define MAX_N		5000	/* fault points in one call: surely fewer */

/* ---- the global knobs ---- */

static const struct knob {
	const char *path;
	const char *value;
} knobs[] = {
	{ FI_DIR "/failslab/ignore-gfp-wait", "N" },
	{ FI_DIR "/failslab/verbose", "0" },
	{ FI_DIR "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ FI_DIR "/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ FI_DIR "/fail_page_alloc/min-order", "0" },
	{ FI_DIR "/fail_page_alloc/verbose", "0" },
	{ FI_DIR "/fail_usercopy/verbose", "0" },
	{ FI_DIR "/fail_futex/verbose", "0" },
};

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static void kmsg(const char *s)
{
	write_str("/dev/kmsg", s);
}


/* ---- one operation under fail-nth ---- */

struct ctx;

/**
 * struct fop - an operation swept with fail-nth
 * @name: for the log
 * @prepare: set up what the call needs, without injection (may be NULL)
 * @call: the call made with the n-th fault armed: >= 0 or -errno; it must
 *	make one system call and nothing else (no allocation, no page fault)
 * @ok: a result that counts as success besides >= 0 (e.g. -ENOENT), or 0
 * @check: after a successful call, check its effect (may be NULL)
 * @undo: after a successful call, release what it made (may be NULL)
 * @cleanup: release what @prepare made (may be NULL)
 * @allowed: errnos an injected fault may cause, as -errno, 0-terminated
 */
struct fop {
	const char *name;
	int (*prepare)(struct ctx *c);
	long (*call)(struct ctx *c);
	long ok;
	int (*check)(struct ctx *c, long ret);
	void (*undo)(struct ctx *c, long ret);
	void (*cleanup)(struct ctx *c);
	long allowed[4];
};

struct ctx {
	int fail_fd;
	int hfd;
	uint32_t key;
	/* the argument of the call, touched before it is armed */
	union {
		struct percs_hfi_info info;
		struct percs_window_query query;
		struct percs_window_reserve reserve;
		struct percs_mr_register mr;
		struct percs_mr_deregister dereg;
		struct percs_job_create job;
	} arg;
	uint32_t flags;		/* reserve: window flags */
	uint32_t fifo;		/* reserve: FIFO sizes */
	uint32_t window;	/* query: the window */
	/* send: a fresh pair */
	struct pt_rawwin s, r;
	int send_how;		/* 0 KICK(SEND), 1 fdatasync, 2 KICK(IMM) */
	uint64_t sent;		/* packets the receiver has got */
	bool poll;
	/* mmap */
	int wfd;
	struct percs_window_reserve wreq;
	unsigned int region;
	void *mapped;
	/* memory registration: a touched buffer */
	uint8_t *mr_buf;
	uint32_t mr_handle;
};

static long sys_ioctl(int fd, unsigned long cmd, unsigned long arg)
{
	long r = syscall(SYS_ioctl, fd, cmd, arg);

	return r < 0 ? -errno : r;
}

/* Arm the n-th fault, run the call, read back whether it was injected. */
static long inject(struct ctx *c, const struct fop *op, unsigned int n,
		   bool *injected)
{
	char arm[16], back[16];
	int len = snprintf(arm, sizeof(arm), "%u", n);
	ssize_t k;
	long ret;

	memset(back, 0, sizeof(back));
	if (pwrite(c->fail_fd, arm, len, 0) != len)
		return -EIO;
	ret = op->call(c);
	k = pread(c->fail_fd, back, sizeof(back) - 1, 0);
	/*
	 * "0": the n-th fault point was failed.  A positive count: the call
	 * had fewer than n.  A failed read: the fault landed in the read's
	 * own user copy, so not in the call.
	 */
	*injected = k > 0 && back[0] == '0';
	/* disarm (if the read did not already use the fault up) */
	if (pwrite(c->fail_fd, "0", 1, 0) != 1 && !*injected) {
		/* the write's copy took the last count: now 0 anyway */
	}
	return ret;
}

struct sweep_stats {
	unsigned int points;	/* calls with a fault injected */
	unsigned int absorbed;	/* injected, the call succeeded anyway */
	unsigned int failed[4];	/* by op->allowed[] */
};

static void sweep(struct __test_metadata *_metadata, struct ctx *c,
		  const struct fop *op)
{
	struct sweep_stats st = { 0 };
	struct pt_snap base, now;
	bool injected = true;
	char line[256];
	unsigned int n, i;
	size_t len;
	long ret;

	for (n = 1; injected && n <= MAX_N; n++) {
		if (op->prepare)
			ASSERT_EQ(0, op->prepare(c)) TH_LOG("%s: prepare", op->name);
		ASSERT_EQ(0, pt_snap_take(&base));
		ret = inject(c, op, n, &injected);
		ASSERT_NE(-EIO, ret) TH_LOG("%s: cannot arm fail-nth", op->name);
		if (injected)
			st.points++;
		if (ret >= 0 || (op->ok && ret == op->ok)) {
			if (injected)
				st.absorbed++;
			if (op->check)
				EXPECT_EQ(0, op->check(c, ret))
					TH_LOG("%s, fault %u: wrong result", op->name, n);
			if (op->undo)
				op->undo(c, ret);
		} else {
			for (i = 0; op->allowed[i]; i++)
				if (ret == op->allowed[i])
					break;
			if (op->allowed[i])
				st.failed[i]++;
			else
				EXPECT_EQ(0, ret)
					TH_LOG("%s, fault %u (%s): answered %ld (%s), not a documented errno",
					       op->name, n, injected ? "injected" :
					       "none", ret, strerror(-ret));
			if (!injected)
				EXPECT_EQ(0, ret)
					TH_LOG("%s: failed %ld without a fault",
					       op->name, ret);
		}
		/* nothing left behind */
		if (!pt_snap_back(&base, &now, 5000)) {
			TH_LOG("%s, fault %u (answer %ld): left behind: fds %d->%d windows %ld->%ld reserved %ld->%ld mappings %ld->%ld jobs %ld->%ld",
			       op->name, n, ret, base.fds, now.fds,
			       base.live.windows, now.live.windows,
			       base.live.windows_reserved,
			       now.live.windows_reserved, base.live.mappings,
			       now.live.mappings, base.live.jobs,
			       now.live.jobs);
			_metadata->passed = 0;
		}
		/* and the same call works right after */
		ret = op->call(c);
		EXPECT_TRUE(ret >= 0 || (op->ok && ret == op->ok))
			TH_LOG("%s after fault %u: %ld", op->name, n, ret);
		if (ret >= 0 || (op->ok && ret == op->ok)) {
			if (op->check)
				EXPECT_EQ(0, op->check(c, ret));
			if (op->undo)
				op->undo(c, ret);
		}
		if (op->cleanup)
			op->cleanup(c);
		if (!_metadata->passed)
			break;
	}
	EXPECT_GE(MAX_N, n) TH_LOG("%s: still injecting at %u", op->name, n);
	len = snprintf(line, sizeof(line), "%s: %u fault points, %u absorbed",
		       op->name, st.points, st.absorbed);
	for (i = 0; op->allowed[i] && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, ", %s %u",
				strerror(-op->allowed[i]), st.failed[i]);
	TH_LOG("%s", line);
}

/* ---- the operations ---- */

static long call_info(struct ctx *c)
{
	return sys_ioctl(c->hfd, PERCS_IOC_HFI_INFO, (unsigned long)&c->arg);
}

static int prep_info(struct ctx *c)
{
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.info.size = sizeof(c->arg.info);
	return 0;
}

static int check_info(struct ctx *c, long ret)
{
	return c->arg.info.flit_size == PERCS_FLIT_SIZE &&
	       c->arg.info.max_packet == PERCS_MAX_PACKET ? 0 : -1;
}

static long call_query(struct ctx *c)
{
	return sys_ioctl(c->hfd, PERCS_IOC_WINDOW_QUERY,
			 (unsigned long)&c->arg);
}

static int prep_query(struct ctx *c)
{
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.query.size = sizeof(c->arg.query);
	c->arg.query.window = c->window;
	return 0;
}

static long call_reserve(struct ctx *c)
{
	return sys_ioctl(c->hfd, PERCS_IOC_WINDOW_RESERVE,
			 (unsigned long)&c->arg);
}

static int prep_reserve(struct ctx *c)
{
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.reserve.size = sizeof(c->arg.reserve);
	c->arg.reserve.flags = c->flags;
	c->arg.reserve.send_fifo_size = c->fifo;
	c->arg.reserve.recv_fifo_size = c->fifo;
	c->arg.reserve.job_fd = pt_job_fd(c->key);
	c->arg.reserve.window = PERCS_WINDOW_ANY;
	return 0;
}

static int check_reserve(struct ctx *c, long ret)
{
	return c->arg.reserve.fd == ret &&
	       c->arg.reserve.regions[PERCS_REGION_SEND_FIFO].length ==
	       c->fifo ? 0 : -1;
}

static void undo_close(struct ctx *c, long ret)
{
	close(ret);
	/* the next call starts from a clean argument */
	prep_reserve(c);
}

static int prep_job(struct ctx *c)
{
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.job.size = sizeof(c->arg.job);
	return 0;
}

static long call_job(struct ctx *c)
{
	return sys_ioctl(c->hfd, PERCS_IOC_JOB_CREATE, (unsigned long)&c->arg);
}

/* The answer names the fd, and the fd is that job. */
static int check_job(struct ctx *c, long ret)
{
	struct percs_job_query q = { .size = sizeof(q) };

	return c->arg.job.fd == ret && c->arg.job.job_key &&
	       !ioctl(ret, PERCS_IOC_JOB_QUERY, &q) &&
	       q.job_key == c->arg.job.job_key ? 0 : -1;
}

static void undo_job(struct ctx *c, long ret)
{
	close(ret);
	prep_job(c);
}

/*
 * A fresh receiver and a sender (kick or poll mode) with two one-unit
 * packets (or immediate lines) composed and the first one triggered.
 */
static int prep_send(struct ctx *c)
{
	struct percs_pkt_hdr h;
	int ret;

	c->sent = 0;
	ret = pt_rawwin_open(&c->r, c->hfd, 0, PERCS_FIFO_MIN_SIZE,
			     PERCS_FIFO_MIN_SIZE, c->key);
	if (ret)
		return ret;
	ret = pt_rawwin_open(&c->s, c->hfd, c->poll ? PERCS_WINDOW_F_POLL : 0,
			     PERCS_FIFO_MIN_SIZE, PERCS_FIFO_MIN_SIZE, c->key);
	if (ret)
		return ret;
	memset(&h, 0, sizeof(h));
	h.dst = c->r.req.addr;
	h.tag = 0xf417;
	if (c->send_how == 2) {
		uint8_t *slots = c->s.map[PERCS_REGION_IMM];

		h.kind = PERCS_PKT_IMM;
		h.length = PERCS_IMM_PAYLOAD;
		memcpy(slots, &h, sizeof(h));
		memcpy(slots + PERCS_FLIT_SIZE, &h, sizeof(h));
		__atomic_store_n(&pt_rawwin_db(&c->s)->imm_tail, 1,
				 __ATOMIC_RELEASE);
	} else {
		h.kind = PERCS_PKT_FIFO;
		h.length = PERCS_FLIT_SIZE - PERCS_PKT_HDR_SIZE;
		pt_raw_put(&c->s, 0, &h, NULL);
		pt_raw_put(&c->s, 1, &h, NULL);
		__atomic_store_n(&pt_rawwin_db(&c->s)->send_tail, 1,
				 __ATOMIC_RELEASE);
	}
	return 0;
}

static long call_send(struct ctx *c)
{
	switch (c->send_how) {
	case 1:
		return syscall(SYS_fdatasync, c->s.fd) ? -errno : 0;
	case 2:
		return sys_ioctl(c->s.fd, PERCS_IOC_KICK, PERCS_KICK_F_IMM);
	default:
		return sys_ioctl(c->s.fd, PERCS_IOC_KICK, PERCS_KICK_F_SEND);
	}
}

/* The packet arrived (poll mode: within the deadline); trigger the next. */
static int check_send(struct ctx *c, long ret)
{
	const volatile struct percs_status *rs = pt_rawwin_st(&c->r);
	const volatile struct percs_status *ss = pt_rawwin_st(&c->s);
	uint64_t deadline = pt_now_ms() + PT_TIMEOUT_MS;

	c->sent++;
	while (rs->packets_received < c->sent && pt_now_ms() < deadline)
		usleep(100);
	if (rs->packets_received != c->sent || ss->send_errors)
		return -1;
	if (c->send_how == 2)
		__atomic_store_n(&pt_rawwin_db(&c->s)->imm_tail, 2,
				 __ATOMIC_RELEASE);
	else
		__atomic_store_n(&pt_rawwin_db(&c->s)->send_tail, 2,
				 __ATOMIC_RELEASE);
	return 0;
}

static void cleanup_send(struct ctx *c)
{
	pt_rawwin_close(&c->s);
	pt_rawwin_close(&c->r);
}

static long call_mmap(struct ctx *c)
{
	const struct percs_region *reg = &c->wreq.regions[c->region];
	long r = syscall(SYS_mmap, NULL, reg->length,
			 reg->flags & PERCS_REGION_F_WRITABLE ?
			 PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
			 c->wfd, reg->offset);

	if (r == -1)
		return -errno;
	c->mapped = (void *)r;
	return 0;
}

static int check_mmap(struct ctx *c, long ret)
{
	volatile uint8_t *p = c->mapped;

	(void)p[0];	/* readable */
	return 0;
}

static void undo_munmap(struct ctx *c, long ret)
{
	munmap(c->mapped, c->wreq.regions[c->region].length);
	c->mapped = NULL;
}

/*
 * Memory registration: 16 pages (touched, so pinning needs no fault)
 * with every right, on the window c->wfd.  Nothing may stay registered
 * or pinned after a failed call: each prepare checks the debugfs
 * counters, which the live snapshot does not cover.
 */
#define MR_PAGES	16

static long live_count(const char *name)
{
	FILE *f = fopen(PT_DEBUGFS_LIVE, "re");
	long val, ret = -1;
	char key[64];

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2)
		if (!strcmp(key, name))
			ret = val;
	fclose(f);
	return ret;
}

/*
 * The NMMU's live counters read @regs and @pages: a registration is
 * released a grace period after its last reference, so wait for that.
 */
static int mr_live_is(long regs, long pages)
{
	uint64_t deadline = pt_now_ms() + PT_TIMEOUT_MS;

	while (live_count("registrations") != regs ||
	       live_count("pinned_pages") != pages) {
		if (pt_now_ms() > deadline)
			return -1;
		pt_pause_us(1000);
	}
	return 0;
}

static int mr_nothing_left(void)
{
	return mr_live_is(0, 0);
}

static void fill_mr_register(struct ctx *c)
{
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.mr.size = sizeof(c->arg.mr);
	c->arg.mr.access = PERCS_ACCESS_ALL;
	c->arg.mr.addr = (uintptr_t)c->mr_buf + 5;
	c->arg.mr.length = MR_PAGES * PAGE - 5;
}

static int prep_mr_register(struct ctx *c)
{
	fill_mr_register(c);
	return mr_nothing_left();
}

static long call_mr_register(struct ctx *c)
{
	return sys_ioctl(c->wfd, PERCS_IOC_MR_REGISTER, (unsigned long)&c->arg);
}

static int check_mr_register(struct ctx *c, long ret)
{
	return c->arg.mr.handle ? mr_live_is(1, MR_PAGES) : -1;
}

static void undo_mr_register(struct ctx *c, long ret)
{
	struct percs_mr_deregister d = {
		.size = sizeof(d), .handle = c->arg.mr.handle,
	};

	sys_ioctl(c->wfd, PERCS_IOC_MR_DEREGISTER, (unsigned long)&d);
	fill_mr_register(c);
}

/* A registration made without faults; the call deregisters it. */
static int prep_mr_deregister(struct ctx *c)
{
	long ret;

	if (mr_nothing_left())
		return -1;
	fill_mr_register(c);
	ret = call_mr_register(c);
	if (ret)
		return (int)ret;
	c->mr_handle = c->arg.mr.handle;
	memset(&c->arg, 0, sizeof(c->arg));
	c->arg.dereg.size = sizeof(c->arg.dereg);
	c->arg.dereg.handle = c->mr_handle;
	return 0;
}

static long call_mr_deregister(struct ctx *c)
{
	return sys_ioctl(c->wfd, PERCS_IOC_MR_DEREGISTER,
			 (unsigned long)&c->arg);
}

static int check_mr_deregister(struct ctx *c, long ret)
{
	return mr_nothing_left();
}

/* ---- the fixture ---- */

FIXTURE(fnth) {
	struct ctx c;
	char saved[ARRAY_SIZE(knobs)][32];
	bool have[ARRAY_SIZE(knobs)];
	int busy_fd;
	uint32_t busy;
	uint32_t total;
};

FIXTURE_SETUP(fnth)
{
	struct percs_window_reserve req;
	struct percs_hfi_info info = { .size = sizeof(info) };
	unsigned int i;

	self->c.fail_fd = self->c.hfd = self->busy_fd = self->c.wfd = -1;
	self->c.s.fd = self->c.r.fd = -1;
	PT_REQUIRE_DEVICE();
	if (access(FAIL_NTH, F_OK))
		SKIP(return, "no " FAIL_NTH ": this kernel has no fault "
		     "injection (CONFIG_FAULT_INJECTION, FAILSLAB, "
		     "FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS); the stock "
		     "Debian kernel has none, the debug kernels run this");
	self->c.fail_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->c.fail_fd);
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		self->have[i] = !read_str(knobs[i].path, self->saved[i],
					  sizeof(self->saved[i]));
		if (self->have[i])
			ASSERT_EQ(0, write_str(knobs[i].path, knobs[i].value))
				TH_LOG("%s", knobs[i].path);
	}
	self->c.hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, self->c.hfd);
	ASSERT_EQ(0, ioctl(self->c.hfd, PERCS_IOC_HFI_INFO, &info));
	self->total = info.windows_total;
	self->c.key = pt_new_key();
	self->busy_fd = pt_reserve_raw(self->c.hfd, 0, PERCS_FIFO_MIN_SIZE,
				       PERCS_FIFO_MIN_SIZE, self->c.key,
				       PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, self->busy_fd);
	self->busy = req.window;
	kmsg("percs failnth: injecting faults: vmalloc and page allocation "
	     "failure reports until \"percs failnth: done\" are expected\n");
}

FIXTURE_TEARDOWN(fnth)
{
	unsigned int i;

	if (self->c.fail_fd >= 0) {
		kmsg("percs failnth: done\n");
		close(self->c.fail_fd);
	}
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (self->have[i])
			write_str(knobs[i].path, self->saved[i]);
	pt_rawwin_close(&self->c.s);
	pt_rawwin_close(&self->c.r);
	if (self->c.wfd >= 0)
		close(self->c.wfd);
	if (self->c.mr_buf)
		munmap(self->c.mr_buf, MR_PAGES * PAGE);
	if (self->busy_fd >= 0)
		close(self->busy_fd);
	if (self->c.hfd >= 0)
		close(self->c.hfd);
}

TEST_F(fnth, hfi_info)
{
	const struct fop op = {
		.name = "HFI_INFO", .prepare = prep_info, .call = call_info,
		.check = check_info, .allowed = { -ENOMEM, -EFAULT },
	};

	if (_metadata->skip)
		return;
	sweep(_metadata, &self->c, &op);
}

TEST_F(fnth, window_query)
{
	const struct fop busy = {
		.name = "WINDOW_QUERY (busy)", .prepare = prep_query,
		.call = call_query, .allowed = { -ENOMEM, -EFAULT },
	};
	const struct fop free = {
		.name = "WINDOW_QUERY (free)", .prepare = prep_query,
		.call = call_query, .ok = -ENOENT,
		.allowed = { -ENOMEM, -EFAULT },
	};

	if (_metadata->skip)
		return;
	self->c.window = self->busy;
	sweep(_metadata, &self->c, &busy);
	self->c.window = (self->busy + 1) % self->total;
	sweep(_metadata, &self->c, &free);
}

TEST_F_TIMEOUT(fnth, reserve_kick_mode, 300)
{
	const struct fop op = {
		.name = "WINDOW_RESERVE (kick mode)", .prepare = prep_reserve,
		.call = call_reserve, .check = check_reserve,
		.undo = undo_close, .allowed = { -ENOMEM, -EFAULT },
	};
	static const uint32_t sizes[] = { PERCS_FIFO_MIN_SIZE, 65536 };
	unsigned int i;

	if (_metadata->skip)
		return;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		self->c.flags = 0;
		self->c.fifo = sizes[i];
		TH_LOG("FIFOs of %u bytes", sizes[i]);
		sweep(_metadata, &self->c, &op);
	}
}

TEST_F_TIMEOUT(fnth, job_create, 300)
{
	const struct fop op = {
		.name = "JOB_CREATE", .prepare = prep_job, .call = call_job,
		.check = check_job, .undo = undo_job,
		.allowed = { -ENOMEM, -EFAULT, -ENFILE },
	};

	if (_metadata->skip)
		return;
	sweep(_metadata, &self->c, &op);
}

/* HFI @id has its polling engine running (a "percs-poll/<id>" kthread). */
static bool poll_thread_running(unsigned int id)
{
	char want[32], path[300], comm[64];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(want, sizeof(want), "percs-poll/%u", id);
	d = opendir("/proc");
	if (!d)
		return true;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!read_str(path, comm, sizeof(comm)) && !strcmp(comm, want))
			found = true;
	}
	closedir(d);
	return found;
}

/*
 * Poll mode on an HFI whose polling engine is not running: the sweep
 * passes the engine's creation (kthread_run) at one of its fault points.
 */
TEST_F_TIMEOUT(fnth, reserve_poll_mode_first, 300)
{
	const struct fop op = {
		.name = "WINDOW_RESERVE (poll mode, engine not running)",
		.prepare = prep_reserve, .call = call_reserve,
		.check = check_reserve, .undo = undo_close,
		.allowed = { -ENOMEM, -EFAULT },
	};
	struct percs_hfi_info info = { .size = sizeof(info) };
	int id, hfd = self->c.hfd;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, ioctl(hfd, PERCS_IOC_HFI_INFO, &info));
	for (id = info.nr_hubs * 2 - 1; id >= 0; id--)
		if (!poll_thread_running(id))
			break;
	if (id < 0)
		SKIP(return, "every HFI's polling engine runs already");
	self->c.hfd = pt_hfi_open_fd(id / 2, id % 2);
	ASSERT_LE(0, self->c.hfd);
	TH_LOG("HFI %d", id);
	self->c.flags = PERCS_WINDOW_F_POLL;
	self->c.fifo = PERCS_FIFO_MIN_SIZE;
	sweep(_metadata, &self->c, &op);
	EXPECT_TRUE(poll_thread_running(id));
	close(self->c.hfd);
	self->c.hfd = hfd;
}

TEST_F_TIMEOUT(fnth, reserve_poll_mode, 300)
{
	const struct fop op = {
		.name = "WINDOW_RESERVE (poll mode)", .prepare = prep_reserve,
		.call = call_reserve, .check = check_reserve,
		.undo = undo_close, .allowed = { -ENOMEM, -EFAULT },
	};
	struct percs_window_reserve req;
	int fd;

	if (_metadata->skip)
		return;
	/* the engine runs: a poll window of our own keeps it busy */
	fd = pt_reserve_raw(self->c.hfd, PERCS_WINDOW_F_POLL,
			    PERCS_FIFO_MIN_SIZE, PERCS_FIFO_MIN_SIZE,
			    self->c.key, PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, fd);
	self->c.flags = PERCS_WINDOW_F_POLL;
	self->c.fifo = PERCS_FIFO_MIN_SIZE;
	sweep(_metadata, &self->c, &op);
	close(fd);
}

/* The first send of a fresh window: KICK, fdatasync, immediate send. */
TEST_F_TIMEOUT(fnth, first_send, 300)
{
	static const char *const how[] = {
		"first send (KICK)", "first send (fdatasync)",
		"first immediate send (KICK IMM)",
	};
	unsigned int i, poll;

	if (_metadata->skip)
		return;
	for (poll = 0; poll < 2; poll++) {
		for (i = 0; i < ARRAY_SIZE(how); i++) {
			char name[80];
			struct fop op = {
				.name = name, .prepare = prep_send,
				.call = call_send, .check = check_send,
				.cleanup = cleanup_send,
				.allowed = { -ENOMEM },
			};

			if (poll && i != 0)
				continue;
			snprintf(name, sizeof(name), "%s, %s mode", how[i],
				 poll ? "poll" : "kick");
			self->c.send_how = i;
			self->c.poll = poll;
			sweep(_metadata, &self->c, &op);
		}
	}
}

TEST_F_TIMEOUT(fnth, mmap_regions, 300)
{
	unsigned int r;

	if (_metadata->skip)
		return;
	self->c.wfd = pt_reserve_raw(self->c.hfd, 0, 65536, 65536,
				     self->c.key, PERCS_WINDOW_ANY,
				     &self->c.wreq);
	ASSERT_LE(0, self->c.wfd);
	for (r = 0; r <= PERCS_REGION_CQ; r++) {
		static const char *const names[] = {
			"mmap SEND_FIFO", "mmap RECV_FIFO", "mmap DOORBELL",
			"mmap STATUS", "mmap IMM", "mmap CQ",
		};
		const struct fop op = {
			.name = names[r], .call = call_mmap,
			.check = check_mmap, .undo = undo_munmap,
			.allowed = { -ENOMEM },
		};

		self->c.region = r;
		sweep(_metadata, &self->c, &op);
	}
}

TEST_F_TIMEOUT(fnth, mr_register_deregister, 300)
{
	const struct fop reg = {
		.name = "MR_REGISTER", .prepare = prep_mr_register,
		.call = call_mr_register, .check = check_mr_register,
		.undo = undo_mr_register, .allowed = { -ENOMEM, -EFAULT },
	};
	const struct fop dereg = {
		.name = "MR_DEREGISTER", .prepare = prep_mr_deregister,
		.call = call_mr_deregister, .ok = -ENOENT,
		.check = check_mr_deregister,
		.allowed = { -ENOMEM, -EFAULT },
	};
	void *p;

	if (_metadata->skip)
		return;
	p = mmap(NULL, MR_PAGES * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, MR_PAGES * PAGE);
	self->c.mr_buf = p;
	self->c.wfd = pt_reserve_raw(self->c.hfd, 0, PERCS_FIFO_MIN_SIZE,
				     PERCS_FIFO_MIN_SIZE, self->c.key,
				     PERCS_WINDOW_ANY, &self->c.wreq);
	ASSERT_LE(0, self->c.wfd);
	sweep(_metadata, &self->c, &reg);
	EXPECT_EQ(0, mr_nothing_left());
	sweep(_metadata, &self->c, &dereg);
	EXPECT_EQ(0, mr_nothing_left());
}

TEST_HARNESS_MAIN
