// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: auto mode (PERCS_WINDOW_F_AUTO), the hybrid of the polling and
 * the kick engine.
 *
 * The HFI's polling thread adds one to &percs_status.poll_beat on every
 * pass over the window.  While NEED_WAKEUP is clear and the beat moves, the
 * library leaves its sends to the thread and makes no system call; when the
 * kernel set NEED_WAKEUP (the thread sleeps, or stepped aside because
 * another task wanted its CPU), or the beat has stood still for longer
 * than the bound (the thread is runnable but has no CPU, or is parked), it
 * kicks: the kick runs the engine in the caller's context.
 *
 * The bound: on the TCG VM with a free CPU the beat's gaps are a few
 * microseconds (p99 under 20 us, Documentation/benchmarks.rst "Auto
 * mode"); a thread that lost its CPU loses it for a scheduler time slice,
 * milliseconds.  LP_AUTO_STALE_US sits well above the first and well
 * below the second; PERCS_AUTO_STALE_US overrides it.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

#define LP_AUTO_STALE_US	50
#define LP_AUTO_STALE_MAX_US	1000000

static uint64_t lp_auto_ticks(const struct percs_window *w)
{
	struct timespec ts;

	if (w->au.tsc)
		return lp_rdtsc();
	/* vDSO clock_gettime(): no system call with a TSC clocksource. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The bound from PERCS_AUTO_STALE_US (1 .. LP_AUTO_STALE_MAX_US) or the
 * default.  Return: 0, or -EINVAL for a value that is not such a number.
 */
static int lp_auto_bound_us(unsigned long *us)
{
	const char *s = getenv("PERCS_AUTO_STALE_US");
	char *end;

	*us = LP_AUTO_STALE_US;
	if (!s)
		return 0;
	errno = 0;
	*us = strtoul(s, &end, 10);
	if (errno || end == s || *end || !*us || *us > LP_AUTO_STALE_MAX_US)
		return -EINVAL;
	return 0;
}

/**
 * lp_auto_init() - set up auto mode for a new window (w->wflags set)
 * @w: the window
 *
 * Return: 0, or -EINVAL for a bad PERCS_AUTO_STALE_US.
 */
int lp_auto_init(struct percs_window *w)
{
	const struct percs_clock *c = w->clock.page;
	unsigned long us;
	int ret;

	w->au.on = w->wflags & PERCS_WINDOW_F_AUTO;
	if (!w->au.on)
		return 0;
	ret = lp_auto_bound_us(&us);
	if (ret)
		return ret;
	/* The TSC when the kernel calibrated it: cycles, no conversion. */
	w->au.tsc = LP_HAVE_TSC && c && lp_load_relaxed(&c->tsc_khz);
	w->au.bound = w->au.tsc ?
		(uint64_t)us * lp_load_relaxed(&c->tsc_khz) / 1000 :
		(uint64_t)us * 1000;
	w->au.beat = lp_load_relaxed(&w->status->poll_beat);
	return 0;
}

/* The beat did not move since the last look: has it stood still too long? */
bool lp_auto_stale_slow(struct percs_window *w)
{
	uint64_t now = lp_auto_ticks(w);

	if (!w->au.since) {
		w->au.since = now ? now : 1;
		return false;
	}
	return now - w->au.since >= w->au.bound;
}

/**
 * lp_auto_progress() - an auto-mode wait found nothing: make sure what
 *	waits on the engine moves
 * @w: the window
 *
 * When the window has sends the engine has not consumed, or completion
 * entries owed, and the polling thread is not live, kick: the engine runs
 * here.  Not while the send FIFO waits for a full target: that target's
 * credits retry it.
 *
 * Return: 0 or the kick's -errno.
 */
int lp_auto_progress(struct percs_window *w)
{
	const struct percs_status *st = w->status;
	bool pending;
	int ret;

	if (!w->au.on)
		return 0;
	pending = lp_load_relaxed(&st->send_head) !=
			lp_load_relaxed(&w->db->send_tail) ||
		  lp_load_relaxed(&st->imm_head) !=
			lp_load_relaxed(&w->db->imm_tail) ||
		  w->cq.owed;
	if (!pending ||
	    (lp_load_relaxed(&st->flags) & PERCS_STATUS_SEND_BLOCKED) ||
	    lp_engine_live(w))
		return 0;
	ret = w->doorbell(w, PERCS_KICK_F_SEND | PERCS_KICK_F_IMM);
	return ret < 0 ? ret : 0;
}
