#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# module.sh - module parameter, rmmod and load/unload tests for percs.ko.
#
# Run as root inside the test VM with percs.ko loaded (default parameters).
# Writes TAP to $PERCS_OUT/module.tap (and stdout), the planned count to
# $PERCS_OUT/module.expected; leaves the module loaded with its defaults.
#
# Environment: PERCS_OUT, PERCS_MODULE (path of percs.ko), PERCS_BUILD
# (for build/selftests/helpers/pt-helper), PERCS_LOAD_CYCLES (default 5:
# run-vm-tests.sh also unloads and reloads the module after every program,
# some forty times a pass, each after traffic),
# PERCS_BAD_PARAMS=some (the debug kernels: one rejected parameter of
# each kind - topology counts, topology spec, windows_per_hfi, cau_trees -
# and the others reported as skipped; each rejected insmod loads the
# whole module, about 2 s under KASAN, and the stock pass runs them all).

set -u

out=${PERCS_OUT:?}
ko=${PERCS_MODULE:?PERCS_MODULE must name percs.ko}
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
helper=$build/selftests/helpers/pt-helper
cycles=${PERCS_LOAD_CYCLES:-5}
bad_params=${PERCS_BAD_PARAMS:-all}
tap=$out/module.tap
plan=21

n=0
failures=0
holder=

exec 3> "$tap"
emit() {
	echo "$*"
	echo "$*" >&3
}
ok() {
	n=$((n + 1))
	emit "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failures=$((failures + 1))
	emit "not ok $n - $1"
}
skip() {
	n=$((n + 1))
	emit "ok $n - $1 # SKIP $2"
}
diag() {
	emit "# $*"
}
# check DESCRIPTION COMMAND...: one TAP line from a command's status
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

loaded() {
	grep -q '^percs ' /proc/modules
}

unload() {
	loaded || return 0
	rmmod percs
}

load() {
	insmod "$ko" "$@"
}

# The module is gone without a trace: no module, class, devices, debugfs.
nothing_left() {
	local ok=0
	loaded && { diag "percs still in /proc/modules"; ok=1; }
	[ -e /sys/kernel/debug/percs ] && { diag "debugfs percs left"; ok=1; }
	[ -e /sys/class/percs ] && { diag "/sys/class/percs left"; ok=1; }
	[ -e /sys/module/percs ] && { diag "/sys/module/percs left"; ok=1; }
	compgen -G '/dev/percs-hfi*' >/dev/null && { diag "/dev/percs-hfi* left"; ok=1; }
	grep -q ' percs$' /proc/devices && { diag "chrdev region left"; ok=1; }
	return $ok
}

live_zero() {
	[ -r /sys/kernel/debug/percs/live ] &&
		awk '$2 != 0 { bad = 1 } END { exit bad }' \
			/sys/kernel/debug/percs/live
}

# Start "pt-helper MODE 0 0" in the background; wait for its ready line.
start_holder() {
	local mode=$1 fifo line
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	"$helper" "$mode" 0 0 > "$fifo" &
	holder=$!
	if ! read -r -t 30 line < "$fifo" || [ "${line%% *}" != ready ]; then
		diag "pt-helper $mode did not get ready: '${line:-}'"
		rm -f "$fifo"
		stop_holder
		return 1
	fi
	rm -f "$fifo"
	return 0
}

stop_holder() {
	[ -n "$holder" ] || return 0
	kill -TERM "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	holder=
}

# test: rmmod with a window fd (or only a mapping) open fails, the module
# stays usable, and unloads once the window is gone.
test_rmmod_busy() {
	local mode=$1 what=$2 err
	if ! loaded && ! load; then
		not_ok "rmmod with a $what open: module loads"
		return
	fi
	if ! start_holder "$mode"; then
		not_ok "rmmod with a $what open fails with EAGAIN (in use), module stays"
		not_ok "after closing the $what, rmmod succeeds and nothing is left"
		return
	fi
	err=$("$helper" delmod percs)
	# delete_module answers EWOULDBLOCK (== EAGAIN) for a module in use;
	# afterwards the module still works: another window can be reserved.
	if [ "$err" = EAGAIN ] && loaded &&
	   [ "$(cat /sys/class/percs/percs-hfi0/windows_in_use)" = 1 ] &&
	   [ "$("$helper" reserve 0 1)" = ok ]; then
		ok "rmmod with a $what open fails with EAGAIN (in use), module stays"
	else
		diag "delete_module: $err"
		not_ok "rmmod with a $what open fails with EAGAIN (in use), module stays"
	fi
	stop_holder
	if live_zero && rmmod percs && nothing_left; then
		ok "after closing the $what, rmmod succeeds and nothing is left"
	else
		not_ok "after closing the $what, rmmod succeeds and nothing is left"
	fi
}

# test: insmod with invalid parameters fails with EINVAL and the log
# explains why.
test_bad_param() {
	local params=$1 msg=$2 sample=${3:-} err before log
	if [ "$bad_params" = some ] && [ -z "$sample" ]; then
		skip "insmod $params fails with EINVAL: \"$msg\"" \
			"PERCS_BAD_PARAMS=some: one case of each kind"
		return
	fi
	unload
	before=$(dmesg | wc -l)
	err=$("$helper" loadmod "$ko" "$params")
	log=$(dmesg | tail -n +"$((before + 1))")
	if [ "$err" = EINVAL ] && ! loaded && grep -qF "percs: $msg" <<< "$log" &&
	   nothing_left; then
		ok "insmod $params fails with EINVAL: \"$msg\""
	else
		diag "finit_module: $err"
		printf '%s\n' "$log" | tail -n 5 | sed 's/^/#   dmesg: /' |
			tee -a "$tap"
		unload
		not_ok "insmod $params fails with EINVAL: \"$msg\""
	fi
}

# test: a non-default topology shows the right devices and attributes.
test_topology() {
	local sn=3 hps=2 wph=16 nhfi i bad=0 d hub unit
	unload
	if ! load supernodes=$sn hubs_per_supernode=$hps windows_per_hfi=$wph; then
		not_ok "supernodes=$sn hubs_per_supernode=$hps windows_per_hfi=$wph loads"
		return
	fi
	nhfi=$((sn * hps * 2))
	d=$(ls /sys/class/percs | wc -l)
	[ "$d" = "$nhfi" ] || { diag "$d HFI devices, expected $nhfi"; bad=1; }
	[ -e "/dev/percs-hfi$nhfi" ] && { diag "/dev/percs-hfi$nhfi exists"; bad=1; }
	for ((i = 0; i < nhfi; i++)); do
		d=/sys/class/percs/percs-hfi$i
		hub=$((i / 2))
		unit=$((i % 2))
		[ -c "/dev/percs-hfi$i" ] || { diag "no /dev/percs-hfi$i"; bad=1; }
		[ "$(cat $d/hub 2>&1)" = $hub ] || { diag "$d/hub"; bad=1; }
		[ "$(cat $d/unit 2>&1)" = $unit ] || { diag "$d/unit"; bad=1; }
		[ "$(cat $d/supernode 2>&1)" = $((hub / hps)) ] || { diag "$d/supernode"; bad=1; }
		[ "$(cat $d/windows_total 2>&1)" = $wph ] || { diag "$d/windows_total"; bad=1; }
		[ "$(cat $d/windows_in_use 2>&1)" = 0 ] || { diag "$d/windows_in_use"; bad=1; }
	done
	for p in supernodes:$sn hubs_per_supernode:$hps windows_per_hfi:$wph; do
		[ "$(cat /sys/module/percs/parameters/${p%%:*} 2>&1)" = "${p#*:}" ] ||
			{ diag "parameter ${p%%:*}"; bad=1; }
	done
	if [ $bad = 0 ]; then
		ok "supernodes=$sn hubs_per_supernode=$hps windows_per_hfi=$wph: $nhfi HFIs with the right attributes"
	else
		not_ok "supernodes=$sn hubs_per_supernode=$hps windows_per_hfi=$wph: $nhfi HFIs with the right attributes"
	fi
	unload
}

# test: cau_trees at its bounds loads; the parameter and debugfs percs/cau
# show the table size.
test_cau_trees() {
	local v bad=0 cau=/sys/kernel/debug/percs/cau
	for v in 1 4096; do
		unload
		if ! load cau_trees=$v; then
			diag "insmod cau_trees=$v failed"
			bad=1
			continue
		fi
		[ "$(cat /sys/module/percs/parameters/cau_trees 2>&1)" = $v ] ||
			{ diag "cau_trees=$v: parameter reads $(cat /sys/module/percs/parameters/cau_trees 2>&1)"; bad=1; }
		[ "$(head -n 1 $cau 2>&1)" = "entries $v" ] ||
			{ diag "cau_trees=$v: $cau starts '$(head -n 1 $cau 2>&1)'"; bad=1; }
		[ "$(wc -l < $cau)" = 1 ] ||
			{ diag "cau_trees=$v: $cau has more than its entries line"; bad=1; }
	done
	unload
	if [ $bad = 0 ]; then
		ok "cau_trees=1 and cau_trees=4096 load; percs/cau shows the table size"
	else
		not_ok "cau_trees=1 and cau_trees=4096 load; percs/cau shows the table size"
	fi
}

test_cycles() {
	local i bad=0
	unload
	for ((i = 0; i < cycles; i++)); do
		if ! load; then diag "cycle $i: insmod failed"; bad=1; break; fi
		if ! [ -c /dev/percs-hfi0 ] || ! live_zero; then
			diag "cycle $i: no device or live counters not zero"
			bad=1
		fi
		if ! rmmod percs; then diag "cycle $i: rmmod failed"; bad=1; break; fi
	done
	if [ $bad = 0 ] && nothing_left; then
		ok "$cycles load/unload cycles leave nothing behind"
	else
		not_ok "$cycles load/unload cycles leave nothing behind"
	fi
}

emit "TAP version 13"
emit "1..$plan"
echo "$plan" > "$out/module.expected"

if ! [ -x "$helper" ]; then
	diag "no $helper (make selftests)"
	exit 1
fi
dmesg_start=$(dmesg | wc -l)

test_rmmod_busy hold "window fd"
test_rmmod_busy hold-map "window mapping (fd closed)"
test_bad_param "hubs_per_supernode=0" \
	"bad topology: hubs_per_supernode=0: a supernode has 1..32 hubs"
test_bad_param "hubs_per_supernode=33" \
	"bad topology: hubs_per_supernode=33: a supernode has 1..32 hubs"
test_bad_param "supernodes=0" \
	"bad topology: supernodes=0: the system has 1..513 supernodes"
test_bad_param "supernodes=18 hubs_per_supernode=1" \
	"bad topology: supernodes=18: at most 17 with 1 hubs per supernode and 16 D ports per hub" \
	sample
test_bad_param "topology=2y4" \
	"bad topology \"2y4\": topology spec: expected 'x' between supernodes and hubs per supernode at column 2, found 'y'"
test_bad_param "topology=2x4,dpair=99" \
	"bad topology \"2x4,dpair=99\": dpair=99: at most 64 D links per pair of 2 supernodes of 4 hubs with 16 D ports per hub" \
	sample
test_bad_param "topology=33x32" \
	"bad topology \"33x32\": 1056 hubs, the module emulates at most 1024"
test_bad_param "topology=3x4 supernodes=3" \
	"topology=3x4: give a topology spec or supernodes= and hubs_per_supernode=, not both"
test_bad_param "windows_per_hfi=0" "windows_per_hfi=0: must be 1..4096"
test_bad_param "windows_per_hfi=5000" "windows_per_hfi=5000: must be 1..4096" \
	sample
test_bad_param "cau_trees=0" "cau_trees=0: must be 1..4096" sample
test_bad_param "cau_trees=5000" "cau_trees=5000: must be 1..4096"
test_cau_trees
test_topology
test_cycles

# The module is left loaded with its defaults for whatever runs next.
if load && [ -c /dev/percs-hfi0 ] && live_zero; then
	ok "reload with default parameters"
else
	not_ok "reload with default parameters"
fi

bugs=$(dmesg | tail -n +"$((dmesg_start + 1))" |
	awk -f "$here/../tools/vm/expected-reports.awk" |
	grep -a -E 'BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|refcount_t|Call Trace')
if [ -z "$bugs" ]; then
	ok "kernel log clean during module tests"
else
	printf '%s\n' "$bugs" | head -n 20 | sed 's/^/# /' | tee -a "$tap"
	not_ok "kernel log clean during module tests"
fi

[ "$n" = "$plan" ] || diag "ran $n tests, planned $plan"
exit $((failures > 0))
