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
/percs failnth: done/ { zone = 0 }
/percs failnth: injecting faults/ { zone = 1 }
zone && /Call Trace|vmalloc error|page allocation failure|allocation failed/ { next }
{ print }
