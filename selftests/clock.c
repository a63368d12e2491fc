// SPDX-License-Identifier: GPL-2.0
/*
 * clock: the global clock (PERCS_REGION_CLOCK, percs_clock_ns()).
 *
 * One read-only page for the whole module, mapped by every window: windows
 * on different hubs and HFIs read one clock, it never goes backwards (read
 * alternately through several windows, handed between processes on
 * different CPUs, and while the kernel rewrites the page thousands of times
 * or switches between TSC and CLOCK_MONOTONIC mode), it advances at the
 * rate of CLOCK_MONOTONIC, and reading it makes no system call: a seccomp
 * filter that traps every system call counts none over 100,000 reads (and
 * counts the control's getppid() calls).  Write access is refused.
 *
 * The knobs: /sys/module/percs/parameters/clock_recal_ms (0 stops the
 * periodic recalibration so the page holds still), debugfs
 * clock_force_fallback (1: CLOCK_MONOTONIC mode) and clock_recalibrate
 * (write: rewrite the page now).  The runner reloads the module after this
 * program, so a failed test leaves no knob changed for the next.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define RECAL_PARAM	"/sys/module/percs/parameters/clock_recal_ms"
#define FALLBACK_KNOB	"/sys/kernel/debug/percs/clock_force_fallback"
#define REWRITE_KNOB	"/sys/kernel/debug/percs/clock_recalibrate"
#define NWIN		4
/* Rate tolerance against CLOCK_MONOTONIC, parts per million. */
#define RATE_PPM	1000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int write_knob(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A consistent copy of the page (the reader's protocol). */
static void page_copy(const volatile struct percs_clock *p,
		      struct percs_clock *out)
{
	uint32_t seq;

	do {
		seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		memcpy(out, (const void *)p, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || __atomic_load_n(&p->seq, __ATOMIC_RELAXED) != seq);
}

static uint64_t clock_of(struct percs_window *w)
{
	uint64_t ns = 0;
	int ret = percs_clock_ns(w, &ns);

	if (ret) {
		fprintf(stderr, "percs_clock_ns: %s\n", strerror(-ret));
		abort();
	}
	return ns;
}

/* Windows on distinct hubs and HFIs, both supernodes when there are two. */
struct wins {
	struct percs_hfi *hfi[NWIN];
	struct percs_window *w[NWIN];
	struct percs_hfi_info info;
	int n;
};

static int wins_open(struct wins *ws)
{
	unsigned int hubs, hub[NWIN], unit[NWIN];
	uint32_t key = pt_new_key();
	int ret, i;

	memset(ws, 0, sizeof(*ws));
	ret = pt_hfi_open(0, 0, &ws->hfi[0]);
	if (ret)
		return ret;
	ret = percs_hfi_info(ws->hfi[0], &ws->info);
	if (ret)
		return ret;
	hubs = ws->info.nr_hubs;
	hub[0] = 0, unit[0] = 0;
	hub[1] = 1 % hubs, unit[1] = 1;
	hub[2] = hubs / 2, unit[2] = 0;	/* the other supernode (default) */
	hub[3] = hubs - 1, unit[3] = 1;
	ws->n = NWIN;
	for (i = 0; i < NWIN; i++) {
		if (i) {
			ret = pt_hfi_open(hub[i], unit[i], &ws->hfi[i]);
			if (ret)
				return ret;
		}
		ret = pt_reserve(ws->hfi[i], 0, PERCS_FIFO_MIN_SIZE,
				 PERCS_FIFO_MIN_SIZE, key, PERCS_WINDOW_ANY,
				 &ws->w[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void wins_close(struct wins *ws)
{
	int i;

	for (i = 0; i < NWIN; i++) {
		percs_window_release(ws->w[i]);
		percs_hfi_close(ws->hfi[i]);
	}
	memset(ws, 0, sizeof(*ws));
}

/* What every test starts from: four windows, the knobs to restore. */
struct clk_env {
	struct wins ws;
	long recal_ms;
};

static void env_setup(struct __test_metadata *_metadata, struct clk_env *e)
{
	e->recal_ms = -1;
	ASSERT_EQ(0, wins_open(&e->ws));
	e->recal_ms = pt_sysfs_read_long(RECAL_PARAM);
	ASSERT_LE(0, e->recal_ms);
	ASSERT_EQ(0, access(FALLBACK_KNOB, W_OK));
}

static void env_teardown(struct clk_env *e)
{
	char buf[32];

	write_knob(FALLBACK_KNOB, "0");
	if (e->recal_ms >= 0) {
		snprintf(buf, sizeof(buf), "%ld", e->recal_ms);
		write_knob(RECAL_PARAM, buf);
	}
	wins_close(&e->ws);
}

FIXTURE(clk) {
	struct clk_env e;
};

FIXTURE_SETUP(clk)
{
	self->e.recal_ms = -1;
	PT_REQUIRE_DEVICE();
	env_setup(_metadata, &self->e);
}

FIXTURE_TEARDOWN(clk)
{
	env_teardown(&self->e);
}

/*
 * The reserve answer lists the clock region: valid, read-only, one page.
 * Every window of every HFI maps the same page: with the periodic
 * recalibration stopped, a forced rewrite shows in all of them at once,
 * and they are byte for byte the same.  The page is in TSC mode on this
 * VM (the kernel's clocksource is the TSC; tsc=reliable).
 */
TEST_F(clk, one_page_for_every_window)
{
	const volatile struct percs_clock *p[NWIN];
	struct percs_window_reserve req;
	struct percs_clock a, b;
	long page = sysconf(_SC_PAGESIZE);
	int hfd, wfd, i;

	hfd = pt_hfi_open_fd(1, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, 4096, 4096, pt_new_key(),
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(PERCS_REGION_F_VALID, req.regions[PERCS_REGION_CLOCK].flags);
	EXPECT_EQ(page, req.regions[PERCS_REGION_CLOCK].length);
	EXPECT_EQ(0, req.regions[PERCS_REGION_CLOCK].offset % page);
	close(wfd);
	close(hfd);

	ASSERT_EQ(0, write_knob(RECAL_PARAM, "0"));
	for (i = 0; i < NWIN; i++) {
		p[i] = percs_window_clock(self->e.ws.w[i]);
		ASSERT_NE(NULL, p[i]);
	}
	page_copy(p[0], &a);
	EXPECT_EQ(PERCS_CLOCK_VERSION, a.version);
	EXPECT_EQ(PERCS_CLOCK_F_TSC, a.flags)
		TH_LOG("the VM's clocksource should be the TSC");
	EXPECT_GE(32, a.shift);
	EXPECT_NE(0, a.mult);
	EXPECT_NE(0, a.tsc_khz);
	ASSERT_EQ(0, write_knob(REWRITE_KNOB, "1"));
	page_copy(p[0], &b);
	EXPECT_EQ(a.updates + 1, b.updates);
	EXPECT_EQ(a.seq + 2, b.seq);
	for (i = 1; i < NWIN; i++) {
		page_copy(p[i], &a);
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG("window %d", i);
		EXPECT_EQ(0, memcmp((const void *)p[i], (const void *)p[0],
				    page));
	}
}

/*
 * It runs at the rate of CLOCK_MONOTONIC: over 200 ms, with each end
 * bracketed by CLOCK_MONOTONIC reads, the clock advances by the monotonic
 * time within RATE_PPM (plus the brackets); and it stays close to
 * CLOCK_MONOTONIC - mono_offset.  In both modes.
 */
static void rate_check(struct __test_metadata *_metadata,
		       struct percs_window *w, const char *mode)
{
	const volatile struct percs_clock *p = percs_window_clock(w);
	uint64_t m0a, m0b, m1a, m1b, c0, c1, dc, lo, hi;
	struct percs_clock k;
	int64_t off;

	m0a = mono_ns();
	c0 = clock_of(w);
	m0b = mono_ns();
	usleep(200000);
	m1a = mono_ns();
	c1 = clock_of(w);
	m1b = mono_ns();
	dc = c1 - c0;
	lo = (m1a - m0b) - (m1a - m0b) / 1000000 * RATE_PPM;
	hi = (m1b - m0a) + (m1b - m0a) / 1000000 * RATE_PPM;
	TH_LOG("%s: clock +%llu ns, CLOCK_MONOTONIC +%llu..%llu ns", mode,
	       (unsigned long long)dc, (unsigned long long)(m1a - m0b),
	       (unsigned long long)(m1b - m0a));
	EXPECT_LE(lo, dc);
	EXPECT_GE(hi, dc);
	page_copy(p, &k);
	off = (int64_t)(c1 - (m1a - k.mono_offset));
	EXPECT_GE(off, -50000) TH_LOG("%s: clock - (mono - offset) = %lld",
				     mode, (long long)off);
	EXPECT_LE(off, (int64_t)(m1b - m1a) + 50000);
}

TEST_F_TIMEOUT(clk, rate_of_clock_monotonic, 60)
{
	const volatile struct percs_clock *p = percs_window_clock(self->e.ws.w[0]);
	struct percs_clock k;

	page_copy(p, &k);
	ASSERT_TRUE(k.flags & PERCS_CLOCK_F_TSC);
	rate_check(_metadata, self->e.ws.w[0], "TSC");
	ASSERT_EQ(0, write_knob(FALLBACK_KNOB, "1"));
	page_copy(p, &k);
	ASSERT_FALSE(k.flags & PERCS_CLOCK_F_TSC);
	rate_check(_metadata, self->e.ws.w[1], "CLOCK_MONOTONIC");
}

/*
 * The mode switches: TSC -> CLOCK_MONOTONIC -> TSC, each a page rewrite
 * that continues the clock: never backwards across them; in fallback mode
 * the clock is exactly CLOCK_MONOTONIC - mono_offset.
 */
TEST_F(clk, fallback_and_back_continuous)
{
	const volatile struct percs_clock *p = percs_window_clock(self->e.ws.w[0]);
	uint64_t before, after, m0, m1, c;
	struct percs_clock k;
	int round;

	for (round = 0; round < 20; round++) {
		before = clock_of(self->e.ws.w[round % NWIN]);
		ASSERT_EQ(0, write_knob(FALLBACK_KNOB, "1"));
		after = clock_of(self->e.ws.w[(round + 1) % NWIN]);
		EXPECT_LE(before, after);
		page_copy(p, &k);
		EXPECT_EQ(0, k.flags & PERCS_CLOCK_F_TSC);
		m0 = mono_ns();
		c = clock_of(self->e.ws.w[round % NWIN]);
		m1 = mono_ns();
		EXPECT_LE(m0 - k.mono_offset, c);
		EXPECT_GE(m1 - k.mono_offset, c);

		before = clock_of(self->e.ws.w[(round + 2) % NWIN]);
		ASSERT_EQ(0, write_knob(FALLBACK_KNOB, "0"));
		after = clock_of(self->e.ws.w[(round + 3) % NWIN]);
		EXPECT_LE(before, after);
		page_copy(p, &k);
		EXPECT_EQ(PERCS_CLOCK_F_TSC, k.flags & PERCS_CLOCK_F_TSC);
	}
}

/* ---- across CPUs, while the kernel rewrites the page -------------------- */

struct pingpong {
	uint64_t last;		/* the latest value read, by either side */
	uint32_t turn;		/* whose read is next: 0 or 1 */
	uint32_t stop;
	unsigned long back[2], reads[2];
};

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * One side of the ping-pong: on its turn, read the clock through its own
 * window, check it is not below what the other side read last, publish
 * and pass the turn.
 */
static int pingpong_side(struct pingpong *pp, int me, struct percs_window *w,
			 unsigned long rounds)
{
	unsigned long i;

	pin_cpu(me);
	for (i = 0; i < rounds; i++) {
		uint64_t now, last;

		while (__atomic_load_n(&pp->turn, __ATOMIC_ACQUIRE) != (uint32_t)me)
			if (__atomic_load_n(&pp->stop, __ATOMIC_RELAXED))
				return 1;
		last = __atomic_load_n(&pp->last, __ATOMIC_RELAXED);
		now = clock_of(w);
		if (now < last)
			pp->back[me]++;
		pp->reads[me]++;
		__atomic_store_n(&pp->last, now, __ATOMIC_RELAXED);
		__atomic_store_n(&pp->turn, !me, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * Rewrite the page as fast as possible (a new base and scale each time);
 * with @switch_modes, every 64th write switches to CLOCK_MONOTONIC mode or
 * back instead.  Runs on CPU @cpu until *@stop.
 */
static void rewriter(volatile uint32_t *stop, bool switch_modes, int cpu)
{
	int rw = open(REWRITE_KNOB, O_WRONLY | O_CLOEXEC);
	int fb = open(FALLBACK_KNOB, O_WRONLY | O_CLOEXEC);
	unsigned long i;

	pin_cpu(cpu);
	if (rw < 0 || fb < 0)
		_exit(2);
	for (i = 0; !__atomic_load_n(stop, __ATOMIC_RELAXED); i++) {
		/* (debugfs attribute files are not seekable: write(2)) */
		if (switch_modes && i % 64 == 63) {
			if (write(fb, i % 128 == 127 ? "0" : "1", 1) != 1)
				_exit(3);
		} else if (write(rw, "1", 1) != 1) {
			_exit(4);
		}
	}
	if (write(fb, "0", 1) != 1)
		_exit(5);
	_exit(0);
}

FIXTURE(rw) {
	struct clk_env e;
};

FIXTURE_VARIANT(rw) {
	bool rewrites;
	bool switch_modes;
};

FIXTURE_VARIANT_ADD(rw, quiet) {
	.rewrites = false,
};
FIXTURE_VARIANT_ADD(rw, rewrites) {
	.rewrites = true,
};
FIXTURE_VARIANT_ADD(rw, rewrites_and_mode_switches) {
	.rewrites = true, .switch_modes = true,
};

FIXTURE_SETUP(rw)
{
	self->e.recal_ms = -1;
	PT_REQUIRE_DEVICE();
	env_setup(_metadata, &self->e);
}

FIXTURE_TEARDOWN(rw)
{
	env_teardown(&self->e);
}

/*
 * Read alternately through windows on four HFIs of different hubs (and
 * supernodes), back to back on one CPU while (variants) another CPU
 * rewrites the page: never backwards, and moving.  A read every ~100 ns
 * catches a rewrite that steps the clock back by even a few hundred ns.
 */
TEST_F_TIMEOUT(rw, alternate_windows_never_backwards, 120)
{
	unsigned long n = pt_scale(1000000), reads, i, back = 0, same = 0;
	uint64_t first, prev, now;
	struct percs_clock k0, k1;
	volatile uint32_t *stop;
	pid_t kid = -1;
	int status;

	if (variant->rewrites && sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	*stop = 0;
	page_copy(percs_window_clock(self->e.ws.w[0]), &k0);
	if (variant->rewrites) {
		fflush(stdout);
		fflush(stderr);
		kid = fork();
		ASSERT_LE(0, kid);
		if (kid == 0)
			rewriter(stop, variant->switch_modes, 1);
		/* Let it start. */
		do
			page_copy(percs_window_clock(self->e.ws.w[0]), &k1);
		while (k1.updates == k0.updates);
	}
	pin_cpu(0);
	first = prev = clock_of(self->e.ws.w[0]);
	/*
	 * With a rewriter, read until it has rewritten the page more than
	 * 100 times: on a debug kernel the scaled count of reads can be
	 * over before that (in at most 20 x @n reads).
	 */
	for (i = 1, reads = n; i < reads; i++) {
		now = clock_of(self->e.ws.w[i % NWIN]);
		if (now < prev) {
			if (!back)
				TH_LOG("read %lu (window %lu): %llu after %llu",
				       i, i % NWIN, (unsigned long long)now,
				       (unsigned long long)prev);
			back++;
		}
		same += now == prev;
		prev = now;
		if (i + 1 == reads && variant->rewrites && reads < 20 * n) {
			page_copy(percs_window_clock(self->e.ws.w[0]), &k1);
			if (k1.updates - k0.updates <= 100)
				reads += n;
		}
	}
	n = reads;
	*stop = 1;
	if (kid > 0) {
		ASSERT_EQ(kid, waitpid(kid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("rewriter status %#x", status);
	}
	page_copy(percs_window_clock(self->e.ws.w[0]), &k1);
	TH_LOG("%lu reads in %llu ns, %llu page rewrites meanwhile", n,
	       (unsigned long long)(prev - first),
	       (unsigned long long)(k1.updates - k0.updates));
	EXPECT_EQ(0, back);
	EXPECT_GT(prev, first);
	/* Nanoseconds: consecutive reads (each well over 1 ns) differ. */
	EXPECT_LT(same, n / 100);
	if (variant->rewrites)
		EXPECT_LT(100, k1.updates - k0.updates);
	munmap((void *)stop, sizeof(*stop));
}

/*
 * Two processes on two CPUs, each with a window on its own hub, hand the
 * clock back and forth: every read is at least the other side's last one.
 * Variants: the page left alone; rewritten as fast as debugfs allows (a
 * new base and scale each time) by a third process; and the same with a
 * switch to CLOCK_MONOTONIC mode and back every 128 rewrites.
 */
TEST_F_TIMEOUT(rw, handoff_never_backwards, 180)
{
	unsigned long rounds = pt_scale(20000);
	struct percs_clock k0, k1;
	struct pingpong *pp;
	pid_t kid[3] = { -1, -1, -1 };
	int i, status, failed = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	pp = mmap(NULL, sizeof(*pp), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pp);
	memset(pp, 0, sizeof(*pp));
	page_copy(percs_window_clock(self->e.ws.w[0]), &k0);
	fflush(stdout);
	fflush(stderr);
	if (variant->rewrites) {
		kid[2] = fork();
		ASSERT_LE(0, kid[2]);
		if (kid[2] == 0)
			rewriter(&pp->stop, variant->switch_modes, 1);
	}
	for (i = 0; i < 2; i++) {
		kid[i] = fork();
		ASSERT_LE(0, kid[i]);
		if (kid[i] == 0)
			_exit(pingpong_side(pp, i, self->e.ws.w[i * 2], rounds));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(kid[i], waitpid(kid[i], &status, 0));
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	__atomic_store_n(&pp->stop, 1, __ATOMIC_RELAXED);
	if (kid[2] > 0) {
		ASSERT_EQ(kid[2], waitpid(kid[2], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("rewriter status %#x", status);
	}
	page_copy(percs_window_clock(self->e.ws.w[0]), &k1);
	TH_LOG("%lu + %lu reads, %llu page rewrites meanwhile",
	       pp->reads[0], pp->reads[1],
	       (unsigned long long)(k1.updates - k0.updates));
	EXPECT_EQ(0, failed);
	EXPECT_EQ(rounds, pp->reads[0]);
	EXPECT_EQ(rounds, pp->reads[1]);
	EXPECT_EQ(0, pp->back[0]);
	EXPECT_EQ(0, pp->back[1]);
	if (variant->rewrites) {
		/* Rewrites really raced the reads. */
		EXPECT_LT(100, k1.updates - k0.updates);
	}
	munmap(pp, sizeof(*pp));
}

/* ---- no system call ------------------------------------------------------ */

struct sys_count {
	unsigned long traps;	/* system calls the filter trapped */
	unsigned long reads;
	unsigned long back;
	int err;
};

static struct sys_count *trap_counter;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *ctx = uc;

	trap_counter->traps++;
#ifdef __x86_64__
	ctx->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
	(void)ctx;
#endif
}

/*
 * Trap every system call but exit_group and rt_sigreturn (the SIGSYS
 * handler's return); the handler counts it and makes it fail with ENOSYS.
 */
static int trap_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]), .filter = f,
	};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

/*
 * In a child: trap system calls, then read the clock @n times (and, for
 * the control, call getppid() each time too).
 */
static pid_t count_syscalls(struct sys_count *sc, struct percs_window *w,
			    unsigned long n, bool control)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	trap_counter = sc;
	sc->err = trap_syscalls();
	if (!sc->err) {
		uint64_t prev = 0, now;
		unsigned long i;

		for (i = 0; i < n; i++) {
			int ret = percs_clock_ns(w, &now);

			if (ret) {
				sc->err = ret;
				break;
			}
			if (now < prev)
				sc->back++;
			prev = now;
			sc->reads++;
			if (control)
				syscall(SYS_getppid);
		}
	}
	syscall(SYS_exit_group, 0);
	return 0;
}

/* Does this kernel have seccomp (CONFIG_SECCOMP: a "Seccomp:" line)? */
static bool have_seccomp(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "Seccomp:", 8);
	fclose(f);
	return found;
}

TEST_F_TIMEOUT(clk, no_system_call, 60)
{
	unsigned long n = pt_scale(100000);
	struct sys_count *sc;
	int status, i;

	/* The debug kernels are built without it; read_cost still runs. */
	if (!have_seccomp())
		SKIP(return, "kernel without CONFIG_SECCOMP");

	sc = mmap(NULL, 2 * sizeof(*sc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sc);
	memset(sc, 0, 2 * sizeof(*sc));
	for (i = 0; i < 2; i++) {
		pid_t pid = count_syscalls(&sc[i], self->e.ws.w[i], n, i == 1);

		ASSERT_LE(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("child %d: status %#x", i, status);
		EXPECT_EQ(0, sc[i].err);
		EXPECT_EQ(n, sc[i].reads);
		EXPECT_EQ(0, sc[i].back);
	}
	/* The clock alone: none.  The control: one getppid() per read. */
	EXPECT_EQ(0, sc[0].traps);
	EXPECT_EQ(n, sc[1].traps);
	munmap(sc, 2 * sizeof(*sc));
}

/* ---- cost ------------------------------------------------------------------ */

static uint64_t per_call_ns(int what, struct percs_window *w, unsigned long n)
{
	uint64_t t0 = mono_ns(), ns;
	struct timespec ts;
	unsigned long i;

	for (i = 0; i < n; i++) {
		switch (what) {
		case 0:
			percs_clock_ns(w, &ns);
			break;
		case 1:
			clock_gettime(CLOCK_MONOTONIC, &ts);
			break;
		default:
			syscall(SYS_getppid);
			break;
		}
	}
	return (mono_ns() - t0) / n;
}

/*
 * What a read costs next to clock_gettime() (vDSO) and a system call
 * (getppid): the best of five runs each, printed; the clock must be
 * cheaper than the system call.
 */
TEST_F_TIMEOUT(clk, read_cost, 120)
{
	unsigned long n = pt_scale(200000);
	uint64_t best[3] = { ~0ull, ~0ull, ~0ull }, t;
	int run, what;

	for (run = 0; run < 5; run++)
		for (what = 0; what < 3; what++) {
			t = per_call_ns(what, self->e.ws.w[0], n);
			if (t < best[what])
				best[what] = t;
		}
	TH_LOG("percs_clock_ns %llu ns, clock_gettime(CLOCK_MONOTONIC) %llu ns, getppid %llu ns",
	       (unsigned long long)best[0], (unsigned long long)best[1],
	       (unsigned long long)best[2]);
	EXPECT_LT(best[0], best[2]);
}

/* ---- read-only, lifetime ------------------------------------------------- */

/*
 * The page cannot be written: mmap with PROT_WRITE is EPERM, mprotect to
 * writable EACCES, a store through the library's mapping SIGSEGV.
 */
TEST_F(clk, write_refused)
{
	const volatile struct percs_clock *p = percs_window_clock(self->e.ws.w[0]);
	struct percs_window_reserve req;
	long page = sysconf(_SC_PAGESIZE);
	int hfd, wfd, status;
	void *m;
	pid_t pid;

	hfd = pt_hfi_open_fd(0, 1);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, 4096, 4096, pt_new_key(),
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, wfd,
		 (off_t)req.regions[PERCS_REGION_CLOCK].offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	m = mmap(NULL, page, PROT_READ, MAP_SHARED, wfd,
		 (off_t)req.regions[PERCS_REGION_CLOCK].offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-1, mprotect(m, page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* The same page as the library's window on another hub. */
	EXPECT_EQ(((const struct percs_clock *)m)->version, p->version);
	EXPECT_EQ(((const struct percs_clock *)m)->tsc_khz, p->tsc_khz);
	munmap(m, page);
	close(wfd);
	close(hfd);

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		((volatile struct percs_clock *)p)->reserved[0] = 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("store into the clock page: status %#x", status);
	EXPECT_EQ(0, p->reserved[0]);
}

/*
 * A mapping of the clock alone holds its window, like any region's: the
 * fd closed, the clock still reads and runs; munmap releases the window.
 */
TEST_F(clk, clock_mapping_holds_window)
{
	struct percs_window_reserve req;
	long page = sysconf(_SC_PAGESIZE);
	const volatile struct percs_clock *m;
	struct pt_live live0, live;
	struct percs_clock a, b;
	int hfd, wfd;

	ASSERT_EQ(0, pt_read_live(&live0));
	hfd = pt_hfi_open_fd(2, 0);
	ASSERT_LE(0, hfd);
	wfd = pt_reserve_raw(hfd, 0, 4096, 4096, pt_new_key(),
			     PERCS_WINDOW_ANY, &req);
	ASSERT_LE(0, wfd);
	m = mmap(NULL, page, PROT_READ, MAP_SHARED, wfd,
		 (off_t)req.regions[PERCS_REGION_CLOCK].offset);
	ASSERT_NE(MAP_FAILED, m);
	close(wfd);
	close(hfd);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(live0.windows + 1, live.windows);
	EXPECT_EQ(live0.mappings + 1, live.mappings);
	page_copy(m, &a);
	ASSERT_EQ(0, write_knob(REWRITE_KNOB, "1"));
	page_copy(m, &b);
	EXPECT_LT(a.updates, b.updates);
	munmap((void *)m, page);
	ASSERT_EQ(0, pt_read_live(&live));
	EXPECT_EQ(live0.windows, live.windows);
	EXPECT_EQ(live0.mappings, live.mappings);
}

/* After everything: no window, no mapping, no key left. */
TEST(zz_nothing_left)
{
	PT_REQUIRE_DEVICE();
	ASSERT_LIVE_ZERO();
}

TEST_HARNESS_MAIN
