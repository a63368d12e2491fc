#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm-tests.sh - run the percs selftests inside a VM (started by
# tools/vm/percs-vm with percs.ko already inserted; see selftests.mk).
#
# For each test program $PERCS_BUILD/selftests/NAME:
#   $PERCS_OUT/NAME.tap       its TAP output (stdout); NAME.log its stderr
#   $PERCS_OUT/NAME.expected  the number of tests it declares (its TAP plan),
#                             so a crash counts the missing tests as failed
# and lines per program in $PERCS_OUT/oracles.tap: the debugfs live
# counters are back to zero after it, the kernel log it caused is clean,
# kmemleak finds nothing (debug kernels: one scan per $PERCS_KMEMLEAK_EVERY
# programs, default 8, naming those programs, and a final one), every FOLL_PIN
# page is released,
# and rmmod succeeds leaving no engine thread (the module is then inserted
# again, with $PERCS_MODPARAMS, for the next program).
# On the stock kernel (PERCS_KERNEL_FLAVOR stock or unset) selftests/bench.sh
# (percs-bench, every subcommand once) runs after them as one more program
# named bench, selftests/mpi.sh (MPI programs under percs-run) as one
# named mpi, selftests/shmem.sh (OpenSHMEM programs) as one named shmem,
# selftests/installed.sh (programs built against a staged make install) as
# one named installed,
# selftests/verbs.sh (percs_verbs.ko and rdma-core's programs) as one
# named verbs, and selftests/peers.sh (the short peer comparison: rdma_rxe,
# perftest, Open MPI) as one named peers, with the same oracles; the debug
# kernels' passes skip them.
# Then selftests/module.sh (module parameters, rmmod, load/unload cycles)
# writes $PERCS_OUT/module.tap.
#
# A program NAME with a file selftests/NAME.modparams runs on a module
# inserted with those parameters (e.g. topology=3x4).
#
# Environment: PERCS_OUT (required), PERCS_SRC, PERCS_BUILD, PERCS_MODULE,
# PERCS_SELFTESTS="name ..." to run only some programs ("module" names
# module.sh, "bench" bench.sh), PERCS_TEST_TIMEOUT seconds per program
# (default 300; verbs.sh: PERCS_VERBS_TEST_TIMEOUT, default 900; shmem.sh:
# PERCS_SHMEM_TEST_TIMEOUT, default 600; mpi.sh: PERCS_MPI_TEST_TIMEOUT,
# default 900),
# PERCS_KERNEL_FLAVOR (stock, kasan, kcsan).
#
# Exit status: 0 if every line of every TAP file is ok, else 1.
#
# Every process this script starts costs about 0.4 s in the KASAN VM, a
# few seconds per program in all: the checks use bash builtins where a
# pipeline of small tools would do.

set -u

out=${PERCS_OUT:?PERCS_OUT must name the shared output directory}
here=$(cd "$(dirname "$0")" && pwd)
src=${PERCS_SRC:-$(dirname "$here")}
build=${PERCS_BUILD:-$src/build}
bindir=$build/selftests
per_test_timeout=${PERCS_TEST_TIMEOUT:-300}
only=${PERCS_SELFTESTS:-}
live=/sys/kernel/debug/percs/live
module=${PERCS_MODULE:-$src/percs.ko}
bug_re='BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|kernel BUG|list_add corruption|list_del corruption|refcount_t|soft lockup|hard LOCKUP|hung_task|blocked for more than|Call Trace'

failed=0
oracle_lines=()

wanted() {
	[ -z "$only" ] && return 0
	case " $only " in *" $1 "*) return 0 ;; esac
	return 1
}

# Kill whatever is left in session $1 (a test child that outlived a
# timed-out harness): only processes of the session we created.
kill_session() {
	local sid=$1 p stat rest
	for p in /proc/[0-9]*; do
		read -r stat < "$p/stat" 2>/dev/null || continue
		rest=${stat##*) }
		# fields after "comm)": state ppid pgrp session ...
		set -- $rest
		[ "${4:-}" = "$sid" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	return 0
}

live_counters() {
	local key val rest line= bad=0
	[ -r "$live" ] || { echo "missing"; return 1; }
	while read -r key val rest; do
		line+="$key=$val "
		[ "$val" = 0 ] || bad=1
	done <"$live"
	echo "$line"
	return $bad
}

# Wait up to 5 s for the live counters to drain (deferred releases).
live_zero() {
	local _
	for _ in $(seq 50); do
		live_counters >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

oracle() {
	oracle_lines+=("$1")
	case $1 in "not ok"*) failed=1 ;; esac
	echo "$1"
}

# Tests a program declares: its TAP plan, else its TEST macros.
declared_tests() {
	local name=$1
	if [ -n "$tap_plan" ]; then
		echo "$tap_plan"
		return
	fi
	grep -c -E '^TEST(_F)?(_SIGNAL|_TIMEOUT|_F_TIMEOUT)?\(' \
		"$src/selftests/$name.c" 2>/dev/null || echo 1
}

# Read NAME.tap once (builtins): its plan, ok and not-ok lines.
tap_scan() {
	local line
	tap_plan= tap_ok=0 tap_notok=0
	while IFS= read -r line; do
		case $line in
		"not ok"*) tap_notok=$((tap_notok + 1)) ;;
		ok*) tap_ok=$((tap_ok + 1)) ;;
		1..*)
			[ -z "$tap_plan" ] && [[ ${line#1..} == +([0-9]) ]] &&
				tap_plan=${line#1..}
			;;
		esac
	done <"$out/$1.tap"
}

# The kernel log's length in lines, and the log after the first N lines
# that is a bug report (not one a test expects: expected-reports.awk).
# One dmesg each and bash's own matching: the filter's three processes
# run only when a line matches, which is rare (a process costs ~0.4 s in
# the KASAN VM, and the filter read the whole log after every program).
dmesg_lines() {
	local -a log
	mapfile -t log <<<"$(dmesg)"
	echo "${#log[@]}"
}

new_kernel_bugs() {
	local -a log
	local line found=0
	mapfile -t -s "$1" log <<<"$(dmesg)"
	for line in "${log[@]}"; do
		[[ $line =~ $bug_re ]] && { found=1; break; }
	done
	[ $found = 1 ] || return 0
	printf '%s\n' "${log[@]}" |
		awk -f "$src/tools/vm/expected-reports.awk" | grep -a -E "$bug_re"
}

# run_one PATH [NAME]: a test program or script, by default named after it.
# run_one PROGRAM [NAME [TIMEOUT]]: TIMEOUT seconds, per_test_timeout by
# default.
run_one() {
	local bin=$1 name rc n sidfile dmesg_before new_bugs counters start
	local limit=${3:-$per_test_timeout}
	local -a log
	name=${2:-${bin##*/}}
	start=$EPOCHSECONDS
	sidfile=$(mktemp)
	echo "=== $name"
	dmesg_before=$(dmesg_lines)
	# A program that needs another system (NAME.modparams, e.g. a
	# topology) gets the module reinserted with those parameters; the
	# reload after it puts the default back.
	if [ -f "$src/selftests/$name.modparams" ]; then
		rmmod percs &&
		# shellcheck disable=SC2046 # parameters are words
		insmod "$module" ${PERCS_MODPARAMS:-} \
			$(cat "$src/selftests/$name.modparams") ||
			echo "run-vm-tests: cannot insert $module for $name" >&2
	fi
	# A new session, so that test children (the harness puts each in its
	# own process group) can be found and killed after a timeout.  stdout
	# goes to NAME.tap, stderr to NAME.log, both to the console as they
	# come (no process substitution: the VM has no /dev/fd).
	{
		# shellcheck disable=SC2016 # $$ and $1 are the inner shell's
		setsid -w sh -c 'echo $$ > "$1"; shift; exec timeout -k 10 "$@"' \
			sh "$sidfile" "$limit" "$bin" \
			2>&1 1>&3 3>&- | tee "$out/$name.log" >&2 3>&-
		echo "${PIPESTATUS[0]}" > "$sidfile.rc"
	} 3>&1 | tee "$out/$name.tap"
	rc=1
	[ -s "$sidfile.rc" ] && rc=$(<"$sidfile.rc")
	kill_session "$(<"$sidfile")"
	rm -f "$sidfile" "$sidfile.rc"
	tap_scan "$name"
	n=$(declared_tests "$name")
	echo "$n" > "$out/$name.expected"
	echo "# $name: $((EPOCHSECONDS - start)) s"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "# $name: killed after ${limit}s" |
			tee -a "$out/$name.tap"
	fi
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "# $name: exit status $rc"
	fi
	if [ "$tap_notok" -gt 0 ] || [ "$tap_ok" -lt "$n" ]; then
		failed=1
	fi

	if live_zero; then
		oracle "ok $((${#oracle_lines[@]} + 1)) - $name: live counters zero"
	else
		counters=$(live_counters)
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: live counters zero ($counters)"
	fi
	new_bugs=$(new_kernel_bugs "$dmesg_before")
	if [ -z "$new_bugs" ]; then
		oracle "ok $((${#oracle_lines[@]} + 1)) - $name: kernel log clean"
	else
		printf '%s\n' "$new_bugs" | head -n 20 | sed 's/^/# /'
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: kernel log clean"
	fi
	kmemleak_check "$name"
	foll_pin_check "$name"
	reload_check "$name"
}

# kmemleak (debug kernels): a scan after every $kmemleak_every programs,
# then what it found since the last clear, in an oracle line that names
# those programs; a leak found in a group is narrowed down with
# PERCS_SELFTESTS.  kmemleak reports only objects older than 5 s, so a
# leak from a group's last seconds shows up at the next group's scan or
# at the final check, which waits those 5 s before its scan.  A scan took
# 8-19 s in the KASAN VM: twelve programs a group, not eight (four scans a
# pass were over a minute of make check).
# Nothing to check where the kernel has no kmemleak.
kmemleak=/sys/kernel/debug/kmemleak
kmemleak_every=${PERCS_KMEMLEAK_EVERY:-12}
kmemleak_group=()
kmemleak_check() {
	local name=$1 final=${2:-} report
	[ -w "$kmemleak" ] || return 0
	if [ -z "$final" ]; then
		kmemleak_group+=("$name")
		[ "${#kmemleak_group[@]}" -ge "$kmemleak_every" ] || return 0
		name="${kmemleak_group[*]}"
	elif [ "${#kmemleak_group[@]}" -gt 0 ]; then
		name="${kmemleak_group[*]}, $name"
	fi
	kmemleak_group=()
	[ -n "$final" ] && sleep 5
	echo scan >"$kmemleak"
	report=$(cat "$kmemleak")
	echo clear >"$kmemleak"
	if [ -z "$report" ]; then
		oracle "ok $((${#oracle_lines[@]} + 1)) - $name: kmemleak finds nothing"
	else
		printf '%s\n' "$report" | head -n 30 | sed 's/^/# /'
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: kmemleak finds nothing"
	fi
}

# Pages pinned with FOLL_PIN are all released again.  The two counters
# are per-CPU: fold them first (stat_refresh), or a balanced pair can read
# unequal for a second.
foll_pin_check() {
	local name=$1 acq= rel= key val
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	while read -r key val; do
		case $key in
		nr_foll_pin_acquired) acq=$val ;;
		nr_foll_pin_released) rel=$val ;;
		esac
	done </proc/vmstat
	if [ "${acq:-0}" = "${rel:-0}" ]; then
		oracle "ok $((${#oracle_lines[@]} + 1)) - $name: pinned pages all released"
	else
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: pinned pages all released (acquired $acq, released $rel)"
	fi
}

# rmmod succeeds and leaves no engine thread; then the module goes back in
# for the next group.
reload_check() {
	local name=$1 err threads comm c
	if ! err=$(rmmod percs 2>&1); then
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: rmmod succeeds, no engine thread left ($err)"
		return
	fi
	threads=0
	for comm in /proc/[0-9]*/comm; do
		read -r c 2>/dev/null <"$comm" && [[ $c == percs* ]] &&
			threads=$((threads + 1))
	done
	if [ "$threads" -eq 0 ]; then
		oracle "ok $((${#oracle_lines[@]} + 1)) - $name: rmmod succeeds, no engine thread left"
	else
		oracle "not ok $((${#oracle_lines[@]} + 1)) - $name: rmmod succeeds, no engine thread left ($threads left)"
	fi
	# shellcheck disable=SC2086 # parameters are words
	insmod "$module" ${PERCS_MODPARAMS:-} || {
		echo "run-vm-tests: cannot insert $module again" >&2
		failed=1
	}
}

write_oracles() {
	{
		echo "TAP version 13"
		echo "1..${#oracle_lines[@]}"
		printf '%s\n' "${oracle_lines[@]}"
	} > "$out/oracles.tap"
	echo "${#oracle_lines[@]}" > "$out/oracles.expected"
}

mkdir -p "$out"
# What kmemleak knew before the tests is not ours.
[ -w "$kmemleak" ] && echo clear >"$kmemleak"
if ! [ -d "$bindir" ]; then
	echo "run-vm-tests: no test programs in $bindir (make selftests)" >&2
	oracle "not ok 1 - test programs built"
fi

for bin in "$bindir"/*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	wanted "${bin##*/}" || continue
	run_one "$bin"
done
# percs-bench against the real module: the stock kernel only (a smoke test
# of the tool, not of the kernel, which the programs above cover).
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted bench; then
	run_one "$src/selftests/bench.sh" bench
fi
# The MPI programs under percs-run (selftests/mpi.sh, TAP of its own):
# the stock kernel only, like bench (the messaging layer is userspace;
# the kernel paths it drives are the programs' above).
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted mpi; then
	run_one "$src/selftests/mpi.sh" mpi "${PERCS_MPI_TEST_TIMEOUT:-900}"
fi
# The OpenSHMEM programs (selftests/shmem.sh), likewise.
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted shmem; then
	run_one "$src/selftests/shmem.sh" shmem "${PERCS_SHMEM_TEST_TIMEOUT:-600}"
fi
# The programs built outside the tree against a staged make install
# (selftests/installed.sh), likewise: a few seconds.
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted installed; then
	run_one "$src/selftests/installed.sh" installed
fi
# The verbs device (percs_verbs.ko) under stock rdma-core programs: the
# stock kernel only (the debug kernels' builds have no ib_core to link to).
# Some 50 stock programs, pyverbs, UCX and Open MPI: ~3.5 minutes alone,
# more on a shared host, so a limit of its own.
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted verbs; then
	run_one "$src/selftests/verbs.sh" verbs "${PERCS_VERBS_TEST_TIMEOUT:-900}"
fi
# percs beside rdma_rxe + perftest and Open MPI, the short version of make
# bench-peers: about a minute, the stock kernel only (it needs ib_core).
if [ "${PERCS_KERNEL_FLAVOR:-stock}" = stock ] && wanted peers; then
	run_one "$src/selftests/peers.sh" peers "${PERCS_PEERS_TEST_TIMEOUT:-600}"
fi
# Leaks of the last program's final seconds.
[ ${#oracle_lines[@]} -gt 0 ] && kmemleak_check "all programs (final)" final
[ ${#oracle_lines[@]} -gt 0 ] && write_oracles

if wanted module; then
	echo "=== module.sh"
	start=$(date +%s)
	PERCS_OUT=$out PERCS_SRC=$src PERCS_BUILD=$build \
	PERCS_MODULE=${PERCS_MODULE:-$src/percs.ko} \
		timeout -k 10 "$per_test_timeout" bash "$src/selftests/module.sh"
	rc=$?
	echo "# module.sh: $(($(date +%s) - start)) s"
	[ "$rc" -eq 0 ] || { failed=1; echo "# module.sh: exit status $rc"; }
	if [ -s "$out/module.tap" ] && ! grep -q -E '^1\.\.[0-9]+' "$out/module.tap"; then
		echo "# module.sh: no plan" >> "$out/module.tap"
	fi
fi
wanted cycles && { echo "=== cycles.sh"; PERCS_OUT=$out PERCS_BUILD=$build PERCS_MODULE=$module timeout -k 10 "$per_test_timeout" bash "$src/selftests/cycles.sh" || failed=1; }

echo "run-vm-tests: $([ $failed -eq 0 ] && echo PASS || echo FAIL)"
exit $failed
