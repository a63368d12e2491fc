// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench limits: what this machine (VM) can do at best, measured in
 * the same run as the percs figures so that their ratios mean something.
 *
 *  - cache-line ping-pong: two processes pinned like the latency pairs,
 *    two cache lines of a MAP_SHARED anonymous page, each side spinning on
 *    the other's sequence number; half the round trip
 *  - getppid(): one system call round trip (entry, trivial work, exit)
 *  - PERCS_IOC_HFI_INFO: a trivial ioctl on the percs device (copy in,
 *    fill, copy out) and PERCS_IOC_KICK on a kick-mode window with nothing
 *    to send; for comparison an ioctl that /dev/null refuses (ENOTTY): the
 *    system call and VFS ioctl path alone
 *  - fdatasync() on a kick-mode window with nothing to send: libpercs's
 *    doorbell for sends and immediate sends (the kernel runs the same
 *    engine pass as PERCS_IOC_KICK(SEND|IMM), without the ioctl path's LSM
 *    hooks), so the fixed cost of every kick-mode send
 *  - memcpy: one thread, 2 KiB chunks cycling through 8 MiB (memory) and
 *    through 64 KiB (cache-resident, the size of the FIFOs the data path
 *    copies between); the cache-resident figure is the limit, because the
 *    FIFO data path copies between two 64 KiB rings
 *  - rep movsb through 64 KiB: how fast the copy instruction the kernel's
 *    memcpy() uses runs here (a diagnostic for TCG, not a limit)
 *  - hand-off: a byte through a pipe wakes a peer process on the same CPU,
 *    which echoes it; half the round trip is one wake-up and one context
 *    switch, what every rank a collective waits for costs when there are
 *    more processes than CPUs (percs-bench coll); the same between two
 *    threads (no page-table switch) as a diagnostic
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define CHUNK 2048

/* Two lines, 128 bytes apart so adjacent-line prefetch cannot pair them. */
struct cl_shared {
	_Alignas(128) uint64_t ping;
	_Alignas(128) uint64_t pong;
};

struct cl_arg {
	struct cl_shared *sh;
	unsigned int iters;
	unsigned int warmup;
	double budget_s;
	uint64_t *samples;
	unsigned int nsamples;
};

static int cl_b(struct endpoint *ep, void *varg)
{
	struct cl_arg *a = varg;
	uint64_t last = 0, v;
	struct spin s;

	pair_set_ready(ep->ctl);
	spin_init(&s);
	for (;;) {
		v = __atomic_load_n(&a->sh->ping, __ATOMIC_ACQUIRE);
		if (v != last) {
			__atomic_store_n(&a->sh->pong, v, __ATOMIC_RELEASE);
			last = v;
			spin_init(&s);
			continue;
		}
		if (__atomic_load_n(&ep->ctl->stop, __ATOMIC_ACQUIRE))
			return 0;
		if (spin_tick(&s))
			return ep_fail(ep, -ETIMEDOUT, "cache-line side B");
	}
}

static int cl_a(struct endpoint *ep, void *varg)
{
	struct cl_arg *a = varg;
	uint64_t start, end, warm_end;
	unsigned int n = 0;
	int ret;

	ret = pair_wait_ready(ep->ctl);
	if (ret)
		return ep_fail(ep, ret, "cache-line side B did not start");
	start = now_ns();
	warm_end = start + (uint64_t)(a->budget_s * 0.2e9);
	end = start + (uint64_t)(a->budget_s * 1e9);
	for (uint64_t i = 1; n < a->iters; i++) {
		bool warm = i <= a->warmup;
		uint64_t t0, t1;
		struct spin s;

		t0 = now_ns();
		if (warm && t0 > warm_end)
			warm = false;
		if (!warm && n && t0 > end)
			break;
		__atomic_store_n(&a->sh->ping, i, __ATOMIC_RELEASE);
		spin_init(&s);
		while (__atomic_load_n(&a->sh->pong, __ATOMIC_ACQUIRE) != i)
			if (spin_tick(&s))
				return ep_fail(ep, -ETIMEDOUT,
					       "cache-line: no answer");
		t1 = now_ns();
		if (!warm)
			a->samples[n++] = t1 - t0;
	}
	a->nsamples = n;
	__atomic_store_n(&ep->ctl->stop, 1, __ATOMIC_RELEASE);
	return 0;
}

/**
 * limit_cacheline() - cache-line ping-pong between the two pinned CPUs
 * @iters: round trips measured
 * @warmup: round trips before those
 * @budget_s: time limit
 * @st: half round trip statistics
 * @disturbed: the fraction of round trips above 200 us (a vCPU was not
 *	running: the host is busy)
 * Return: 0 or -errno.
 */
int limit_cacheline(unsigned int iters, unsigned int warmup, double budget_s,
		    struct lat_stats *st, double *disturbed)
{
	struct pair_opts o = { .no_windows = true };
	struct cl_arg a = {
		.iters = iters, .warmup = warmup, .budget_s = budget_s,
	};
	char msg[96];
	int ret;

	a.sh = mmap(NULL, sizeof(*a.sh), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a.sh == MAP_FAILED)
		return -errno;
	a.samples = calloc(iters ? iters : 1, sizeof(*a.samples));
	if (!a.samples) {
		munmap(a.sh, sizeof(*a.sh));
		return -ENOMEM;
	}
	a.sh->ping = a.sh->pong = 0;
	ret = pair_run(&o, cl_a, cl_b, &a, msg, sizeof(msg), NULL);
	*disturbed = 0;
	if (ret) {
		progress("limits: cache-line ping-pong failed: %s\n", msg);
	} else {
		for (unsigned int i = 0; i < a.nsamples; i++)
			if (a.samples[i] > DISTURBED_NS)
				*disturbed += 1.0 / a.nsamples;
		stats_from_samples(a.samples, a.nsamples, 0.5, st);
	}
	free(a.samples);
	munmap(a.sh, sizeof(*a.sh));
	return ret;
}

/*
 * Median over batches of 64 calls of what @op costs per call.  @op returns
 * negative on failure.
 */
static double per_call_ns(unsigned int calls, int (*op)(void *), void *ctx)
{
	const unsigned int per = 64;
	unsigned int batches = calls / per ? calls / per : 1;
	uint64_t *s = calloc(batches, sizeof(*s));
	struct lat_stats st;

	if (!s)
		return -1;
	for (unsigned int w = 0; w < per * 4; w++)
		if (op(ctx) < 0)
			goto fail;
	for (unsigned int b = 0; b < batches; b++) {
		uint64_t t0 = now_ns();

		for (unsigned int i = 0; i < per; i++)
			if (op(ctx) < 0)
				goto fail;
		s[b] = now_ns() - t0;
	}
	stats_from_samples(s, batches, 1.0 / per, &st);
	free(s);
	return st.median_ns;
fail:
	free(s);
	return -1;
}

static int op_clock(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	return clock_gettime(CLOCK_MONOTONIC, &ts);
}

static int op_getppid(void *ctx)
{
	(void)ctx;
	return (int)syscall(SYS_getppid);
}

static int op_info(void *ctx)
{
	struct percs_hfi_info info = { .size = sizeof(info) };

	return ioctl(*(int *)ctx, PERCS_IOC_HFI_INFO, &info);
}

/* An ioctl /dev/null does not know: the system call and VFS path alone. */
static int op_null(void *ctx)
{
	ioctl(*(int *)ctx, _IO(PERCS_IOCTL_TYPE, 0xff), 0);
	return 0;
}

static int op_kick(void *ctx)
{
	return ioctl(*(int *)ctx, PERCS_IOC_KICK, (unsigned long)PERCS_KICK_F_SEND);
}

/* The doorbell libpercs rings after a trigger or an ICSWX (kick mode). */
static int op_fdatasync(void *ctx)
{
	return fdatasync(*(int *)ctx);
}

/* Two pipes between the measuring side and its echo on the same CPU. */
struct handoff {
	int ping[2], pong[2];
};

static void *handoff_echo(void *arg)
{
	struct handoff *h = arg;
	char c;

	while (read(h->ping[0], &c, 1) == 1)
		if (write(h->pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static int op_handoff(void *ctx)
{
	struct handoff *h = ctx;
	char c = 0;

	return write(h->ping[1], &c, 1) == 1 && read(h->pong[0], &c, 1) == 1 ?
	       0 : -1;
}

/*
 * One hand-off between two processes (@threads: two threads of this one)
 * on the caller's CPU: half a pipe round trip.  The echo inherits the
 * caller's CPU mask (pinned to one CPU by run_limits()).  Return: the
 * median in ns, or -1.
 */
static double limit_handoff(bool threads, unsigned int round_trips)
{
	struct handoff h = { { -1, -1 }, { -1, -1 } };
	double ns = -1;
	pthread_t th;
	pid_t pid = -1;

	if (pipe2(h.ping, O_CLOEXEC) || pipe2(h.pong, O_CLOEXEC))
		goto out;
	if (threads) {
		if (pthread_create(&th, NULL, handoff_echo, &h))
			goto out;
	} else {
		pid = fork();
		if (pid < 0)
			goto out;
		if (pid == 0) {
			close(h.ping[1]);	/* the parent's close ends it */
			handoff_echo(&h);
			_exit(0);
		}
	}
	ns = per_call_ns(round_trips, op_handoff, &h);
	if (ns > 0)
		ns /= 2;
	close(h.ping[1]);
	h.ping[1] = -1;
	if (threads)
		pthread_join(th, NULL);
	else
		waitpid(pid, NULL, 0);
out:
	for (int i = 0; i < 2; i++) {
		if (h.ping[i] >= 0)
			close(h.ping[i]);
		if (h.pong[i] >= 0)
			close(h.pong[i]);
	}
	return ns;
}

typedef void *(*copy_fn)(void *, const void *, size_t);

/* Read after the copies so that they cannot be optimised away. */
volatile unsigned char copy_sink;

#if defined(__x86_64__)
static void *copy_movsb(void *d, const void *s, size_t n)
{
	void *ret = d;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return ret;
}
#endif

/* Bytes/s copying @ring bytes in 2 KiB chunks, median of five runs. */
static double copy_bw(size_t ring, copy_fn fn, double secs)
{
	unsigned char *src = aligned_alloc(4096, ring);
	unsigned char *dst = aligned_alloc(4096, ring);
	copy_fn volatile f = fn;
	double runs[5];

	if (!src || !dst) {
		free(src);
		free(dst);
		return -1;
	}
	memset(src, 0x3c, ring);
	memset(dst, 0, ring);
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = now_ns(), t, bytes = 0;
		uint64_t len = (uint64_t)(secs / 5 * 1e9);

		do {
			for (size_t off = 0; off < ring; off += CHUNK)
				f(dst + off, src + off, CHUNK);
			bytes += ring;
			t = now_ns() - t0;
		} while (t < len);
		runs[r] = (double)bytes / ((double)t / 1e9);
	}
	copy_sink = dst[ring - 1];
	free(src);
	free(dst);
	/* Median of five. */
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (runs[j] < runs[i]) {
				double x = runs[i];

				runs[i] = runs[j];
				runs[j] = x;
			}
	return runs[2];
}

/**
 * limit_doorbell() - the empty kick-mode doorbell: fdatasync() on a window
 *	with nothing to send
 * @hub: the hub of the window (HFI 0)
 * @job_fd: its job
 * @calls: how many to time
 * Return: ns per call (median of batches), or -1.
 */
double limit_doorbell(unsigned int hub, int job_fd, unsigned int calls)
{
	struct percs_window_attr attr = {
		.flags = PERCS_WINDOW_ATTR_KICK,
		.job_fd = job_fd, .window = PERCS_WINDOW_ANY,
	};
	struct percs_window *w;
	struct percs_hfi *hfi;
	double ns = -1;
	int fd;

	if (percs_hfi_open(hub, 0, &hfi))
		return -1;
	if (!percs_window_reserve(hfi, &attr, &w)) {
		fd = percs_window_fd(w);
		ns = per_call_ns(calls, op_fdatasync, &fd);
		percs_window_release(w);
	}
	percs_hfi_close(hfi);
	return ns;
}

/** limit_getppid() - ns per getppid() call, median of batches of 64 */
double limit_getppid(unsigned int calls)
{
	return per_call_ns(calls, op_getppid, NULL);
}

/** limit_memcpy_cache() - memcpy bytes/s, 2 KiB chunks through 64 KiB */
double limit_memcpy_cache(double secs)
{
	return copy_bw(64u << 10, memcpy, secs);
}

/**
 * run_limits_end() - the cache-line ping-pong again, at the end of the run
 * @cfg: configuration
 * @lim: cacheline_end filled in
 *
 * If the host's load changed during the run, the two cache-line figures
 * differ, and the figures measured in between deserve less trust.
 * Return: 0 or -errno.
 */
int run_limits_end(const struct bench_cfg *cfg, struct limits *lim)
{
	int ret;

	progress("limits: cache-line ping-pong again");
	ret = limit_cacheline(cfg->lat_iters, cfg->lat_warmup, cfg->lat_budget_s,
			      &lim->cacheline_end, &lim->cl_end_disturbed);
	lim->end_done = !ret;
	progress("limits: done\n");
	return ret;
}

/**
 * run_limits() - measure every limit
 * @cfg: configuration (the HFI of hub A, unit 0 is used for the ioctls)
 * @lim: filled in
 * Return: 0, or -errno when a limit could not be measured.
 */
int run_limits(const struct bench_cfg *cfg, struct limits *lim)
{
	unsigned int calls = cfg->quick ? 4096 : 32768;
	double secs = cfg->quick ? 0.25 : 1.0;
	struct percs_window_attr attr = {
		.flags = PERCS_WINDOW_ATTR_KICK,
		.job_fd = cfg->job_fd,
		.window = PERCS_WINDOW_ANY,
	};
	struct percs_hfi *hfi;
	struct percs_window *w;
	int ret, fd;

	memset(lim, 0, sizeof(*lim));
	progress("limits: cache-line ping-pong");
	ret = limit_cacheline(cfg->lat_iters, cfg->lat_warmup, cfg->lat_budget_s,
			      &lim->cacheline, &lim->cl_disturbed);
	if (ret)
		return ret;
	ret = pin_self(0);
	if (ret)
		return ret;
	progress("limits: clock, getppid, ioctl, fdatasync");
	lim->clock_ns = per_call_ns(calls, op_clock, NULL);
	lim->getppid_ns = per_call_ns(calls, op_getppid, NULL);

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		lim->ioctl_null_ns = per_call_ns(calls, op_null, &fd);
		close(fd);
	}

	ret = percs_hfi_open(cfg->pair[BP_NEAR].hub[0], 0, &hfi);
	if (ret)
		return ret;
	fd = percs_hfi_fd(hfi);
	lim->ioctl_info_ns = per_call_ns(calls, op_info, &fd);
	ret = percs_window_reserve(hfi, &attr, &w);
	if (ret) {
		percs_hfi_close(hfi);
		return ret;
	}
	fd = percs_window_fd(w);
	lim->ioctl_kick_ns = per_call_ns(calls, op_kick, &fd);
	lim->fdatasync_ns = per_call_ns(calls, op_fdatasync, &fd);
	percs_window_release(w);
	percs_hfi_close(hfi);

	progress("limits: hand-off between processes, threads");
	lim->handoff_proc_ns = limit_handoff(false, cfg->quick ? 512 : 2048);
	lim->handoff_thread_ns = limit_handoff(true, cfg->quick ? 512 : 2048);

	progress("limits: memcpy");
	lim->memcpy_stream_bps = copy_bw(8u << 20, memcpy, secs);
	lim->memcpy_cache_bps = copy_bw(64u << 10, memcpy, secs);
#if defined(__x86_64__)
	lim->movsb_cache_bps = copy_bw(64u << 10, copy_movsb, secs);
#endif
	lim->done = true;
	progress("limits: done\n");
	return 0;
}
