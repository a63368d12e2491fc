#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh SRC BUILD: make check's stages after the dependencies, in lanes,
# so that the host's two cores are busy while a VM leaves one idle (a VM
# under TCG runs most programs on one vCPU: the host sat ~40% idle through
# the VM passes when they ran one after another).
#
#   build        make all, on every CPU
#   pkg-install  the staged make install that the stock VM's "installed"
#                program runs (part of the pkg tests)
#   vm-stock     the stock kernel's VM pass.  Its timing programs (hybrid's
#                free-CPU latency, the clock page) need an idle host: the VM
#                runs them first (PERCS_QUIET_FIRST, see vm-tests.sh) and
#                then writes quiet-done into its output directory.  Only
#                then do the other two lanes start, beside the rest of it:
#   debug lane   vm-kasan and vm-kcsan, both VMs at once
#   host lane    lint, unit, fuzz, vm-selftest (percs-vm's own tests),
#                pkg-dkms, pkg-deb, one after another
#
# The stock lane prints as it goes; the other lanes write LANE.log in
# BUILD/check-logs (tail -f it to follow them), printed whole when the
# lane ends.  Each stage's time goes to BUILD/results/stage-times, and the
# last lines are summary.sh's.  Exit status: summary.sh's.

set -uo pipefail
src=${1:?usage: check.sh SRC BUILD}
build=${2:?usage: check.sh SRC BUILD}
make=${MAKE:-make}
jobs=${CHECK_JOBS:-$(nproc)}
results=$build/results
logs=$build/check-logs
quiet=$build/vm-out-stock/quiet-done
start=$EPOCHSECONDS

stage() {
	"$src/scripts/stage-time.sh" "$results" "$@"
}

# lane NAME STAGE...: run the stages (each "name command words", as one
# string) one after another, output into NAME.log, then print that log
# whole (one lane at a time, not interleaved with another's).
lane() {
	local name=$1 s
	shift
	for s in "$@"; do
		# shellcheck disable=SC2086 # a stage is words
		stage $s
	done >"$logs/$name.log" 2>&1
	{
		flock 9
		echo "==== make check: the $name lane ===="
		cat "$logs/$name.log"
	} 9>"$logs/.print-lock"
}

# Start once the stock VM's quiet programs are done, or the stock lane
# has ended without saying so (it failed to boot, or ran none of them).
wait_quiet() {
	while ! [ -e "$quiet" ] && kill -0 "$stock_pid" 2>/dev/null; do
		sleep 2
	done
}

rm -rf "$results" "$logs"
mkdir -p "$results" "$logs"
rm -f "$quiet"

stage build "$make" -j"$jobs" all
stage pkg-install "$make" pkg-install-tests

stage vm-stock "$make" vm-tests VM_SELFTEST=0 VM_PKG_INSTALL=0 &
stock_pid=$!

(
	wait_quiet
	echo "make check: the stock VM's timing programs are done" \
		"($((EPOCHSECONDS - start)) s); starting the debug and host lanes"
	lane vm-kasan "vm-kasan $make vm-tests-kasan" &
	lane vm-kcsan "vm-kcsan $make vm-tests-kcsan" &
	lane host "lint $make lint" "unit $make -j$jobs unit-tests" \
		"fuzz $make fm-fuzz" "vm-selftest $make vm-selftest" \
		"pkg-dkms $make pkg-dkms-tests" "pkg-deb $make pkg-deb-tests" &
	wait
) &
others_pid=$!

wait "$stock_pid"
wait "$others_pid"
echo $((EPOCHSECONDS - start)) >"$results/wall-time"
"$src/scripts/summary.sh" "$results"
