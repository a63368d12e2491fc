// SPDX-License-Identifier: GPL-2.0
/*
 * nmmu: memory registration on a window (PERCS_IOC_MR_REGISTER and
 * PERCS_IOC_MR_DEREGISTER).  Round trips and handles; every bad input
 * with its errno and nothing left pinned; RLIMIT_MEMLOCK and VmPin; a
 * registered range unmapped, truncated, or inside the window's own
 * mappings; the window closed, the process forked or killed with
 * registrations; thousands of them, the per-window limit, threads.
 *
 * "Nothing left" is checked three ways: the debugfs live counters
 * (registrations, pinned_pages), the process's VmPin (mm->pinned_vm, what
 * RLIMIT_MEMLOCK limits) and the system's FOLL_PIN balance (/proc/vmstat,
 * folded first through /proc/sys/vm/stat_refresh).  Errnos are those of
 * Documentation/uapi.rst.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define FIFO_4K		PERCS_FIFO_MIN_SIZE
#define PAGE		4096UL
#define NOBODY		65534
#define MR_PER_WINDOW	8192	/* the documented per-window limit */
#define BUF_PAGES	64
#define RW		(PERCS_ACCESS_REMOTE_READ | PERCS_ACCESS_REMOTE_WRITE)

static int mr_reg_raw(int fd, uint64_t addr, uint64_t len, uint32_t access,
		      uint32_t *handle)
{
	struct percs_mr_register r = {
		.size = sizeof(r), .access = access, .addr = addr,
		.length = len,
	};

	if (ioctl(fd, PERCS_IOC_MR_REGISTER, &r))
		return -errno;
	*handle = r.handle;
	return 0;
}

static int mr_reg(int fd, const void *p, size_t len, uint32_t access,
		  uint32_t *handle)
{
	return mr_reg_raw(fd, (uintptr_t)p, len, access, handle);
}

static int mr_dereg(int fd, uint32_t handle)
{
	struct percs_mr_deregister d = { .size = sizeof(d), .handle = handle };

	return ioctl(fd, PERCS_IOC_MR_DEREGISTER, &d) ? -errno : 0;
}

/* VmPin of a process (0: this one) in kB; -1 if missing. */
static long vmpin_kb_of(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long vmpin_kb(void)
{
	return vmpin_kb_of(0);
}

/*
 * FOLL_PIN pins held now in the whole system: acquired - released, after
 * folding the per-CPU deltas (root only; a no-op otherwise).
 */
static long long foll_pins(void)
{
	long long v, acq = -1, rel = -1;
	char key[64];
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			(void)0;
		close(fd);
	}
	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(key, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED && (prot & PROT_WRITE))
		memset(p, 0x5a, len);
	return p;
}

static int reserve(int hfd)
{
	struct percs_window_reserve req;

	return pt_reserve_raw(hfd, 0, FIFO_4K, FIFO_4K, pt_new_key(),
			      PERCS_WINDOW_ANY, &req);
}

FIXTURE(nm) {
	int hfd;
	int wfd;
	uint8_t *buf;
	long vmpin0;
	long long pins0;
};

FIXTURE_SETUP(nm)
{
	self->hfd = self->wfd = -1;
	self->buf = MAP_FAILED;
	PT_REQUIRE_DEVICE();
	self->hfd = pt_hfi_open_fd(0, 0);
	ASSERT_LE(0, self->hfd);
	self->wfd = reserve(self->hfd);
	ASSERT_LE(0, self->wfd);
	self->buf = map_anon(BUF_PAGES * PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, pt_live_field("registrations"));
	ASSERT_EQ(0, pt_live_field("pinned_pages"));
	self->vmpin0 = vmpin_kb();
	ASSERT_LE(0, self->vmpin0);
	self->pins0 = foll_pins();
	ASSERT_LE(0, self->pins0);
}

FIXTURE_TEARDOWN(nm)
{
	if (self->wfd >= 0)
		close(self->wfd);
	if (self->hfd >= 0)
		close(self->hfd);
	if (self->buf != MAP_FAILED)
		munmap(self->buf, BUF_PAGES * PAGE);
}

/*
 * @regs registrations holding @pages pages, all of this process: in the
 * live counters (within 5 s: releases are deferred), in VmPin and in the
 * FOLL_PIN balance.
 */
#define EXPECT_PINNED(regs, pages) do {					\
	EXPECT_TRUE(pt_wait_mrs(regs, pages, PT_TIMEOUT_MS))		\
		TH_LOG("live: registrations %ld pinned_pages %ld",	\
		       pt_live_field("registrations"),			\
		       pt_live_field("pinned_pages"));			\
	EXPECT_EQ(self->vmpin0 + (long)(pages) * 4, vmpin_kb());	\
	EXPECT_EQ(self->pins0 + (long long)(pages), foll_pins());	\
} while (0)

/* Register, deregister, deregister again; the pages a range covers. */
TEST_F(nm, register_deregister_round_trip)
{
	static const struct {
		size_t off, len, pages;
	} r[] = {
		{ 100, 2 * PAGE + 1, 3 },	/* unaligned: 3 pages */
		{ 0, PAGE, 1 },
		{ 0, PAGE + 1, 2 },
		{ PAGE - 1, 1, 1 },
		{ PAGE - 1, 2, 2 },
		{ 7, BUF_PAGES * PAGE - 7, BUF_PAGES },
	};
	unsigned int i;
	uint32_t h, a;

	for (i = 0; i < ARRAY_SIZE(r); i++) {
		h = 0;
		ASSERT_EQ(0, mr_reg(self->wfd, self->buf + r[i].off, r[i].len,
				    RW, &h));
		EXPECT_NE(0, h);
		EXPECT_PINNED(1, r[i].pages);
		EXPECT_EQ(0, mr_dereg(self->wfd, h));
		EXPECT_PINNED(0, 0);
		EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, h));
	}
	/* Every combination of rights, none included. */
	for (a = 0; a <= PERCS_ACCESS_ALL; a++) {
		ASSERT_EQ(0, mr_reg(self->wfd, self->buf, 3 * PAGE, a, &h));
		EXPECT_PINNED(1, 3);
		EXPECT_EQ(0, mr_dereg(self->wfd, h));
	}
	EXPECT_PINNED(0, 0);
	/* The data is the process's: registration does not touch it. */
	for (i = 0; i < BUF_PAGES * PAGE; i += 997) {
		ASSERT_EQ(0x5a, self->buf[i]);
	}
}

/* The same through libpercs, on a window it reserved and mapped. */
TEST_F(nm, libpercs_reg_dereg)
{
	struct percs_window *w;
	struct percs_hfi *hfi;
	uint32_t h = 0, h2 = 0;

	ASSERT_EQ(0, pt_hfi_open(0, 1, &hfi));
	ASSERT_EQ(0, pt_reserve(hfi, 0, FIFO_4K, FIFO_4K, pt_new_key(),
				PERCS_WINDOW_ANY, &w));
	ASSERT_EQ(0, percs_mr_reg(w, self->buf + 5, 4 * PAGE,
				  PERCS_ACCESS_ALL, &h));
	EXPECT_NE(0, h);
	ASSERT_EQ(0, percs_mr_reg(w, self->buf, PAGE, 0, &h2));
	EXPECT_NE(h, h2);
	EXPECT_PINNED(2, 6);
	EXPECT_EQ(0, percs_mr_dereg(w, h));
	EXPECT_EQ(-ENOENT, percs_mr_dereg(w, h));
	EXPECT_EQ(-EINVAL, percs_mr_reg(w, self->buf, 0, 0, &h));
	EXPECT_EQ(-EFAULT, percs_mr_reg(w, NULL, PAGE, 0, &h));
	EXPECT_PINNED(1, 1);
	/* Released with the window, which percs_window_release() frees. */
	percs_window_release(w);
	percs_hfi_close(hfi);
	EXPECT_PINNED(0, 0);
}

/*
 * Handles: a deregistered handle stays invalid for at least 65536 more
 * registrations in the window even though its slot is reused at once;
 * a handle means nothing in another window.
 */
TEST_F_TIMEOUT(nm, handles_not_reused, 300)
{
	/*
	 * All 65535 registrations the generation guarantees, on the stock
	 * kernel; the debug kernels, which are here for the allocation and
	 * freeing paths, make a scaled share of them.
	 */
	const unsigned long n = pt_scale(65535);
	uint32_t h1, h, other;
	unsigned long i;
	int w2;

	ASSERT_EQ(0, mr_reg(self->wfd, self->buf, PAGE, RW, &h1));
	w2 = reserve(self->hfd);
	ASSERT_LE(0, w2);
	EXPECT_EQ(-ENOENT, mr_dereg(w2, h1));
	ASSERT_EQ(0, mr_reg(w2, self->buf, PAGE, RW, &other));
	EXPECT_PINNED(2, 2);
	EXPECT_EQ(0, mr_dereg(self->wfd, h1));

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mr_reg(self->wfd, self->buf + PAGE, PAGE, RW, &h));
		if (h == h1) {
			ASSERT_NE(h, h1) TH_LOG("handle back after %lu", i);
		}
		if (i == 0 || i == n - 1) {
			EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, h1));
			EXPECT_EQ(-ENOENT, mr_dereg(w2, h));
		}
		ASSERT_EQ(0, mr_dereg(self->wfd, h));
	}
	EXPECT_PINNED(1, 1);
	EXPECT_EQ(0, mr_dereg(w2, other));
	close(w2);
	EXPECT_PINNED(0, 0);
}

/* Bad register arguments: each errno, and nothing pinned or charged. */
TEST_F(nm, bad_register_inputs)
{
	/* filled, then made read-only */
	uint8_t *ro = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	uint8_t *none = map_anon(PAGE, PROT_NONE);
	uint8_t *gone = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	uint8_t *half = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	const struct {
		const char *what;
		uint32_t flags, access, handle;
		uint64_t addr, len;
		int err;
	} c[] = {
		{ "unknown flag", 2, 0, 0, (uintptr_t)self->buf, PAGE,
		  -EINVAL },
		{ "flags bit 31", 1U << 31, 0, 0, (uintptr_t)self->buf, PAGE,
		  -EINVAL },
		{ "handle in", 0, 0, 1, (uintptr_t)self->buf, PAGE, -EINVAL },
		{ "access bit 4", 0, 1U << 4, 0, (uintptr_t)self->buf, PAGE,
		  -EINVAL },
		{ "access bit 31", 0, RW | 1U << 31, 0, (uintptr_t)self->buf,
		  PAGE, -EINVAL },
		{ "length 0", 0, RW, 0, (uintptr_t)self->buf, 0, -EINVAL },
		{ "length above max", 0, 0, 0, (uintptr_t)self->buf,
		  PERCS_MR_MAX_LENGTH + 1, -EINVAL },
		{ "length u64 max", 0, 0, 0, (uintptr_t)self->buf, ~0ULL,
		  -EINVAL },
		{ "wraps", 0, 0, 0, ~0ULL - 100, PAGE, -EINVAL },
		{ "kernel address", 0, 0, 0, 0xffff888000000000ULL, PAGE,
		  -EFAULT },
		{ "above user space", 0, 0, 0, 0x0100000000000000ULL, PAGE,
		  -EFAULT },
		{ "NULL", 0, 0, 0, 0, PAGE, -EFAULT },
		{ "unmapped", 0, 0, 0, (uintptr_t)gone, PAGE, -EFAULT },
		{ "half unmapped", 0, RW, 0, (uintptr_t)half, 2 * PAGE,
		  -EFAULT },
		{ "PROT_NONE", 0, 0, 0, (uintptr_t)none, PAGE, -EFAULT },
		{ "read-only, LOCAL_WRITE", 0, PERCS_ACCESS_LOCAL_WRITE, 0,
		  (uintptr_t)ro, PAGE, -EFAULT },
		{ "read-only, REMOTE_WRITE", 0, PERCS_ACCESS_REMOTE_WRITE, 0,
		  (uintptr_t)ro, PAGE, -EFAULT },
		{ "read-only, REMOTE_ATOMIC", 0, PERCS_ACCESS_REMOTE_ATOMIC, 0,
		  (uintptr_t)ro, PAGE, -EFAULT },
		{ "read-only, REMOTE_READ", 0, PERCS_ACCESS_REMOTE_READ, 0,
		  (uintptr_t)ro, 4 * PAGE, 0 },
	};
	unsigned int i;

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(0, mprotect(ro, 4 * PAGE, PROT_READ));
	ASSERT_NE(MAP_FAILED, none);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_NE(MAP_FAILED, half);
	ASSERT_EQ(0, munmap(gone, 2 * PAGE));
	ASSERT_EQ(0, munmap(half + PAGE, PAGE));

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct percs_mr_register r = {
			.size = sizeof(r), .flags = c[i].flags,
			.access = c[i].access, .handle = c[i].handle,
			.addr = c[i].addr, .length = c[i].len,
		};
		int got = ioctl(self->wfd, PERCS_IOC_MR_REGISTER, &r) ?
			  -errno : 0;

		EXPECT_EQ(c[i].err, got) TH_LOG("%s", c[i].what);
		if (!got) {
			EXPECT_PINNED(1, 4);
			EXPECT_EQ(0, mr_dereg(self->wfd, r.handle));
		} else {
			EXPECT_EQ(c[i].handle, r.handle) TH_LOG("%s", c[i].what);
		}
		EXPECT_PINNED(0, 0);
	}
	munmap(ro, 4 * PAGE);
	munmap(none, PAGE);
	munmap(half, PAGE);
}

/* The struct itself: sizes, bad pointers, an answer that cannot land. */
TEST_F(nm, bad_register_struct)
{
	uint8_t raw[64];
	struct percs_mr_register *r = (void *)raw;
	uint8_t *pg = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	uint32_t sz;

	ASSERT_NE(MAP_FAILED, pg);
	for (sz = 0; sz < sizeof(*r); sz += 4) {
		memset(raw, 0, sizeof(raw));
		r->size = sz;
		r->addr = (uintptr_t)self->buf;
		r->length = PAGE;
		EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, r));
		EXPECT_EQ(EINVAL, errno) TH_LOG("size %u", sz);
	}
	/* Longer with a zero tail: accepted, the answer stays inside. */
	memset(raw, 0, sizeof(raw));
	r->size = sizeof(raw);
	r->addr = (uintptr_t)self->buf;
	r->length = PAGE;
	ASSERT_EQ(0, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, r));
	EXPECT_NE(0, r->handle);
	EXPECT_EQ(0, raw[sizeof(*r)]);
	EXPECT_EQ(0, mr_dereg(self->wfd, r->handle));
	/* ... with a non-zero byte after the struct: E2BIG. */
	memset(raw, 0, sizeof(raw));
	r->size = sizeof(raw);
	r->addr = (uintptr_t)self->buf;
	r->length = PAGE;
	raw[sizeof(raw) - 1] = 1;
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, r));
	EXPECT_EQ(E2BIG, errno);

	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, 1UL));
	EXPECT_EQ(EFAULT, errno);
	/* The struct runs into an unmapped page. */
	ASSERT_EQ(0, munmap(pg + PAGE, PAGE));
	r = (void *)(pg + PAGE - 16);
	memset(r, 0, 16);
	r->size = sizeof(*r);
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, r));
	EXPECT_EQ(EFAULT, errno);
	/*
	 * A read-only struct: read fine, the answer cannot be written.  The
	 * registration was made and must be undone: nothing stays.
	 */
	r = (void *)pg;
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->access = RW;
	r->addr = (uintptr_t)self->buf;
	r->length = 8 * PAGE;
	ASSERT_EQ(0, mprotect(pg, PAGE, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_REGISTER, r));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, r->handle);
	EXPECT_PINNED(0, 0);
	munmap(pg, PAGE);
}

/* Deregistration: flags, reserved, sizes, handles never given. */
TEST_F(nm, bad_deregister_inputs)
{
	static const uint32_t bogus[] = {
		0, 1, 0xffff, 0x10000, 0xffffffff, 0xffff0001, 8193,
	};
	struct percs_mr_deregister d;
	uint8_t raw[32];
	unsigned int i;
	uint32_t h;

	ASSERT_EQ(0, mr_reg(self->wfd, self->buf, PAGE, RW, &h));
	d = (struct percs_mr_deregister){ .size = sizeof(d), .flags = 1,
					  .handle = h };
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, &d));
	EXPECT_EQ(EINVAL, errno);
	d = (struct percs_mr_deregister){ .size = sizeof(d), .reserved = 1,
					  .handle = h };
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, &d));
	EXPECT_EQ(EINVAL, errno);
	d = (struct percs_mr_deregister){ .size = 12, .handle = h };
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, &d));
	EXPECT_EQ(EINVAL, errno);
	memset(raw, 0, sizeof(raw));
	((struct percs_mr_deregister *)raw)->size = sizeof(raw);
	((struct percs_mr_deregister *)raw)->handle = h;
	raw[20] = 1;
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, raw));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-1, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, NULL));
	EXPECT_EQ(EFAULT, errno);
	for (i = 0; i < ARRAY_SIZE(bogus); i++) {
		if (bogus[i] == h)
			continue;
		EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, bogus[i]))
			TH_LOG("handle %#x", bogus[i]);
	}
	/* Only the generation or only the slot wrong. */
	EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, h + 0x10000));
	EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, h + 1));
	EXPECT_PINNED(1, 1);
	raw[20] = 0;
	EXPECT_EQ(0, ioctl(self->wfd, PERCS_IOC_MR_DEREGISTER, raw));
	EXPECT_PINNED(0, 0);
}

/*
 * RLIMIT_MEMLOCK: in a child that reserved its window as root and then
 * became nobody (no CAP_IPC_LOCK), 16 pages are allowed and one more is
 * -ENOMEM with nothing pinned or charged.  Exit code: 0 or the step.
 */
static int memlock_child(void)
{
	struct rlimit rl = { 16 * PAGE, 16 * PAGE };
	uint32_t h1, h2, h3;
	uint8_t *b;
	int hfd, wfd;

	hfd = pt_hfi_open_fd(0, 0);
	wfd = hfd < 0 ? -1 : reserve(hfd);
	b = map_anon(32 * PAGE, PROT_READ | PROT_WRITE);
	if (wfd < 0 || b == MAP_FAILED)
		return 1;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 2;
	if (vmpin_kb() != 0)
		return 3;
	if (mr_reg(wfd, b, 8 * PAGE, RW, &h1) || vmpin_kb() != 32)
		return 4;
	/* Overlapping registrations count again; the limit exactly: fine. */
	if (mr_reg(wfd, b + 100, 8 * PAGE - 100, RW, &h2) || vmpin_kb() != 64)
		return 5;
	if (mr_reg(wfd, b + 16 * PAGE, 1, 0, &h3) != -ENOMEM ||
	    vmpin_kb() != 64)
		return 6;
	if (mr_dereg(wfd, h1) || vmpin_kb() != 32)
		return 7;
	/* Larger than what is left: refused whole. */
	if (mr_reg(wfd, b, 8 * PAGE + 1, RW, &h3) != -ENOMEM ||
	    vmpin_kb() != 32)
		return 8;
	if (mr_reg(wfd, b, 8 * PAGE, RW, &h3) || vmpin_kb() != 64)
		return 9;
	if (mr_reg(wfd, b, 32 * PAGE, 0, &h1) != -ENOMEM || vmpin_kb() != 64)
		return 10;
	close(wfd);
	if (vmpin_kb() != 0)
		return 11;
	return 0;
}

/* CAP_IPC_LOCK: the limit does not apply, the pages are still counted. */
static int memlock_cap_child(void)
{
	struct rlimit rl = { 0, 0 };
	uint32_t h;
	uint8_t *b = map_anon(8 * PAGE, PROT_READ | PROT_WRITE);
	int hfd = pt_hfi_open_fd(0, 0), wfd = hfd < 0 ? -1 : reserve(hfd);

	if (wfd < 0 || b == MAP_FAILED || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (mr_reg(wfd, b, 8 * PAGE, RW, &h) || vmpin_kb() != 32)
		return 2;
	if (mr_dereg(wfd, h) || vmpin_kb() != 0)
		return 3;
	return 0;
}

static int run_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
}

TEST_F(nm, rlimit_memlock)
{
	if (geteuid() != 0)
		SKIP(return, "needs root to drop CAP_IPC_LOCK by becoming nobody");
	EXPECT_EQ(0, run_child(memlock_child));
	EXPECT_PINNED(0, 0);
	EXPECT_EQ(0, run_child(memlock_cap_child));
	EXPECT_PINNED(0, 0);
}

/* VmPin: each registration counts, overlapping or not; close undoes. */
TEST_F(nm, vmpin_accounting)
{
	uint32_t h1, h2, h3;

	ASSERT_EQ(0, mr_reg(self->wfd, self->buf, 10 * PAGE, RW, &h1));
	EXPECT_PINNED(1, 10);
	ASSERT_EQ(0, mr_reg(self->wfd, self->buf, 10 * PAGE, 0, &h2));
	EXPECT_PINNED(2, 20);
	ASSERT_EQ(0, mr_reg(self->wfd, self->buf + 1, 10 * PAGE, RW, &h3));
	EXPECT_PINNED(3, 31);
	EXPECT_EQ(0, mr_dereg(self->wfd, h2));
	EXPECT_PINNED(2, 21);
	close(self->wfd);
	self->wfd = -1;
	EXPECT_PINNED(0, 0);
}

/*
 * munmap of a registered range: no crash, the pages stay pinned (and
 * charged) until deregistration; the address may be mapped again with
 * fresh memory meanwhile.
 */
TEST_F(nm, munmap_then_dereg)
{
	uint8_t *p = map_anon(16 * PAGE, PROT_READ | PROT_WRITE), *q;
	uint32_t h, h2;
	size_t i;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mr_reg(self->wfd, p + 3, 16 * PAGE - 3,
			    PERCS_ACCESS_ALL, &h));
	ASSERT_EQ(0, munmap(p, 16 * PAGE));
	EXPECT_PINNED(1, 16);
	q = mmap(p, 16 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p, q);
	for (i = 0; i < 16 * PAGE; i += 509) {
		ASSERT_EQ(0, q[i]);
	}
	ASSERT_EQ(0, mr_reg(self->wfd, q, 16 * PAGE, RW, &h2));
	EXPECT_PINNED(2, 32);
	EXPECT_EQ(0, mr_dereg(self->wfd, h));
	EXPECT_PINNED(1, 16);
	/* Unmapped again, then the window closes: released with it. */
	ASSERT_EQ(0, munmap(q, 16 * PAGE));
	close(self->wfd);
	self->wfd = -1;
	EXPECT_PINNED(0, 0);
}

/* A shared file mapping registered, unmapped and truncated: then dereg. */
TEST_F(nm, truncated_file_then_dereg)
{
	int fd = memfd_create("percs-nmmu", MFD_CLOEXEC);
	uint8_t *p;
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 8 * PAGE));
	p = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x33, 8 * PAGE);
	ASSERT_EQ(0, mr_reg(self->wfd, p, 8 * PAGE, RW, &h));
	ASSERT_EQ(0, munmap(p, 8 * PAGE));
	ASSERT_EQ(0, ftruncate(fd, 0));
	close(fd);
	EXPECT_PINNED(1, 8);
	EXPECT_EQ(0, mr_dereg(self->wfd, h));
	EXPECT_PINNED(0, 0);
}

/* A big registration: pinned in batches, charged and released whole. */
TEST_F_TIMEOUT(nm, large_registration, 120)
{
	size_t len = 64UL << 20;
	uint8_t *p = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t h;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mr_reg(self->wfd, p + 1, len - 1, RW, &h));
	EXPECT_PINNED(1, len / PAGE);
	EXPECT_EQ(0, mr_dereg(self->wfd, h));
	EXPECT_PINNED(0, 0);
	munmap(p, len);
}

/* Closing the window fd releases its registrations... */
TEST_F(nm, window_close_releases)
{
	unsigned int i, pages = 0;
	uint32_t h;

	for (i = 0; i < 100; i++) {
		size_t off = i * 13, len = (i % 4 + 1) * PAGE;

		ASSERT_EQ(0, mr_reg(self->wfd, self->buf + off, len,
				    i & PERCS_ACCESS_ALL, &h));
		pages += (off % PAGE + len + PAGE - 1) / PAGE;
	}
	EXPECT_PINNED(100, pages);
	close(self->wfd);
	self->wfd = -1;
	EXPECT_PINNED(0, 0);
}

/*
 * ... unless a mapping still holds the window: the registrations last
 * until the window's release, not the fd's close.  Registering the
 * window's own regions works (read-only ones for reading only) and is
 * undone with the window, whose regions are freed while pinned.
 */
TEST_F(nm, window_mapping_keeps_registrations)
{
	struct pt_rawwin rw;
	uint32_t h[4];

	ASSERT_EQ(0, pt_rawwin_open(&rw, self->hfd, 0, 2 * FIFO_4K, FIFO_4K,
				    pt_new_key()));
	ASSERT_EQ(0, mr_reg(rw.fd, self->buf, 2 * PAGE, RW, &h[0]));
	ASSERT_EQ(0, mr_reg(rw.fd, rw.map[PERCS_REGION_SEND_FIFO],
			    2 * FIFO_4K, PERCS_ACCESS_ALL, &h[1]));
	ASSERT_EQ(0, mr_reg(rw.fd, rw.map[PERCS_REGION_RECV_FIFO], FIFO_4K,
			    PERCS_ACCESS_REMOTE_READ, &h[2]));
	EXPECT_EQ(-EFAULT, mr_reg(rw.fd, rw.map[PERCS_REGION_RECV_FIFO],
				  FIFO_4K, PERCS_ACCESS_REMOTE_WRITE, &h[3]));
	EXPECT_EQ(-EFAULT, mr_reg(rw.fd, rw.map[PERCS_REGION_STATUS], PAGE,
				  PERCS_ACCESS_LOCAL_WRITE, &h[3]));
	ASSERT_EQ(0, mr_reg(rw.fd, rw.map[PERCS_REGION_CLOCK], PAGE,
			    PERCS_ACCESS_REMOTE_READ, &h[3]));
	EXPECT_PINNED(4, 2 + 2 + 1 + 1);
	close(rw.fd);
	rw.fd = -1;
	EXPECT_PINNED(4, 6);
	pt_rawwin_close(&rw);
	EXPECT_PINNED(0, 0);
}

/*
 * fork: the child inherits the window fd, and with it the window's
 * registrations.  They stay charged to the process that made them: the
 * child is charged nothing for the parent's, may deregister them (it
 * drives the window), and what it registers itself is charged to it and
 * outlives it, since the window does.  Exit code: 0 or the step.
 */
static int fork_child(int wfd, uint32_t parent_handle, uint8_t *buf)
{
	uint32_t h;

	if (vmpin_kb() != 0)
		return 1;
	if (mr_dereg(wfd, parent_handle))
		return 2;
	if (vmpin_kb() != 0)
		return 3;
	buf[0] = 1;	/* the child's copy */
	if (mr_reg(wfd, buf, 2 * PAGE, RW, &h) || vmpin_kb() != 8)
		return 4;
	return 0;
}

TEST_F(nm, fork_child_and_window_registrations)
{
	int status;
	uint32_t h;
	pid_t pid;

	ASSERT_EQ(0, mr_reg(self->wfd, self->buf, 4 * PAGE, RW, &h));
	EXPECT_PINNED(1, 4);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(fork_child(self->wfd, h, self->buf));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Our charge went with our registration; the child's lives on. */
	EXPECT_EQ(self->vmpin0, vmpin_kb());
	EXPECT_TRUE(pt_wait_mrs(1, 2, PT_TIMEOUT_MS));
	EXPECT_EQ(self->pins0 + 2, foll_pins());
	EXPECT_EQ(-ENOENT, mr_dereg(self->wfd, h));
	EXPECT_EQ(0x5a, self->buf[0]);	/* the parent's data is its own */
	close(self->wfd);
	self->wfd = -1;
	EXPECT_PINNED(0, 0);
}

/*
 * A process killed with registrations (and one killed in the middle of
 * pinning a large range): everything is released with its windows.
 */
static int killed_child(int ready_fd, bool big)
{
	size_t len = big ? 128UL << 20 : 1024 * PAGE;
	uint8_t *b = map_anon(len, PROT_READ | PROT_WRITE);
	int hfd = pt_hfi_open_fd(0, 1), wfd = hfd < 0 ? -1 : reserve(hfd);
	uint32_t h;
	size_t i;

	if (wfd < 0 || b == MAP_FAILED)
		return 1;
	if (big) {
		if (write(ready_fd, "r", 1) != 1)
			return 2;
		for (;;) {
			if (mr_reg(wfd, b, len, RW, &h))
				return 3;
			if (mr_dereg(wfd, h))
				return 4;
		}
	}
	for (i = 0; i < 1024; i++)
		if (mr_reg(wfd, b + i * PAGE, PAGE, RW, &h))
			return 5;
	if (mr_reg(wfd, b, len, PERCS_ACCESS_ALL, &h))
		return 6;
	if (write(ready_fd, "r", 1) != 1)
		return 7;
	pause();
	return 0;
}

static void kill_with_registrations(struct __test_metadata *_metadata,
				    bool big, unsigned int delay_ms)
{
	int p[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		_exit(killed_child(p[1], big));
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	close(p[0]);
	if (!big)
		EXPECT_TRUE(pt_wait_mrs(1025, 2048, PT_TIMEOUT_MS));
	usleep(delay_ms * 1000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
}

TEST_F_TIMEOUT(nm, process_killed_with_registrations, 120)
{
	unsigned int i;

	kill_with_registrations(_metadata, false, 0);
	EXPECT_PINNED(0, 0);
	for (i = 0; i < 4; i++) {
		kill_with_registrations(_metadata, true, 20 + 70 * i);
		EXPECT_PINNED(0, 0);
	}
}

/*
 * Thousands of registrations in one window: distinct handles, each found
 * again by deregistration in any order; then the per-window limit.
 */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

TEST_F_TIMEOUT(nm, thousands_of_registrations, 300)
{
	const unsigned int n = 4096;
	uint8_t *big = map_anon(n * PAGE, PROT_READ | PROT_WRITE);
	uint32_t *h = calloc(MR_PER_WINDOW + 1, sizeof(*h));
	uint32_t *sorted = calloc(n, sizeof(*h));
	uint64_t t0, t1, t2;
	unsigned int i, count;

	ASSERT_NE(MAP_FAILED, big);
	ASSERT_TRUE(h && sorted);
	t0 = pt_now_ms();
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, mr_reg(self->wfd, big + i * PAGE + i % 64,
				    PAGE - i % 64, i & PERCS_ACCESS_ALL, &h[i]))
			TH_LOG("registration %u", i);
	}
	t1 = pt_now_ms();
	memcpy(sorted, h, n * sizeof(*h));
	qsort(sorted, n, sizeof(*h), cmp_u32);
	for (i = 1; i < n; i++) {
		ASSERT_NE(sorted[i - 1], sorted[i]);
	}
	EXPECT_PINNED(n, n);
	/* Deregister in a scrambled order (odd stride), twice each. */
	for (i = 0; i < n; i++) {
		unsigned int j = (i * 2654435761u) % n;

		ASSERT_EQ(0, mr_dereg(self->wfd, h[j])) TH_LOG("handle %u", j);
		ASSERT_EQ(-ENOENT, mr_dereg(self->wfd, h[j]));
	}
	t2 = pt_now_ms();
	TH_LOG("%u registrations: %llu ms, deregistrations: %llu ms", n,
	       (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
	EXPECT_PINNED(0, 0);

	/* The limit: MR_PER_WINDOW, then -ENOSPC with nothing pinned. */
	for (count = 0; count <= MR_PER_WINDOW; count++)
		if (mr_reg(self->wfd, big, PAGE, 0, &h[count]))
			break;
	EXPECT_EQ(MR_PER_WINDOW, count);
	EXPECT_EQ(-ENOSPC, mr_reg(self->wfd, big, PAGE, 0, &h[count]));
	EXPECT_PINNED(MR_PER_WINDOW, MR_PER_WINDOW);
	EXPECT_EQ(0, mr_dereg(self->wfd, h[100]));
	EXPECT_EQ(0, mr_reg(self->wfd, big, PAGE, 0, &h[100]));
	EXPECT_EQ(-ENOSPC, mr_reg(self->wfd, big, 2 * PAGE, 0, &h[count]));
	EXPECT_PINNED(MR_PER_WINDOW, MR_PER_WINDOW);
	/* Another window has its own table. */
	{
		int w2 = reserve(self->hfd);
		uint32_t h2;

		ASSERT_LE(0, w2);
		EXPECT_EQ(0, mr_reg(w2, big, PAGE, 0, &h2));
		close(w2);
	}
	t0 = pt_now_ms();
	close(self->wfd);
	self->wfd = -1;
	EXPECT_PINNED(0, 0);
	TH_LOG("close with %u registrations: %llu ms", MR_PER_WINDOW,
	       (unsigned long long)(pt_now_ms() - t0));
	free(h);
	free(sorted);
	munmap(big, n * PAGE);
}

/* Threads registering and deregistering on one window at once. */
struct churn {
	int wfd;
	uint8_t *buf;
	unsigned int idx, iters;
	int bad;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	unsigned int i;
	uint32_t h[4];

	for (i = 0; i < c->iters; i++) {
		unsigned int k = i % 4;

		if (i >= 4 && mr_dereg(c->wfd, h[k]))
			c->bad++;
		if (mr_reg(c->wfd, c->buf + (c->idx * 4 + k) * PAGE,
			   PAGE + k, k, &h[k]))
			c->bad++;
		/* Handles never given out: from far generations. */
		if (mr_dereg(c->wfd, 0xfff00000u | (i % 64 + 1)) != -ENOENT)
			c->bad++;
	}
	for (i = 0; i < 4 && i < c->iters; i++)
		if (mr_dereg(c->wfd, h[i]))
			c->bad++;
	return NULL;
}

TEST_F_TIMEOUT(nm, threads_churn_one_window, 120)
{
	struct churn c[4];
	pthread_t t[4];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		c[i] = (struct churn){ .wfd = self->wfd, .buf = self->buf,
				       .idx = i, .iters = pt_scale(2000) };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_thread, &c[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, c[i].bad) TH_LOG("thread %u", i);
	}
	EXPECT_PINNED(0, 0);
}

/*
 * The translation cache (the last registrations a window translated):
 * atomics from window A to window B, the HFI's lookups cached, find
 * nothing once B deregisters the handle, also when a new registration
 * takes the same slot; while a thread of ours re-registers one page over
 * and over, every fetch-add applies once or fails with -ENOENT, and the
 * page counts exactly the ones that applied.
 */
struct rereg {
	struct percs_window *w;
	uint64_t *page;
	uint32_t handle;	/* the live one; 0 while between */
	unsigned int iters;
	int bad;
};

static void *rereg_thread(void *arg)
{
	struct rereg *r = arg;
	unsigned int i;
	uint32_t h;

	for (i = 0; i < r->iters; i++) {
		if (percs_mr_reg(r->w, r->page, PAGE,
				 PERCS_ACCESS_REMOTE_ATOMIC, &h)) {
			r->bad++;
			break;
		}
		__atomic_store_n(&r->handle, h, __ATOMIC_RELEASE);
		pt_pause_us(i % 7 * 10);
		__atomic_store_n(&r->handle, 0, __ATOMIC_RELEASE);
		if (percs_mr_dereg(r->w, h))
			r->bad++;
	}
	__atomic_store_n(&r->iters, 0, __ATOMIC_RELEASE);
	return NULL;
}

TEST_F_TIMEOUT(nm, translation_cache_follows_deregistration, 120)
{
	uint64_t *p1 = (uint64_t *)self->buf, *p2 = p1 + PAGE / 8;
	uint64_t *p3 = p2 + PAGE / 8, got = 7;
	uint32_t key = pt_new_key(), h1, h2;
	unsigned long applied = 0, refused = 0;
	struct percs_window *a, *b;
	struct percs_hfi *ha, *hb;
	struct percs_rmr r;
	struct rereg rr;
	pthread_t t;
	int ret;

	ASSERT_EQ(0, pt_hfi_open(0, 1, &ha));
	ASSERT_EQ(0, pt_hfi_open(1, 0, &hb));
	ASSERT_EQ(0, pt_reserve(ha, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &a));
	ASSERT_EQ(0, pt_reserve(hb, 0, FIFO_4K, FIFO_4K, key,
				PERCS_WINDOW_ANY, &b));
	memset(self->buf, 0, 3 * PAGE);
	ASSERT_EQ(0, percs_mr_reg(b, p1, PAGE, PERCS_ACCESS_REMOTE_ATOMIC,
				  &h1));
	r = (struct percs_rmr){ .win = percs_window_addr(b), .handle = h1,
				.base = (uintptr_t)p1, .length = PAGE };
	for (uint64_t i = 0; i < 3; i++) {
		ASSERT_EQ(0, percs_atomic_fetch_add64(a, &r, 0, 1, &got));
		EXPECT_EQ(i, got);
	}
	ASSERT_EQ(0, percs_mr_dereg(b, h1));
	EXPECT_EQ(-ENOENT, percs_atomic_fetch_add64(a, &r, 0, 1, &got));
	/* The lowest free slot again, under another generation. */
	ASSERT_EQ(0, percs_mr_reg(b, p2, PAGE, PERCS_ACCESS_REMOTE_ATOMIC,
				  &h2));
	EXPECT_EQ(h1 & 0xffff, h2 & 0xffff);
	EXPECT_NE(h1, h2);
	EXPECT_EQ(-ENOENT, percs_atomic_fetch_add64(a, &r, 0, 1, &got));
	r.handle = h2;
	r.base = (uintptr_t)p2;
	EXPECT_EQ(0, percs_atomic_fetch_add64(a, &r, 0, 1, &got));
	EXPECT_EQ(0, got);
	EXPECT_EQ(3, p1[0]);
	EXPECT_EQ(1, p2[0]);
	ASSERT_EQ(0, percs_mr_dereg(b, h2));

	rr = (struct rereg){ .w = b, .page = p3, .iters = pt_scale(1500) };
	ASSERT_EQ(0, pthread_create(&t, NULL, rereg_thread, &rr));
	r.base = (uintptr_t)p3;
	while (__atomic_load_n(&rr.iters, __ATOMIC_ACQUIRE)) {
		r.handle = __atomic_load_n(&rr.handle, __ATOMIC_ACQUIRE);
		if (!r.handle)
			continue;
		ret = percs_atomic_fetch_add64(a, &r, 0, 1, &got);
		if (!ret) {
			EXPECT_EQ(applied++, got);
		} else if (ret == -ENOENT) {
			refused++;
		} else {
			ASSERT_EQ(0, ret);
		}
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, rr.bad);
	EXPECT_EQ(applied, p3[0]);
	EXPECT_LT(0, applied);
	TH_LOG("%lu applied, %lu refused as deregistered", applied, refused);
	percs_window_release(a);
	percs_window_release(b);
	percs_hfi_close(ha);
	percs_hfi_close(hb);
	EXPECT_PINNED(0, 0);
}

TEST_HARNESS_MAIN
