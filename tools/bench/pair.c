// SPDX-License-Identifier: GPL-2.0
/*
 * percs-bench: the process pair every two-sided measurement runs on.
 *
 * The parent reserves both windows (so a bad hub number or a missing
 * module is reported before anything forks), forks, and each process then
 * drops the other side's window: the parent (side A) keeps window A and is
 * pinned to the first allowed CPU, the child (side B) keeps window B and is
 * pinned to the second.  They share one anonymous MAP_SHARED page of
 * control fields; everything else goes through the windows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static cpu_set_t initial_set;
static bool initial_saved;

/**
 * pin_self() - pin the calling process to the side-th allowed CPU
 * @side: 0 or 1; -1 only records the allowed CPUs (call it before any
 *	pinning: the first call remembers the set the sides choose from)
 *
 * Does nothing when fewer than two CPUs are usable (g_cfg->pin is false).
 * Return: 0 or -errno.
 */
int pin_self(int side)
{
	cpu_set_t set;
	int seen = 0;

	if (!initial_saved) {
		if (sched_getaffinity(0, sizeof(initial_set), &initial_set))
			return -errno;
		initial_saved = true;
	}
	if (!g_cfg->pin)
		return 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &initial_set))
			continue;
		if (seen++ != side)
			continue;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
	}
	return 0;
}

/* How many CPUs pin_self() chooses from (0 if not known yet). */
int pin_pool(void)
{
	return initial_saved ? CPU_COUNT(&initial_set) : 0;
}

/* How many CPUs the process may run on (the pinning pool). */
int allowed_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

void pair_set_ready(struct pair_ctl *ctl)
{
	__atomic_store_n(&ctl->ready, 1, __ATOMIC_RELEASE);
}

/* Wait for the child to be set up; Return: 0, or -ETIMEDOUT. */
int pair_wait_ready(struct pair_ctl *ctl)
{
	struct spin s;

	spin_init(&s);
	while (!__atomic_load_n(&ctl->ready, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&ctl->child_err, __ATOMIC_ACQUIRE))
			return -ECHILD;
		if (spin_tick(&s))
			return -ETIMEDOUT;
	}
	return 0;
}

/**
 * ep_fail() - record why a side failed; Return: @err, for tail calls
 * @ep: the endpoint
 * @err: negative errno
 * @fmt: what failed
 */
int ep_fail(struct endpoint *ep, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ep->msg, sizeof(ep->msg), fmt, ap);
	va_end(ap);
	if (err && n >= 0 && (size_t)n < sizeof(ep->msg))
		snprintf(ep->msg + n, sizeof(ep->msg) - n, ": %s",
			 percs_strerror(err));
	return err ? err : -EPROTO;
}

static int ep_open(struct endpoint *ep, const struct pair_def *pd, int side,
		   const struct pair_opts *o)
{
	struct percs_window_attr attr = {
		.flags = o->mode == BM_POLL ? PERCS_WINDOW_F_POLL :
			 o->mode == BM_AUTO ? PERCS_WINDOW_F_AUTO :
			 PERCS_WINDOW_ATTR_KICK,
		.send_fifo_size = g_cfg->fifo_size,
		.recv_fifo_size = g_cfg->fifo_size,
		.job_fd = g_cfg->job_fd,
		.window = PERCS_WINDOW_ANY,
	};
	int ret;

	/*
	 * Not ep_fail(): these are no RDMA errors, and percs_strerror() would
	 * give ENOENT (no such HFI) its RDMA meaning.
	 */
	ep->side = side;
	ret = percs_hfi_open(pd->hub[side], pd->unit[side], &ep->hfi);
	if (ret) {
		snprintf(ep->msg, sizeof(ep->msg), "open HFI %u of hub %u: %s",
			 pd->unit[side], pd->hub[side], strerror(-ret));
		return ret;
	}
	ret = percs_window_reserve(ep->hfi, &attr, &ep->w);
	if (ret) {
		snprintf(ep->msg, sizeof(ep->msg),
			 "reserve a window on hub %u HFI %u: %s",
			 pd->hub[side], pd->unit[side], strerror(-ret));
		return ret;
	}
	ep->addr = percs_window_addr(ep->w);
	return 0;
}

static void ep_close(struct endpoint *ep)
{
	percs_window_release(ep->w);
	ep->w = NULL;
	percs_hfi_close(ep->hfi);
	ep->hfi = NULL;
}

/* Wait up to the timeout for the child; kill it if it does not exit. */
static int reap(pid_t pid, double timeout_s)
{
	uint64_t end = now_ns() + (uint64_t)(timeout_s * 1e9);
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return -ECHILD;
}

/**
 * pair_run() - run one two-process measurement
 * @o: which pair of HFIs, which engine mode
 * @fa: side A (the parent: the timer in latency runs, the sender in
 *	bandwidth runs)
 * @fb: side B (the child)
 * @arg: passed to both; the child's writes to it are lost (use the ctl page)
 * @errmsg: receives a message on failure
 * @errlen: its size
 * @ctl_out: if not NULL, receives the control page as the run left it
 *
 * Return: 0, or the negative errno of the side that failed first.
 */
int pair_run(const struct pair_opts *o, side_fn fa, side_fn fb, void *arg,
	     char *errmsg, size_t errlen, struct pair_ctl *ctl_out)
{
	const struct pair_def *pd = &g_cfg->pair[o->pair];
	struct endpoint a = { 0 }, b = { 0 };
	struct pair_ctl *ctl;
	pid_t pid;
	int ret, rc;

	errmsg[0] = '\0';
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED) {
		snprintf(errmsg, errlen, "mmap: %s", strerror(errno));
		return -ENOMEM;
	}
	memset(ctl, 0, sizeof(*ctl));
	a.ctl = b.ctl = ctl;

	if (!o->no_windows) {
		ret = ep_open(&a, pd, 0, o);
		if (!ret)
			ret = ep_open(&b, pd, 1, o);
		if (ret) {
			snprintf(errmsg, errlen, "%s", a.msg[0] ? a.msg : b.msg);
			goto out;
		}
		a.peer = b.addr;
		b.peer = a.addr;
	}
	ret = pin_self(0);
	if (ret) {
		snprintf(errmsg, errlen, "sched_setaffinity: %s", strerror(-ret));
		goto out;
	}

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		snprintf(errmsg, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		ep_close(&a);
		b.side = 1;
		rc = pin_self(1);
		if (rc)
			snprintf(b.msg, sizeof(b.msg), "sched_setaffinity: %s",
				 strerror(-rc));
		else
			rc = fb(&b, arg);
		if (rc) {
			snprintf(ctl->child_msg, sizeof(ctl->child_msg), "%s",
				 b.msg[0] ? b.msg : "side B failed");
			__atomic_store_n(&ctl->child_err, rc ? rc : -EPROTO,
					 __ATOMIC_RELEASE);
		}
		ep_close(&b);
		_exit(rc ? 1 : 0);
	}
	ep_close(&b);
	ret = fa(&a, arg);
	if (ret)
		__atomic_store_n(&ctl->stop, 1, __ATOMIC_RELEASE);
	rc = reap(pid, g_cfg->timeout_s + 1);
	if (ret) {
		snprintf(errmsg, errlen, "%s", a.msg[0] ? a.msg : "side A failed");
		/* The child usually failed first and explains better. */
		if (ctl->child_err)
			snprintf(errmsg, errlen, "%s", ctl->child_msg);
	} else if (ctl->child_err) {
		ret = ctl->child_err;
		snprintf(errmsg, errlen, "%s", ctl->child_msg);
	} else if (rc) {
		ret = rc;
		snprintf(errmsg, errlen, "side B %s",
			 rc == -ETIMEDOUT ? "did not finish (killed)" :
			 "exited abnormally");
	}
out:
	if (ctl_out)
		*ctl_out = *ctl;
	ep_close(&a);
	ep_close(&b);
	munmap(ctl, sizeof(*ctl));
	return ret;
}
