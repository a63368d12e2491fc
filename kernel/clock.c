// SPDX-License-Identifier: GPL-2.0
/*
 * percs: the global clock.
 *
 * The PERCS ISR distributes one clock over the whole network and keeps the
 * copies on every hub consistent.  Here the emulated system has one
 * module-wide page (&struct percs_clock) that every window maps read-only
 * (%PERCS_REGION_CLOCK), so all hubs read one clock by construction.  It
 * counts nanoseconds from module load at the rate of CLOCK_MONOTONIC.
 *
 * While the kernel's own clocksource is the TSC, the page holds a linear
 * map from the TSC to nanoseconds and user space reads the clock with no
 * system call (seqcount, rdtsc, one 96-bit multiply).  Otherwise the page
 * says so and the clock is CLOCK_MONOTONIC minus an offset.  A delayed work
 * rechecks every clock_recal_ms: it switches modes when the clocksource
 * changes, and in TSC mode it slews the scale (at most PERCS_CLOCK_MAX_PPB)
 * so that the clock follows CLOCK_MONOTONIC, or steps it when it is far
 * off.  Every rewrite keeps the clock continuous and never makes it go
 * backwards.
 *
 * debugfs: clock_force_fallback (0/1: treat the TSC as unusable) and
 * clock_recalibrate (write: rewrite the page now), for the tests.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

#include "percs.h"

#define PERCS_CLOCK_DEF_RECAL_MS 1000
/* An error up to this is left alone. */
#define PERCS_CLOCK_SLACK_NS	2000
/* Beyond this the clock is stepped (forward) or re-offset, not slewed. */
#define PERCS_CLOCK_STEP_NS	(1000 * 1000)
/* Slew limit, and the longest the scale may stray from the nominal one. */
#define PERCS_CLOCK_MAX_PPB	500000
#define PERCS_CLOCK_MAX_DEV_PPB	1000000
/* An error is corrected over this many recalibration periods. */
#define PERCS_CLOCK_SLEW_PERIODS 8
/* The frequency baseline must be this long before it replaces tsc_khz. */
#define PERCS_CLOCK_MIN_BASELINE_NS (500 * 1000 * 1000)

/**
 * struct percs_clock_ctl - the kernel side of the global clock
 * @page: the page user space maps (vmalloc_user)
 * @cur: the parameters last published, the kernel's own copy
 * @lock: serialises every rewrite of @page and @cur
 * @work: the periodic recalibration
 * @nominal_mult: @cur.mult as tsc_khz gives it
 * @anchor_tsc: start of the frequency baseline: a TSC value ...
 * @anchor_mono: ... and CLOCK_MONOTONIC at that moment
 * @force_fallback: debugfs: treat the TSC as unusable
 * @dbg_fallback: debugfs file clock_force_fallback
 * @dbg_recal: debugfs file clock_recalibrate
 */
struct percs_clock_ctl {
	struct percs_clock *page;
	struct percs_clock cur;
	struct mutex lock;
	struct delayed_work work;
	u32 nominal_mult;
	u64 anchor_tsc;
	u64 anchor_mono;
	bool force_fallback;
	struct dentry *dbg_fallback;
	struct dentry *dbg_recal;
};

/* The clock of the loaded module, for the parameter callback. */
static DEFINE_MUTEX(percs_clock_active_lock);
static struct percs_clock_ctl *percs_clock_active;
static unsigned int percs_clock_recal_ms = PERCS_CLOCK_DEF_RECAL_MS;

#ifdef CONFIG_X86
static u64 percs_tsc_read(void)
{
	return rdtsc_ordered();
}

static u32 percs_tsc_khz(void)
{
	return boot_cpu_has(X86_FEATURE_TSC) ? tsc_khz : 0;
}

/*
 * The TSC may be used while the kernel's timekeeping uses it: the current
 * clocksource read the TSC if the counter value of a snapshot lies between
 * two TSC reads around it (no other clocksource counts in TSC cycles), and
 * the TSC has not been marked unstable.
 */
static bool percs_tsc_usable(void)
{
	struct system_time_snapshot snap;
	u64 t0, t1;

	if (!percs_tsc_khz() || check_tsc_unstable())
		return false;
	t0 = rdtsc_ordered();
	ktime_get_snapshot(&snap);
	t1 = rdtsc_ordered();
	return snap.cycles >= t0 && snap.cycles <= t1;
}
#else
static u64 percs_tsc_read(void)
{
	return 0;
}

static u32 percs_tsc_khz(void)
{
	return 0;
}

static bool percs_tsc_usable(void)
{
	return false;
}
#endif

/* The clock at TSC value @tsc under parameters @k (TSC mode). */
static u64 percs_clock_tsc_ns(const struct percs_clock *k, u64 tsc)
{
	if (tsc < k->tsc_base)
		return k->ns_base;
	return k->ns_base + mul_u64_u32_shr(tsc - k->tsc_base, k->mult,
					    k->shift);
}

/*
 * A (TSC, CLOCK_MONOTONIC) pair taken as close together as possible: the
 * best of a few tries, interrupts off, the TSC halfway between two reads.
 */
static void percs_clock_sample(u64 *tsc, u64 *mono)
{
	u64 best = U64_MAX, t0, t1, m;
	unsigned long flags;
	int i;

	for (i = 0; i < 4; i++) {
		local_irq_save(flags);
		t0 = percs_tsc_read();
		m = ktime_get_ns();
		t1 = percs_tsc_read();
		local_irq_restore(flags);
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*mono = m;
		}
	}
}

enum percs_clock_op {
	PERCS_CLOCK_TO_FALLBACK,	/* continue from CLOCK_MONOTONIC */
	PERCS_CLOCK_TO_TSC,		/* (re)enter TSC mode at the nominal scale */
	PERCS_CLOCK_RESCALE,		/* TSC mode, new scale, continuous */
	PERCS_CLOCK_STEP,		/* TSC mode, jump forward to the target */
	PERCS_CLOCK_REOFFSET,		/* TSC mode, continuous, new offset */
};

/**
 * percs_clock_publish() - rewrite the clock page
 * @c: the clock (lock held)
 * @op: what to change
 * @mult: the new scale for %PERCS_CLOCK_RESCALE
 *
 * The rebase point (TSC and CLOCK_MONOTONIC) is read after the odd count
 * is visible, so a reader that completed with the old parameters read an
 * earlier TSC (or CLOCK_MONOTONIC) value, which the old parameters map at
 * most to the new base: the clock never goes backwards across a rewrite.
 */
static void percs_clock_publish(struct percs_clock_ctl *c,
				enum percs_clock_op op, u32 mult)
{
	struct percs_clock *p = c->page, *k = &c->cur;
	unsigned long flags;
	u64 tsc, mono, now;

	local_irq_save(flags);
	WRITE_ONCE(p->seq, k->seq + 1);
	smp_mb();	/* the odd count before the rebase point */
	switch (op) {
	case PERCS_CLOCK_TO_FALLBACK:
		/* Already there (a forced rewrite): the offset stays. */
		if (!(k->flags & PERCS_CLOCK_F_TSC))
			break;
		tsc = percs_tsc_read();
		now = percs_clock_tsc_ns(k, tsc);
		mono = ktime_get_ns();
		k->flags &= ~PERCS_CLOCK_F_TSC;
		k->mono_offset = mono - now;
		break;
	case PERCS_CLOCK_TO_TSC:
		mono = ktime_get_ns();
		tsc = percs_tsc_read();
		k->flags |= PERCS_CLOCK_F_TSC;
		k->ns_base = mono - k->mono_offset;
		k->tsc_base = tsc;
		k->mult = c->nominal_mult;
		c->anchor_tsc = tsc;
		c->anchor_mono = mono;
		break;
	case PERCS_CLOCK_RESCALE:
		tsc = percs_tsc_read();
		k->ns_base = percs_clock_tsc_ns(k, tsc);
		k->tsc_base = tsc;
		k->mult = mult;
		break;
	case PERCS_CLOCK_STEP:
	case PERCS_CLOCK_REOFFSET:
		tsc = percs_tsc_read();
		now = percs_clock_tsc_ns(k, tsc);
		mono = ktime_get_ns();
		if (op == PERCS_CLOCK_STEP && mono - k->mono_offset > now)
			now = mono - k->mono_offset;
		k->ns_base = now;
		k->tsc_base = tsc;
		k->mono_offset = mono - now;
		k->mult = c->nominal_mult;
		c->anchor_tsc = tsc;
		c->anchor_mono = mono;
		break;
	}
	k->updates++;
	WRITE_ONCE(p->flags, k->flags);
	WRITE_ONCE(p->mult, k->mult);
	WRITE_ONCE(p->tsc_base, k->tsc_base);
	WRITE_ONCE(p->ns_base, k->ns_base);
	WRITE_ONCE(p->mono_offset, k->mono_offset);
	WRITE_ONCE(p->updates, k->updates);
	smp_wmb();	/* the fields before the even count */
	k->seq += 2;
	WRITE_ONCE(p->seq, k->seq);
	local_irq_restore(flags);
}

/* The recalibration period in nanoseconds (1 s when periodic checks are off). */
static u64 percs_clock_period_ns(void)
{
	unsigned int ms = READ_ONCE(percs_clock_recal_ms);

	return (u64)(ms ? ms : 1000) * NSEC_PER_MSEC;
}

/**
 * percs_clock_recalibrate() - check the clock and rewrite the page if needed
 * @c: the clock (lock held)
 * @force: rewrite the page even if nothing needs to change
 */
static void percs_clock_recalibrate(struct percs_clock_ctl *c, bool force)
{
	struct percs_clock *k = &c->cur;
	u64 tsc, mono, rate, limit;
	s64 err, corr, mult;

	if (c->force_fallback || !percs_tsc_usable()) {
		if (k->flags & PERCS_CLOCK_F_TSC || force)
			percs_clock_publish(c, PERCS_CLOCK_TO_FALLBACK, 0);
		return;
	}
	if (!(k->flags & PERCS_CLOCK_F_TSC)) {
		percs_clock_publish(c, PERCS_CLOCK_TO_TSC, 0);
		return;
	}

	percs_clock_sample(&tsc, &mono);
	err = (s64)(percs_clock_tsc_ns(k, tsc) - (mono - k->mono_offset));
	if (err > PERCS_CLOCK_STEP_NS) {
		percs_clock_publish(c, PERCS_CLOCK_REOFFSET, 0);
		return;
	}
	if (err < -PERCS_CLOCK_STEP_NS) {
		percs_clock_publish(c, PERCS_CLOCK_STEP, 0);
		return;
	}
	if (!force && abs(err) <= PERCS_CLOCK_SLACK_NS)
		return;

	/* The TSC rate against CLOCK_MONOTONIC over the whole baseline ... */
	rate = c->nominal_mult;
	if (mono - c->anchor_mono >= PERCS_CLOCK_MIN_BASELINE_NS &&
	    tsc > c->anchor_tsc)
		rate = mul_u64_u64_div_u64(mono - c->anchor_mono,
					   1ULL << k->shift,
					   tsc - c->anchor_tsc);
	/* ... less the error spread over the next few periods. */
	corr = div64_s64(-err * (s64)NSEC_PER_SEC,
			 (s64)(PERCS_CLOCK_SLEW_PERIODS *
			       percs_clock_period_ns()));
	corr = clamp_t(s64, corr, -PERCS_CLOCK_MAX_PPB, PERCS_CLOCK_MAX_PPB);
	mult = rate + div64_s64((s64)rate * corr, NSEC_PER_SEC);
	limit = div_u64((u64)c->nominal_mult * PERCS_CLOCK_MAX_DEV_PPB,
			NSEC_PER_SEC);
	mult = clamp_t(s64, mult, (s64)c->nominal_mult - (s64)limit,
		       (s64)c->nominal_mult + (s64)limit);
	mult = min_t(s64, mult, U32_MAX);
	percs_clock_publish(c, PERCS_CLOCK_RESCALE, (u32)mult);
}

static void percs_clock_work(struct work_struct *work)
{
	struct percs_clock_ctl *c = container_of(to_delayed_work(work),
						 struct percs_clock_ctl, work);
	unsigned int ms;

	mutex_lock(&c->lock);
	percs_clock_recalibrate(c, false);
	mutex_unlock(&c->lock);
	ms = READ_ONCE(percs_clock_recal_ms);
	if (ms)
		queue_delayed_work(system_power_efficient_wq, &c->work,
				   msecs_to_jiffies(ms));
}

static int percs_clock_recal_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms > 3600 * MSEC_PER_SEC)
		return -EINVAL;
	mutex_lock(&percs_clock_active_lock);
	WRITE_ONCE(percs_clock_recal_ms, ms);
	if (percs_clock_active) {
		if (ms)
			mod_delayed_work(system_power_efficient_wq,
					 &percs_clock_active->work,
					 msecs_to_jiffies(ms));
		else
			cancel_delayed_work_sync(&percs_clock_active->work);
	}
	mutex_unlock(&percs_clock_active_lock);
	return 0;
}

static const struct kernel_param_ops percs_clock_recal_ops = {
	.set = percs_clock_recal_set,
	.get = param_get_uint,
};
module_param_cb(clock_recal_ms, &percs_clock_recal_ops, &percs_clock_recal_ms,
		0644);
MODULE_PARM_DESC(clock_recal_ms,
		 "Global clock recalibration period, ms (0: never; default 1000)");

static int percs_clock_fallback_get(void *data, u64 *val)
{
	struct percs_clock_ctl *c = data;

	*val = READ_ONCE(c->force_fallback);
	return 0;
}

static int percs_clock_fallback_set(void *data, u64 val)
{
	struct percs_clock_ctl *c = data;

	if (val > 1)
		return -EINVAL;
	mutex_lock(&c->lock);
	WRITE_ONCE(c->force_fallback, val);
	percs_clock_recalibrate(c, false);
	mutex_unlock(&c->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(percs_clock_fallback_fops, percs_clock_fallback_get,
			 percs_clock_fallback_set, "%llu\n");

static int percs_clock_recal_now(void *data, u64 val)
{
	struct percs_clock_ctl *c = data;

	mutex_lock(&c->lock);
	percs_clock_recalibrate(c, true);
	mutex_unlock(&c->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(percs_clock_recal_fops, NULL, percs_clock_recal_now,
			 "%llu\n");

/**
 * percs_clock_page() - the page to map for %PERCS_REGION_CLOCK
 * @pd: the system
 *
 * Return: the vmalloc_user() page, owned by the clock until module unload.
 */
void *percs_clock_page(struct percs_dev *pd)
{
	return pd->clock->page;
}

/**
 * percs_clock_init() - start the global clock at 0
 * @pd: the system; its debugfs directory gets the clock's knobs
 *
 * Return: 0 or -ENOMEM.
 */
int percs_clock_init(struct percs_dev *pd)
{
	struct percs_clock_ctl *c;
	struct percs_clock *k;
	u32 khz = percs_tsc_khz();
	u64 tsc, mono, mult;
	unsigned int ms;

	BUILD_BUG_ON(sizeof(struct percs_clock) > PAGE_SIZE);

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->page = vmalloc_user(PAGE_SIZE);
	if (!c->page) {
		kfree(c);
		return -ENOMEM;
	}
	mutex_init(&c->lock);
	INIT_DELAYED_WORK(&c->work, percs_clock_work);

	/* The finest scale that keeps mult in 32 bits, shift at most 32. */
	k = &c->cur;
	k->version = PERCS_CLOCK_VERSION;
	k->tsc_khz = khz;
	k->shift = 32;
	if (khz) {
		mult = div64_u64(NSEC_PER_SEC << 32, (u64)khz * 1000);
		while (mult > U32_MAX) {
			k->shift--;
			mult >>= 1;
		}
		c->nominal_mult = mult;
		k->mult = mult;
	}

	percs_clock_sample(&tsc, &mono);
	k->mono_offset = mono;
	if (khz && percs_tsc_usable()) {
		k->flags = PERCS_CLOCK_F_TSC;
		k->tsc_base = tsc;
		c->anchor_tsc = tsc;
		c->anchor_mono = mono;
	}
	*c->page = *k;
	pd->clock = c;

	c->dbg_fallback = debugfs_create_file_unsafe("clock_force_fallback",
						     0644, pd->debugfs, c,
						     &percs_clock_fallback_fops);
	c->dbg_recal = debugfs_create_file_unsafe("clock_recalibrate", 0200,
						  pd->debugfs, c,
						  &percs_clock_recal_fops);

	mutex_lock(&percs_clock_active_lock);
	percs_clock_active = c;
	ms = READ_ONCE(percs_clock_recal_ms);
	if (ms)
		queue_delayed_work(system_power_efficient_wq, &c->work,
				   msecs_to_jiffies(ms));
	mutex_unlock(&percs_clock_active_lock);

	pr_info("global clock: %s, tsc %u kHz, mult %u shift %u\n",
		k->flags & PERCS_CLOCK_F_TSC ? "TSC" : "CLOCK_MONOTONIC",
		khz, k->mult, k->shift);
	return 0;
}

/**
 * percs_clock_exit() - stop the clock and free its page
 * @pd: the system; no window (so no mapping) is left
 */
void percs_clock_exit(struct percs_dev *pd)
{
	struct percs_clock_ctl *c = pd->clock;

	if (!c)
		return;
	debugfs_remove(c->dbg_recal);
	debugfs_remove(c->dbg_fallback);
	mutex_lock(&percs_clock_active_lock);
	percs_clock_active = NULL;
	mutex_unlock(&percs_clock_active_lock);
	cancel_delayed_work_sync(&c->work);
	vfree(c->page);
	kfree(c);
	pd->clock = NULL;
}
