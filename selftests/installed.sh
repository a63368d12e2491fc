#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# installed.sh - the programs packaging/test-install.sh built outside the
# tree against a staged make install (DESTDIR=$PERCS_BUILD/pkg/stage,
# PREFIX=/usr; make pkg-install-tests), run inside the VM with the staged
# libpercs.so.1, percs-run and percs-oshrun (run-vm-tests.sh runs it as
# the program "installed" on the stock kernel).  TAP on stdout.
#
# Each run must exit 0 with its line on stdout and leave every debugfs
# live counter at zero.  A few seconds.

set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
stage=$build/pkg/stage
bin=$build/pkg/bin
run=$stage/usr/bin/percs-run
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan=4
# shellcheck source=selftests/job-tap.sh
. "$here/job-tap.sh"

if ! [ -x "$bin/selfsend" ] || ! [ -x "$run" ]; then
	for _ in $(seq "$plan"); do
		not_ok "no programs built against a staged install in $bin (make pkg-install-tests)"
	done
	exit 1
fi
export LD_LIBRARY_PATH=$stage/usr/lib

LD_TRACE_LOADED_OBJECTS=1 "$bin/selfsend" >"$tmp/out" 2>&1
if grep -q "libpercs.so.1 => $stage/usr/lib/libpercs.so.1" "$tmp/out"; then
	ok "selfsend loads the staged libpercs.so.1"
else
	not_ok "selfsend does not load $stage/usr/lib/libpercs.so.1" "$tmp/out"
fi

timeout -k 5 30 "$bin/selfsend" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^selfsend: 1000 + 96 bytes to itself' "$tmp/out" &&
   live_zero; then
	ok "selfsend (pkg-config libpercs): a window sends itself a FIFO packet and a line"
else
	not_ok "selfsend: exit $rc" "$tmp/out" "$tmp/err"
fi

job "mpi-ring (installed percs-cc), 4 ranks under the installed percs-run" 0 \
	'^mpi-ring: 4 ranks, ring and allreduce right' '' 60 -n 4 "$bin/mpi-ring"
run=$stage/usr/bin/percs-oshrun
job "shmem-ring (installed percs-oshcc), 3 PEs under the installed percs-oshrun" 0 \
	'^shmem-ring: 3 PEs, put and atomic add right' '' 60 -n 3 "$bin/shmem-ring"

[ "$n" = "$plan" ] || echo "# installed.sh: ran $n tests, planned $plan"
exit $failed
