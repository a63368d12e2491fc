// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpercs: the global clock, read from the mapped clock page.
 *
 * The page (struct percs_clock in <linux/percs.h>) is written by the kernel
 * under a sequence count, like the vDSO's data page: load the count
 * (acquire), the parameters and the time source, then, after an acquire
 * fence, the count again; start over if it was odd or has moved.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "internal.h"

/*
 * An odd count: spin this many times, then yield; give up (-EAGAIN) when
 * the page has stayed in mid-update this long (a kernel rewrite takes
 * microseconds; only a stuck writer gets here).
 */
#define LP_CLOCK_SPINS		64
#define LP_CLOCK_STUCK_NS	1000000000ull

/*
 * (delta * mult) >> shift with the 96-bit product, shift <= 32: the low
 * and high 32 bits of delta separately (the kernel's mul_u64_u32_shr()).
 */
static inline uint64_t lp_clock_scale(uint64_t delta, uint32_t mult,
				      uint32_t shift)
{
	uint64_t lo = (uint64_t)(uint32_t)delta * mult;
	uint64_t hi = (delta >> 32) * mult;

	return (lo >> shift) + (hi << (32 - shift));
}

static int lp_monotonic(uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return -errno;
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/*
 * The page's count is odd: the kernel is rewriting it.  Spin a little,
 * then yield; -EAGAIN once it has stayed odd for LP_CLOCK_STUCK_NS.
 */
static int lp_clock_wait(unsigned int *odd, uint64_t *deadline)
{
	uint64_t now = 0;

	if (++*odd < LP_CLOCK_SPINS) {
		lp_cpu_relax();
		return 0;
	}
	if (lp_monotonic(&now))
		return -EAGAIN;
	if (!*deadline)
		*deadline = now + LP_CLOCK_STUCK_NS;
	else if (now >= *deadline)
		return -EAGAIN;
	sched_yield();
	return 0;
}

int percs_clock_ns(const struct percs_window *w, uint64_t *ns)
{
	const struct lp_clock_hooks *hooks;
	const struct percs_clock *p;
	uint64_t deadline = 0;

	if (lp_unlikely(!w || !ns))
		return -EINVAL;
	p = w->clock.page;
	hooks = w->clock.hooks;
	if (lp_unlikely(!p))
		return -EOPNOTSUPP;

	for (unsigned int odd = 0;;) {
		uint32_t seq = lp_load_acquire(&p->seq), flags, mult, shift;
		uint64_t v, now = 0, base;
		int err = 0;

		if (lp_unlikely(seq & 1)) {
			err = lp_clock_wait(&odd, &deadline);
			if (err)
				return err;
			continue;
		}
		flags = lp_load_relaxed(&p->flags);
		if (lp_likely(flags & PERCS_CLOCK_F_TSC)) {
			base = lp_load_relaxed(&p->tsc_base);
			v = lp_load_relaxed(&p->ns_base);
			mult = lp_load_relaxed(&p->mult);
			shift = lp_load_relaxed(&p->shift);
			now = lp_unlikely(hooks) ? hooks->tsc(hooks->ctx) :
						   lp_rdtsc();
			if (!LP_HAVE_TSC && !hooks)
				err = -EOPNOTSUPP;
			else if (shift > 32)
				err = -EPROTO;
			else if (now > base)
				v += lp_clock_scale(now - base, mult, shift);
		} else {
			base = lp_load_relaxed(&p->mono_offset);
			err = lp_unlikely(hooks) ? hooks->mono(hooks->ctx, &now) :
						   lp_monotonic(&now);
			v = now - base;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (lp_load_relaxed(&p->seq) != seq)
			continue;
		if (lp_unlikely(err))
			return err;
		*ns = v;
		return 0;
	}
}

const volatile struct percs_clock *percs_window_clock(const struct percs_window *w)
{
	return w->clock.page;
}
