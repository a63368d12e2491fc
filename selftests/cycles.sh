#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cycles.sh - load, traffic, unload, over and over.
#
# Run as root inside the test VM (selftests/run-vm-tests.sh runs it after
# module.sh), the module loaded or not.  Each cycle: load the module (default
# parameters; every fourth cycle another topology with at least two
# supernodes), traffic (N packets and N/8 immediate lines each way between
# a kick-mode window on hub 0 and a poll-mode window on the last hub, in
# another supernode, every packet checked), unload.
#
# One helper process, $PERCS_BUILD/selftests/storm in its PERCS_STORM_SERVE
# mode, does the loads (finit_module(), as insmod), the traffic and the
# unloads (delete_module(O_NONBLOCK), as rmmod), one command at a time,
# holding nothing of the module between commands: an exec costs ~0.2 s in
# the emulated VM, so 100 cycles of three execs would take minutes.  The
# checks between the steps use shell builtins only, for the same reason.
#
# Checks, one TAP line each over all cycles (diagnostics name the cycle):
# every insmod succeeds; every traffic run checks out; the debugfs live
# counters are zero after it and a percs-poll thread exists; every rmmod
# succeeds; after it no percs-poll thread is left and debugfs percs,
# /sys/class/percs and /dev/percs-hfi* are gone; then the module is loaded
# again ($PERCS_MODPARAMS, default parameters if unset) for whatever runs
# next; the kernel log stays clean.
#
# Writes TAP to $PERCS_OUT/cycles.tap (and stdout), the plan to
# $PERCS_OUT/cycles.expected.
#
# Environment: PERCS_OUT, PERCS_MODULE (path of percs.ko), PERCS_BUILD,
# PERCS_TEST_SCALE (cycles = 100 x scale, at least 5), PERCS_LOAD_CYCLES
# (the count, overriding the scale), PERCS_CYCLE_PACKETS (default 200).

set -u

out=${PERCS_OUT:?}
ko=${PERCS_MODULE:?PERCS_MODULE must name percs.ko}
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
traffic=$build/selftests/storm
packets=${PERCS_CYCLE_PACKETS:-200}
scale=${PERCS_TEST_SCALE:-1}
cycles=${PERCS_LOAD_CYCLES:-$(awk -v s="$scale" 'BEGIN {
	if (!(s > 0 && s <= 1)) s = 1
	n = int(100 * s); print (n < 5 ? 5 : n) }')}
tap=$out/cycles.tap
plan=8
bug_re='BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|KCSAN|kernel BUG|list_add corruption|list_del corruption|refcount_t|soft lockup|hard LOCKUP|hung_task|blocked for more than|Call Trace'

# Every fourth cycle a different system; the traffic needs 2 supernodes.
topologies=(
	""
	""
	""
	"supernodes=3 hubs_per_supernode=2 windows_per_hfi=16 poll_idle_us=50"
	""
	""
	""
	"supernodes=4 hubs_per_supernode=1 windows_per_hfi=4 poll_idle_us=0"
)

n=0
failures=0
exec 3> "$tap"
emit() {
	echo "$*"
	echo "$*" >&3
}
result() {	# result OK(0/1) DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		emit "ok $n - $2"
	else
		failures=$((failures + 1))
		emit "not ok $n - $2"
	fi
}
diag() {
	emit "# $*"
}

# Shell builtins only in the per-cycle checks: a fork costs tens of
# milliseconds in the emulated VM.
loaded() {
	[ -e /sys/module/percs/initstate ]
}

# Sets $threads to the number of percs-poll kernel threads.
count_poll_threads() {
	local f comm
	threads=0
	for f in /proc/[0-9]*/comm; do
		read -r comm 2>/dev/null < "$f" || continue
		[[ $comm == percs-poll* ]] && threads=$((threads + 1))
	done
	return 0
}

live_zero() {
	local value
	[ -r /sys/kernel/debug/percs/live ] || return 1
	while read -r _ value; do
		[ "$value" = 0 ] || return 1
	done < /sys/kernel/debug/percs/live
	return 0
}

# What an unloaded module may not leave behind.
leftovers() {
	local l=""
	[ -e /sys/kernel/debug/percs ] && l="$l debugfs"
	[ -e /sys/class/percs ] && l="$l /sys/class/percs"
	compgen -G '/dev/percs-hfi*' >/dev/null && l="$l /dev/percs-hfi*"
	loaded && l="$l /proc/modules"
	echo "${l# }"
}

emit "TAP version 13"
emit "1..$plan"
echo "$plan" > "$out/cycles.expected"
dmesg_start=$(dmesg | wc -l)
start=$(date +%s)

# failures by check: the first cycle each failed in
bad_insmod='' bad_traffic='' bad_live='' bad_rmmod='' bad_threads='' bad_left=''
if ! [ -x "$traffic" ]; then
	diag "no $traffic (make selftests)"
	bad_traffic=setup
fi
if loaded && ! rmmod percs; then
	diag "the module is in use before the cycles"
	bad_rmmod=setup
fi

# srv COMMAND: one command to the helper; its answer in $reply (60 s).
srv() {
	local to=${SRV[1]:-} from=${SRV[0]:-}
	reply=""
	if [ -z "$to" ] || [ -z "$from" ] || ! echo "$1" >&"$to"; then
		reply="the helper is gone"
		return 1
	fi
	if ! read -r -t 60 reply <&"$from"; then
		reply="no answer from the helper${reply:+ ($reply)}"
		return 1
	fi
	return 0
}

done_cycles=0
[ -x "$traffic" ] && coproc SRV { PERCS_STORM_SERVE=1 exec "$traffic" 2>&1; }
for ((i = 0; i < cycles; i++)); do
	params=${topologies[$((i % ${#topologies[@]}))]}
	if ! srv "load $ko${params:+ $params}" || [ "$reply" != ok ]; then
		diag "cycle $i: insmod $params: $reply"
		bad_insmod=${bad_insmod:-$i}
		break
	fi
	if ! srv "traffic $packets" || [ "${reply#traffic: ok}" = "$reply" ]; then
		diag "cycle $i ($params): $reply"
		bad_traffic=${bad_traffic:-$i}
	elif [ "$i" = 0 ]; then
		diag "cycle 0: $reply"
	fi
	if ! live_zero; then
		diag "cycle $i: live counters: $(tr '\n' ' ' < /sys/kernel/debug/percs/live 2>&1)"
		bad_live=${bad_live:-$i}
	fi
	count_poll_threads
	threads_before=$threads
	if ! srv unload || [ "$reply" != ok ]; then
		diag "cycle $i: rmmod: $reply"
		bad_rmmod=${bad_rmmod:-$i}
		break
	fi
	count_poll_threads
	if [ "$threads_before" -lt 1 ] || [ "$threads" -ne 0 ]; then
		diag "cycle $i: percs-poll threads: $threads_before before rmmod, $threads after"
		bad_threads=${bad_threads:-$i}
	fi
	if [ -e /sys/kernel/debug/percs ] || [ -e /sys/class/percs ] ||
	   [ -e /dev/percs-hfi0 ] || loaded; then
		diag "cycle $i: left after rmmod: $(leftovers)"
		bad_left=${bad_left:-$i}
	fi
	done_cycles=$((i + 1))
done
srv_pid=${SRV_PID:-}
srv_in=${SRV[1]:-}
if [ -n "$srv_in" ]; then
	exec {srv_in}>&-	# end of input: the helper exits
fi
[ -n "$srv_pid" ] && wait "$srv_pid"

incomplete=0
[ "$done_cycles" -eq "$cycles" ] || incomplete=1

result "$([ -z "$bad_insmod" ]; echo $?)" \
	"$cycles cycles: every insmod succeeds${bad_insmod:+ (not in cycle $bad_insmod)}"
result "$([ -z "$bad_traffic" ] && [ $incomplete = 0 ]; echo $?)" \
	"$cycles cycles: $packets packets each way across supernodes check out every time${bad_traffic:+ (not in cycle $bad_traffic)}"
result "$([ -z "$bad_live" ] && [ $incomplete = 0 ]; echo $?)" \
	"$cycles cycles: live counters zero after the traffic${bad_live:+ (not in cycle $bad_live)}"
result "$([ -z "$bad_rmmod" ] && [ $incomplete = 0 ]; echo $?)" \
	"$cycles cycles: every rmmod succeeds${bad_rmmod:+ (not in cycle $bad_rmmod)}"
result "$([ -z "$bad_threads" ] && [ $incomplete = 0 ]; echo $?)" \
	"$cycles cycles: the percs-poll thread runs until rmmod and not after${bad_threads:+ (not in cycle $bad_threads)}"
result "$([ -z "$bad_left" ] && [ $incomplete = 0 ]; echo $?)" \
	"$cycles cycles: no debugfs, class or device left after rmmod${bad_left:+ (not in cycle $bad_left)}"

# The module goes back in for whatever runs next.
loaded || {
	# shellcheck disable=SC2086 # parameters are words
	insmod "$ko" ${PERCS_MODPARAMS:-}
}
ok=1
for _ in $(seq 50); do
	[ -c /dev/percs-hfi0 ] && live_zero && { ok=0; break; }
	sleep 0.1
done
result "$ok" "reload with default parameters${PERCS_MODPARAMS:+ ($PERCS_MODPARAMS)}"

bugs=$(dmesg | tail -n +"$((dmesg_start + 1))" |
	awk -f "$here/../tools/vm/expected-reports.awk" | grep -a -E "$bug_re")
if [ -z "$bugs" ]; then
	result 0 "kernel log clean during the cycles"
else
	printf '%s\n' "$bugs" | head -n 20 | sed 's/^/# /' | tee -a "$tap"
	result 1 "kernel log clean during the cycles"
fi
diag "cycles.sh: $done_cycles of $cycles cycles in $(($(date +%s) - start)) s"
[ "$n" = "$plan" ] || diag "ran $n tests, planned $plan"
exit $((failures > 0))
