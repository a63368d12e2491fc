#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# func-coverage.sh - which percs.ko functions each selftest program runs.
#
# Run inside a VM started by percs-vm with percs.ko inserted, on a kernel
# with kprobe events (Debian's; the debug kernels have none):
#
#   tools/vm/percs-vm --module percs.ko --out DIR \
#     --env PERCS_BUILD=$PWD/build --env PERCS_TEST_SCALE=0.05 \
#     -- tools/vm/func-coverage.sh
#
# A kprobe event on every function of the module counts its calls
# (kprobe_profile's hits; tracing stays off, so nothing is recorded).
# After each program, DIR/cov/NAME lists the functions whose count went
# up while it ran, one "hits function" per line; a program with a
# NAME.modparams file runs on a module inserted with them, as in
# run-vm-tests.sh.  tools/vm/coverage-cover.py turns the files into the
# cheapest set of programs that runs every function the whole set runs.
#
# Environment: PERCS_OUT (required), PERCS_BUILD, PERCS_MODULE,
# PERCS_SELFTESTS="name ..." (default: every program in build/selftests),
# PERCS_TEST_TIMEOUT seconds per program (default 300).

set -u
out=${PERCS_OUT:?PERCS_OUT must name the output directory}
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$(dirname "$here")")
build=${PERCS_BUILD:-$src/build}
module=${PERCS_MODULE:-$src/percs.ko}
limit=${PERCS_TEST_TIMEOUT:-300}
tr=/sys/kernel/tracing
group=percs_cov

[ -w "$tr/kprobe_events" ] || { echo "func-coverage: no kprobe events" >&2; exit 2; }
mkdir -p "$out/cov"
echo 0 >"$tr/tracing_on"

# Event f_N probes the module's Nth function; names as ftrace lists them
# (static functions included, suffixes like .isra.0 kept).
# (No process substitution: the VM has no /dev/fd.)
mapfile -t funcs <<<"$(awk '$2 == "[percs]" { print $1 }' \
	"$tr/available_filter_functions" | sort -u)"
[ -n "${funcs[0]}" ] || { echo "func-coverage: percs.ko not loaded" >&2; exit 2; }

probes_on() {
	local i refused=0
	# One write each: a refused probe (an __init function, gone after
	# the load) must not take the rest of its write with it.
	for i in "${!funcs[@]}"; do
		echo "p:$group/f_$i percs:${funcs[i]}" >>"$tr/kprobe_events" \
			2>/dev/null || refused=$((refused + 1))
	done
	[ "$refused" = 0 ] ||
		echo "func-coverage: $refused functions cannot be probed" >&2
	echo 1 >"$tr/events/$group/enable"
}

probes_off() {
	echo 0 >"$tr/events/$group/enable"
	echo "-:$group/*" >>"$tr/kprobe_events" 2>/dev/null ||
		: >"$tr/kprobe_events"
}

# hits[f_N] from kprobe_profile ("EVENT HITS MISSES").
declare -A before after
snapshot() {
	local -n into=$1
	local ev hits rest
	into=()
	while read -r ev hits rest; do
		# shellcheck disable=SC2034 # a nameref: the caller's array
		into[${ev##*/}]=$hits
	done <"$tr/kprobe_profile"
}

reinsert() {
	probes_off
	rmmod percs || return 1
	# shellcheck disable=SC2086 # parameters are words
	insmod "$module" $1 || return 1
	probes_on
}

probes_on
echo "func-coverage: ${#funcs[@]} functions probed"
for bin in "$build"/selftests/*; do
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		continue
	fi
	name=${bin##*/}
	if [ -n "${PERCS_SELFTESTS:-}" ]; then
		case " $PERCS_SELFTESTS " in *" $name "*) ;; *) continue ;; esac
	fi
	params=
	[ -f "$src/selftests/$name.modparams" ] &&
		params=$(<"$src/selftests/$name.modparams")
	[ -n "$params" ] && { reinsert "$params" || exit 1; }
	snapshot before
	start=$EPOCHSECONDS
	timeout -k 10 "$limit" "$bin" >"$out/cov/$name.tap" 2>&1
	rc=$?
	snapshot after
	: >"$out/cov/$name"
	for ev in "${!after[@]}"; do
		d=$((after[$ev] - ${before[$ev]:-0}))
		[ "$d" -gt 0 ] && echo "$d ${funcs[${ev#f_}]}" >>"$out/cov/$name"
	done
	echo "$((EPOCHSECONDS - start)) s exit $rc" >"$out/cov/$name.time"
	echo "func-coverage: $name: $(wc -l <"$out/cov/$name") functions, exit $rc, $((EPOCHSECONDS - start)) s"
	[ -n "$params" ] && { reinsert "" || exit 1; }
done
probes_off
exit 0
