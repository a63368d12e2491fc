#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shmem.sh - the OpenSHMEM programs of selftests/shmem, built with
# percs-oshcc, run with percs-run inside the VM (run-vm-tests.sh runs it
# as the program "shmem" on the stock kernel), TAP on stdout.
#
# Each line is one job: its exit status and output are what the test
# wants (every program checks its own answers and exits non-zero naming
# what is wrong), it ends within its time limit (a hang fails), and
# afterwards nothing is left reserved, mapped, registered or pinned (the
# debugfs live counters are all zero again).  PE counts are a sample of
# 1 .. 16 (about 3 minutes in all on a loaded 2-vCPU TCG VM): up to 8
# PEs spread one per hub (teams get CAU trees), more share hubs
# (software collectives), and PERCS_SHMEM_NO_CAU forces software.  The
# reductions alone cover every N of 1 .. 16: one 16-PE job runs them on
# a team of each size (sizes up to 8 on CAU trees, the rest in software).
#
# Environment: PERCS_BUILD (default build/ of this tree).

set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
run=$build/tools/percs-run
oshrun=$build/tools/percs-oshrun
bin=$build/shmem-tests
isr=/sys/kernel/debug/percs/isr
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Small heaps: up to 16 PEs pin theirs at once in a 2 GiB VM.
export SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-4M}

plan=31
# shellcheck source=selftests/job-tap.sh
. "$here/job-tap.sh"

for np in 1 5 16; do
	job "hello, $np PEs" 0 "hello from PE $((np - 1)) of $np" '' 90 -n $np "$bin/hello"
done
job "hello through start_pes/_my_pe/_num_pes, 3 PEs" 0 'hello from PE 2 of 3' '' 60 \
	-n 3 "$bin/hello" old
# percs-oshrun is the same launcher.
if [ "$(readlink "$oshrun")" = percs-run ] &&
   timeout 60 "$oshrun" -n 2 "$bin/hello" >"$tmp/out" 2>&1 &&
   grep -q 'hello from PE 1 of 2' "$tmp/out"; then
	ok "percs-oshrun starts the PEs as percs-run does"
else
	not_ok "percs-oshrun" "$tmp/out"
fi
for np in 1 8; do
	job "put/get ring, $np PEs" 0 "ring: $np PEs" '' 120 -n $np "$bin/ring"
done
job "put/get ring, 4 PEs packed on hub 0" 0 'ring: 4 PEs' '' 120 \
	-n 4 --placement packed "$bin/ring"
for np in 4 11; do
	job "atomics, histogram, work queue, lock, $np PEs" 0 "atomics: $np PEs" '' 180 \
		-n $np "$bin/atomics" 12
done
for np in 2 16; do
	job "stencil halo with puts + wait_until, $np PEs" 0 "stencil: $np PEs" '' 180 \
		-n $np "$bin/stencil" 3 24 8
done
for np in 1 8; do
	job "reductions of every type and op (CAU), collectives, teams, $np PEs" 0 \
		"coll: $np PEs" '' 240 -n $np "$bin/coll"
done
# Every size 1 .. 16 in one 16-PE job: each size checks 1 in 16 of the
# types and ops, all of them over the sweep (~40 s); with
# PERCS_SHMEM_SIZES_FULL=1 every size checks every type and op (375 s).
if [ "${PERCS_SHMEM_SIZES_FULL:-0}" = 1 ]; then
	stride=1 limit=900
else
	stride=16 limit=240
fi
job "reductions on teams of every size 1 .. 16 (1 in $stride types and ops a size), 16 PEs" 0 \
	"coll sizes: teams of 1 \\.\\. 16 PEs, 1 in $stride types and ops a size" '' $limit \
	-n 16 "$bin/coll" sizes $stride
PERCS_SHMEM_NO_CAU=1 \
job "reductions in software (PERCS_SHMEM_NO_CAU), 5 PEs" 0 'coll: 5 PEs' '' 240 \
	-n 5 "$bin/coll"
if [ -w "$isr/reorder_ppm" ]; then
	echo 300000 >"$isr/reorder_ppm"
	job "fence and quiet order puts under reorder_ppm=300000, 3 PEs" 0 \
		'order: 3 PEs, 20 rounds' '' 180 -n 3 "$bin/order" 20
	echo 0 >"$isr/reorder_ppm"
else
	not_ok "order under reorder: $isr/reorder_ppm is not writable"
fi
for np in 1 2 7; do
	job "put-with-signal, alltoalls, vector waits, split_2d, contexts, $np PEs" 0 \
		"signal: $np PEs" '' 180 -n $np "$bin/signal" 4
done
job "SHMEM_THREAD_SERIALIZED: 4 threads a PE interleave puts, atomics, quiet, 3 PEs" 0 \
	'threads: 3 PEs x 4 threads x 64 rounds, SHMEM_THREAD_SERIALIZED' '' 120 \
	-n 3 "$bin/threads" 64
job "an unknown signal operation aborts naming the call" 1 '' \
	'PE 0: shmem_putmem_signal: no signal operation 7' 60 -n 2 "$bin/bad" sigop
job "a signal word outside symmetric memory aborts" 1 '' \
	'PE 0: shmem_putmem_signal: sig_addr 0x[0-9a-f]+ is not symmetric' 60 -n 2 "$bin/bad" sigaddr
job "a PE outside a team context's team aborts naming the call" 1 '' \
	"PE 0: shmem_ctx_long_p: PE 1 is out of the context's team \\(0 \\.\\. 0\\)" 60 -n 2 "$bin/bad" ctxpe
job "an unknown team config_mask bit aborts naming the call" 1 '' \
	'PE [01]: shmem_team_split_strided: unknown bits 0x4 in config_mask' 60 -n 2 "$bin/bad" config
job "a put to a stack address aborts naming the call" 1 '' \
	'PE 0: shmem_putmem: address .* is not symmetric' 60 -n 2 "$bin/bad" nonsym
job "a PE out of range aborts naming the call" 1 '' \
	'PE 0: shmem_long_p: PE 2 is out of range \(0 \.\. 1\)' 60 -n 2 "$bin/bad" pe
job "use before shmem_init aborts naming the call" 1 '' \
	'PE 0: shmem_getmem: called before shmem_init' 60 -n 1 "$bin/bad" preinit
job "shmem_free of a non-heap pointer aborts" 1 '' \
	'shmem_free: 0x[0-9a-f]+ was not returned by shmem_malloc' 60 -n 2 "$bin/bad" free
job "an unknown comparison aborts" 1 '' \
	'shmem_int_wait_until: no comparison 42' 60 -n 2 "$bin/bad" cmp
job "shmem_global_exit(5) ends the job with 5" 5 '' \
	'rank 2 .*called abort with code 5' 60 -n 3 "$bin/bad" exit

[ "$n" = "$plan" ] || { echo "# shmem.sh: ran $n tests, planned $plan"; failed=1; }
exit $failed
