#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh SRC BUILD: make check's stages after the dependencies, one after
# another, each timed (scripts/stage-time.sh into BUILD/results/stage-times)
# and each a make target of its own:
#
#   build        make all, on every CPU
#   lint, unit, fuzz
#   pkg          make install into a staging root (which the stock VM's
#                "installed" program runs), DKMS, make deb
#   vm-selftest  percs-vm's own tests
#   vm-stock     the stock kernel's VM pass (its make target would run
#                pkg-install-tests and vm-selftest again: told not to)
#   vm-kasan, vm-kcsan  the debug kernels' passes
#
# Side by side they were slower: with the debug VMs and the host stages
# started beside the stock pass (the host sat ~40% idle through a VM
# pass), every stage ran 3-4 times slower (the KCSAN pass 1331 s against
# 368, the unit tests 437 s against 132) and the whole run took longer.
# The last lines are summary.sh's; the exit status is its.

set -uo pipefail
src=${1:?usage: check.sh SRC BUILD}
build=${2:?usage: check.sh SRC BUILD}
make=${MAKE:-make}
jobs=${CHECK_JOBS:-$(nproc)}
results=$build/results
start=$EPOCHSECONDS

# shellcheck source=scripts/ccache-env.sh
. "$src/scripts/ccache-env.sh" "$src"

stage() {
	"$src/scripts/stage-time.sh" "$results" "$@"
}

rm -rf "$results"
mkdir -p "$results"

stage build "$make" -j"$jobs" all
stage lint "$make" lint
stage unit "$make" -j"$jobs" unit-tests
stage fuzz "$make" fm-fuzz
stage pkg "$make" -j"$jobs" pkg-tests
stage vm-selftest "$make" vm-selftest
stage vm-stock "$make" vm-tests VM_SELFTEST=0 VM_PKG_INSTALL=0
stage vm-kasan "$make" vm-tests-kasan
stage vm-kcsan "$make" vm-tests-kcsan

echo $((EPOCHSECONDS - start)) >"$results/wall-time"
if [ -n "${CCACHE_DIR:-}" ]; then
	echo "make check: compiler cache $CCACHE_DIR: $(ccache -s 2>/dev/null |
		awk '/^ *Hits:/ { h = $2 } /^ *Misses:/ { m = $2 }
		     END { printf "%d hits, %d misses", h, m }')"
fi
"$src/scripts/summary.sh" "$results"
