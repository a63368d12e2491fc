# SPDX-License-Identifier: GPL-2.0
#
# Drop from a kernel log the reports a test announced it would cause, so
# that the bug oracles do not count them.  Between a line containing
# "percs failnth: injecting faults" and one containing "percs failnth: done"
# the fail-nth sweep makes allocations fail on purpose, and the kernel's
# allocation-failure report (warn_alloc: "vmalloc error" or "page
# allocation failure", then a Call Trace) is expected.  Only those lines go:
# a real bug report inside the zone (BUG:, WARNING:, KASAN, lockdep...)
# keeps its own headline and is still caught.
# (The opening line quotes the closing one: test for the closing first.)
# Also dropped: one race inside the kernel's hrtimer core that KCSAN
# reports whatever task a timer interrupt lands in (below).
/percs failnth: done/ { zone = 0 }
/percs failnth: injecting faults/ { zone = 1 }
zone && /Call Trace|vmalloc error|page allocation failure|allocation failed/ { next }
# KCSAN on the 6.1 debug kernel: the scheduler tick's hrtimer_active()
# reads another CPU's hrtimer base->running while that CPU's interrupt
# runs its timers (__hrtimer_run_queues).  Both accesses are the hrtimer
# core's own, in timer interrupts, and the read is a lockless one the
# core re-validates with the base's seqcount by design; it lands in
# whatever task the tick interrupts.  Only that exact pair is dropped: a
# race with any other function, percs's included, keeps its headline.
/BUG: KCSAN: data-race in (__hrtimer_run_queues \/ hrtimer_active|hrtimer_active \/ __hrtimer_run_queues)$/ { next }
{ print }
