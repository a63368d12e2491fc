#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# percs demo: what `make run` executes inside the VM, with percs.ko loaded.
# Prints the emulated system, then runs `percs-bench all --quick` (about
# 40 seconds on TCG) and prints its tables: limits, engine cost, latency,
# bandwidth, RDMA, atomics, collectives, and the summary with the target
# checks.
#
# Paths: the tools are looked up in $PERCS_BUILD (default: build/ next to
# this script's tree).  Extra arguments are passed to percs-bench.
set -u

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${PERCS_BUILD:-$src/build}
ctl=$build/tools/percs-ctl
bench=$build/tools/percs-bench
sysfs=${PERCS_SYSFS_DIR:-/sys/class/percs}

say() {
	printf '\n== %s\n' "$*"
}

# Topology from sysfs, for when percs-ctl is not built.
sysfs_topology() {
	if [ ! -d "$sysfs" ]; then
		echo "demo: $sysfs missing: is percs.ko loaded?" >&2
		return 1
	fi
	if [ -d /sys/module/percs/parameters ]; then
		for p in /sys/module/percs/parameters/*; do
			printf '%s=%s ' "$(basename "$p")" "$(cat "$p")"
		done
		echo
	fi
	printf '%-12s %4s %9s %5s %8s %7s\n' device hub supernode unit windows in-use
	for d in $(ls -d "$sysfs"/percs-hfi* 2>/dev/null | sort -V); do
		printf '%-12s %4s %9s %5s %8s %7s\n' "$(basename "$d")" \
			"$(cat "$d/hub")" "$(cat "$d/supernode")" "$(cat "$d/unit")" \
			"$(cat "$d/windows_total")" "$(cat "$d/windows_in_use")"
	done
}

say "emulated system (uname -r: $(uname -r), $(nproc) CPUs)"
if [ -x "$ctl" ]; then
	"$ctl" topology && "$ctl" list || sysfs_topology
else
	echo "($ctl not built: reading $sysfs)"
	sysfs_topology || exit 1
fi

if [ ! -x "$bench" ]; then
	echo "demo: $bench not built (make all)" >&2
	exit 1
fi
say "percs-bench all --quick $*"
"$bench" all --quick "$@"
