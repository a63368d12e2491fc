#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mpi.sh - the MPI programs of selftests/mpi, run with percs-run inside
# the VM (run-vm-tests.sh runs it as the program "mpi" on the stock
# kernel), TAP on stdout.
#
# Each line is one job: its exit status and output are what the test
# wants, it ends within its time limit (a hang fails), and afterwards
# nothing is left reserved, mapped, registered or pinned (the debugfs
# live counters are all zero again).  Then percs-run's bad options.
#
# Environment: PERCS_BUILD (default build/ of this tree), PERCS_TEST_SCALE
# (the torture's message count scales with it).

set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
run=$build/tools/percs-run
bin=$build/mpi-tests
isr=/sys/kernel/debug/percs/isr
scale=${PERCS_TEST_SCALE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan=68
# shellcheck source=selftests/job-tap.sh
. "$here/job-tap.sh"

msgs=$(awk -v s="$scale" 'BEGIN { m = int(300 * s); print m < 20 ? 20 : m }')

job "hello, 1 rank" 0 'hello from rank 0 of 1' '' 60 -n 1 "$bin/hello"
job "hello, 4 ranks spread over supernodes" 0 'hello from rank 3 of 4' '' 60 \
	-n 4 "$bin/hello"
job "hello, 3 ranks packed on hub 0" 0 'rank 2 of 3 on .*-hub0-hfi0' '' 60 \
	-n 3 --placement packed "$bin/hello"
printf '# rank 0\n1 1\n\n0 0   # rank 1\n2 1\n' >"$tmp/map"
job "hello, map file places each rank" 0 'rank 1 of 3 on .*-hub0-hfi0' '' 60 \
	-n 3 --placement map "$tmp/map" "$bin/hello"
job "--tag-output prefixes each line with the rank" 0 '^\[2\] hello from rank 2 of 3' '' 60 \
	-n 3 --tag-output "$bin/hello"
job "ring, 5 ranks, vector datatype" 0 'token 200' '' 90 -n 5 "$bin/ring"
job "ping-pong 0 B .. 1 MiB, bytes checked" 0 '1048576' '' 240 -n 2 "$bin/pingpong" 50
job "torture, 4 ranks, $msgs messages each" 0 'torture: 4 ranks' '' 240 \
	-n 4 "$bin/torture" "$msgs"
# The bound holds on every rank, and senders did run out of credit.
PERCS_MSG_STATS=1 PERCS_MSG_UNEXPECTED=8192 PERCS_MSG_EAGER=1900 \
job "torture, 8 KiB unexpected bound, eager 1900 B" 0 'torture: 3 ranks' \
	'no_credit [1-9]' 240 -n 3 "$bin/torture" "$msgs"
if grep -q 'percs-msg: rank' "$tmp/err" &&
   awk '/percs-msg: rank/ { split($13, p, "/"); if (p[1] + 0 > p[2] + 0) bad = 1 }
	END { exit bad }' "$tmp/err"; then
	ok "unexpected eager bytes never above the 8 KiB bound"
else
	not_ok "unexpected eager bytes above the bound" "$tmp/err"
fi
PERCS_MSG_STATS=1 PERCS_MSG_UNEXPECTED=2048 \
job "8 ranks all to all, one slow receiver, 2 KiB bound" 0 'torture: 8 ranks' \
	'no_credit [1-9]' 300 -n 8 "$bin/torture" "$((msgs / 3))" slow
if [ -w "$isr/reorder_ppm" ]; then
	echo 300000 >"$isr/reorder_ppm"
	PERCS_MSG_STATS=1 \
	job "torture under reorder_ppm=300000 (non-overtaking)" 0 'torture: 4 ranks' \
		'out_of_order [1-9]' 240 -n 4 --placement packed "$bin/torture" "$msgs"
	echo 0 >"$isr/reorder_ppm"
else
	not_ok "torture under reorder: $isr/reorder_ppm is not writable"
fi
job "collectives, 1 rank" 0 'on 1 ranks' '' 60 -n 1 "$bin/coll"
job "collectives, 3 ranks" 0 'on 3 ranks' '' 120 -n 3 "$bin/coll"
job "collectives, 5 ranks" 0 'on 5 ranks' '' 180 -n 5 "$bin/coll"
job "collectives on 1 .. 16 ranks (sub-communicators), one 16-rank job" 0 \
	'on 1 \.\. 16 ranks' '' 240 -n 16 "$bin/coll" sweep
# Every algorithm, forced: set i gives each collective its i-th one (set
# 2 Rabenseifner's reduce too), each on a few communicator sizes (8 ranks
# take ~60 ms a collective on the VM); PERCS_COLLALGO_FULL=1 runs each set
# on every size 1 .. 16 instead (~10 min).
algo_set() {
	local set=$1 np=$2
	shift 2
	case $set in
	1) set -- dissemination binomial linear recursive_doubling ring pairwise \
		pairwise "$@" ;;
	2) set -- recursive_doubling pipelined rabenseifner rabenseifner \
		recursive_doubling bruck reduce_scatterv "$@" ;;
	3) set -- gather_bcast auto binomial reduce_bcast gather_bcast linear \
		auto "$@" ;;
	esac
	local sizes="${*:8}"
	PERCS_MPI_COLL_BARRIER=$1 PERCS_MPI_COLL_BCAST=$2 PERCS_MPI_COLL_REDUCE=$3 \
	PERCS_MPI_COLL_ALLREDUCE=$4 PERCS_MPI_COLL_ALLGATHER=$5 \
	PERCS_MPI_COLL_ALLTOALL=$6 PERCS_MPI_COLL_REDUCE_SCATTER=$7 \
	job "algorithms set $set ($1, $2, $3, $4, $5, $6, $7) on ${sizes:-1 .. $np} ranks" 0 \
		"collalgo: checked on .* ranks: barrier $1, bcast $2, reduce $3, .*reduce_scatter $7" '' \
		$((np > 8 ? 900 : 240)) -n "$np" "$bin/collalgo" "${@:8}"
}
if [ "${PERCS_COLLALGO_FULL:-0}" = 1 ]; then
	for set in 1 2 3; do
		algo_set $set 16
	done
else
	algo_set 1 6 1 3 6
	algo_set 2 7 2 5 7
	algo_set 3 8 5 8
fi
# The cau algorithm (barrier, bcast, reduce, allreduce on the CAU): 10
# ranks spread over the 8 hubs, 2 on hubs 0 and 4 (hierarchical: a
# leader per hub joins the tree), on 3 ranks (one a hub) and 10, 2% of
# the CAU's transfers dropped, duplicated and delayed; pairs the CAU
# cannot combine (the program's own ops) run in software under the
# forced name.
cau_env() {
	PERCS_MPI_STATS=1 PERCS_MPI_COLL_BARRIER=cau PERCS_MPI_COLL_BCAST=cau \
	PERCS_MPI_COLL_REDUCE=cau PERCS_MPI_COLL_ALLREDUCE=cau "$@"
}
cau_re='collalgo: checked on .* ranks: barrier cau, bcast cau, reduce cau, allreduce cau'
if [ -w "$isr/drop_ppm" ]; then
	for k in drop_ppm dup_ppm reorder_ppm; do echo 20000 >"$isr/$k"; done
	cau_env job "cau algorithm on 3 and 10 ranks (2 a hub on 2 hubs), CAU drop/dup/reorder 2%" 0 \
		"$cau_re" 'rank 0: cau algorithm: [1-9][0-9]* collectives on the CAU, [1-9]' \
		300 -n 10 "$bin/collalgo" 3 10
	for k in drop_ppm dup_ppm reorder_ppm; do echo 0 >"$isr/$k"; done
else
	not_ok "cau algorithm under faults: $isr/drop_ppm is not writable"
fi
# One hub: no tree, the hub's ranks combine in software.
cau_env job "cau algorithm, 3 ranks packed on one hub (no tree)" 0 "$cau_re" \
	'rank 0: cau algorithm: [1-9][0-9]* collectives on the CAU' 120 \
	-n 3 --placement packed "$bin/collalgo" 3
# The default choice: two ranks on two hubs stay in software (one message
# each way), three on three hubs take the CAU for barriers and short
# allreduces.
PERCS_MPI_STATS=1 job "auto: 2 ranks on 2 hubs, barrier and allreduce in software" 0 \
	'collalgo: checked' 'rank 0: cau algorithm: 0 collectives on the CAU' 120 \
	-n 2 "$bin/collalgo" 2
PERCS_MPI_STATS=1 job "auto: 3 ranks on 3 hubs, barrier and allreduce on the CAU" 0 \
	'collalgo: checked' 'rank 0: cau algorithm: [1-9][0-9]* collectives on the CAU' 120 \
	-n 3 "$bin/collalgo" 3
# Quota 1, taken by MPI_COMM_WORLD's tree (collalgo's first barrier):
# the sub-communicator gets none and runs in software, said once.
quota=/sys/module/percs/parameters/max_cau_trees_per_user
if old=$(cat "$quota" 2>/dev/null) && echo 1 >"$quota" 2>/dev/null; then
	cau_env job "cau algorithm past the CAU quota: software, said once" 0 "$cau_re" \
		'no CAU tree for communicator [0-9]+ \(Disk quota exceeded\): its collectives run in software' \
		120 -n 4 "$bin/collalgo" 4
	echo "$old" >"$quota"
	# On the CAU: the world's barrier and Comm_split's collective only.
	if grep -q 'rank 0: cau algorithm: 2 collectives on the CAU, [1-9]' "$tmp/err" &&
	   [ "$(grep -c 'no CAU tree' "$tmp/err")" = 1 ]; then
		ok "past the quota: only MPI_COMM_WORLD on the CAU, one message"
	else
		not_ok "past the quota: CAU used or message repeated" "$tmp/err"
	fi
else
	not_ok "cau fallback: $quota is not writable"
	not_ok "cau fallback: no quota test"
fi
# One rank: nothing to combine, no tree, no message.
PERCS_MPI_COLL_ALLREDUCE=cau \
job "a forced cau allreduce on 1 rank runs in software" 0 'collalgo: checked' '' 60 \
	-n 1 "$bin/collalgo" 1
PERCS_MPI_COLL_BCAST=binomal \
job "an unknown algorithm stops MPI_Init naming the variable and the valid ones" 12 '' \
	"MPI_Init: PERCS_MPI_COLL_BCAST='binomal' is no algorithm of BCAST \\(valid: auto, binomial, pipelined, cau\\)" \
	60 -n 2 "$bin/hello"
PERCS_MPI_COLL_ALLTOALL='' \
job "an empty algorithm name is refused too" 12 '' \
	"PERCS_MPI_COLL_ALLTOALL='' is no algorithm of ALLTOALL \\(valid: auto, pairwise, bruck, linear\\)" \
	60 -n 1 "$bin/hello"
job "non-blocking collectives vs blocking, no deadlock, 5 ranks" 0 \
	'nbc: every non-blocking collective on 5 ranks' '' 120 -n 5 "$bin/nbc"
job "pi by integration (Reduce, Allreduce), 5 ranks" 0 'pi: 3\.14159265' '' 60 \
	-n 5 "$bin/pi"
job "matrix-vector product with Allgather (seed 001), 6 ranks" 0 \
	'matvec: 203 x 203, 4 iterations on 6 ranks' '' 90 -n 6 "$bin/matvec"
job "2-D wavefront sweep from 4 corners (seed 000), 6 ranks" 0 \
	'sweep: 4 corners, 10 x 12 x 12 cells on a 2 x 3 grid' '' 90 -n 6 "$bin/sweep"
job "communicator split into rows and columns, 6 ranks" 0 'split: 3 x 2 grid' '' 60 \
	-n 6 "$bin/split"
job "struct and vector datatypes, 3 ranks" 0 'types: struct and vector' '' 60 \
	-n 3 "$bin/types"
job "buffered sends, Testsome, Reduce_scatter, 3 ranks" 0 'bsend: buffered sends' '' 90 \
	-n 3 "$bin/bsend"
job "bad arguments get their MPI error class" 0 'every bad argument' '' 60 \
	-n 2 "$bin/errors"
job "a fatal bad argument aborts the job naming the call" 6 '' \
	'MPI_Send: rank 7 is not in the communicator.*MPI_ERR_RANK' 60 \
	-n 2 "$bin/errors" fatal
job "a fatal bad argument to a non-blocking collective names the call" 8 '' \
	'MPI_Ibcast: root 7 is not in the communicator.*MPI_ERR_ROOT' 60 \
	-n 2 "$bin/errors" fatal-nbc
# A rendezvous whose read fails (cannot start: a read-only receive
# buffer; fails in flight: the send buffer unmapped) fails both sides.
job "a failed rendezvous read fails the receive and the send, no hang" 0 \
	'rndvfail: both sides saw each failed rendezvous' '' 60 -n 2 "$bin/rndvfail"
job "a fatal failed rendezvous send names the call and the cause" 15 '' \
	'MPI_Send: the receiver could not read the message.*MPI_ERR_OTHER' 60 \
	-n 2 "$bin/rndvfail" fatal
job "a rank killed mid-job: the others end, rank named" 137 '' \
	'rank 1 \(pid [0-9]+\) was killed by signal 9' 60 -n 3 "$bin/faults" kill
job "a rank exiting without MPI_Finalize ends the job" 1 '' \
	'rank 1 \(pid [0-9]+\) exited without finalizing' 60 -n 3 "$bin/faults" exit
job "MPI_Abort(7): the job exits 7" 7 '' 'rank 1 .*called abort with code 7' 60 \
	-n 3 "$bin/faults" abort
# A rank dies while the others are inside a collective (a forced
# algorithm per collective): every survivor's call returns
# MPI_ERR_PROC_ABORTED and it finalizes; percs-run exits with the dead
# rank's status, naming it.  Two lines each: the job, then every survivor
# said so.
coll_fail() {
	local coll=$1 algo=$2 how=$3 np=$4 rc=137 re='was killed by signal 9'
	local var
	var=PERCS_MPI_COLL_$(echo "$coll" | tr '[:lower:]' '[:upper:]')
	local -x "$var=$algo"
	if [ "$how" = exit ]; then
		rc=1
		re='exited without finalizing'
	fi
	job "rank 1 (${how}) inside $coll ($algo), $np ranks: MPI_ERR_PROC_ABORTED" \
		"$rc" "collfail: rank [0-9]+: $coll failed" \
		"rank 1 \\(pid [0-9]+\\) $re" 60 -n "$np" "$bin/collfail" "$coll" "$how" return
	if [ "$(grep -c "collfail: rank [0-9]*: $coll failed after .*MPI_ERR_PROC_ABORTED" "$tmp/out")" = $((np - 1)) ]; then
		ok "every one of the $((np - 1)) survivors of $coll ($algo) got the error"
	else
		not_ok "not every survivor of $coll ($algo) got the error" "$tmp/out" "$tmp/err"
	fi
}
coll_fail barrier dissemination kill 5
coll_fail bcast pipelined exit 6
coll_fail reduce binomial kill 4
coll_fail allreduce recursive_doubling kill 8
coll_fail allgather ring exit 7
coll_fail alltoall bruck kill 8
PERCS_MPI_COLL_ALLREDUCE=rabenseifner \
job "rank 1 killed inside Allreduce, fatal handler: a survivor aborts naming it" 137 '' \
	'MPI_Allreduce: rank 1 of MPI_COMM_WORLD died or ended without MPI_Finalize' \
	60 -n 6 "$bin/collfail" allreduce kill fatal
job "a program that cannot be run" 127 '' "cannot run '/nonexistent'" 30 \
	-n 2 /nonexistent

# The collectives' model (percs-bench model, tools/model), briefly: the
# file --calibrate writes is read back by MPI_Init (validate refuses to
# run without a model) and gives a point per algorithm; a corrupt file is
# refused by name and the program still runs.  Structure, not figures.
# The calibrate and validate pair (about 90 s on a loaded host) runs with
# PERCS_TEST_MODEL=1 only; reported as skipped otherwise.
model_run() {
	local name=$1 want_re=$2 start rc
	shift 2
	start=$(date +%s)
	PERCS_MODEL_BRIEF=1 PERCS_BUILD=$build timeout -k 5 120 \
		"$build/tools/percs-bench" model "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q -E -e "$want_re" "$tmp/out" && live_zero; then
		ok "$name ($(($(date +%s) - start)) s)"
	else
		not_ok "$name: exit $rc, or stdout lacks /$want_re/" "$tmp/out" "$tmp/err"
	fi
}
if [ "${PERCS_TEST_MODEL:-0}" = 1 ]; then
model_run "percs-bench model --calibrate writes the parameter file" \
	"model file written to $tmp/model" --calibrate --ranks 2 --classes same_hub \
	-o "$tmp/model"
if head -1 "$tmp/model" | grep -qx 'percs-mpi-model 1' &&
   grep -q '^l same_hub ' "$tmp/model" && grep -q '^round 2 ' "$tmp/model" &&
   grep -q '^cau_packet ' "$tmp/model"; then
	ok "the parameter file: version line, L same hub, rounds at 2 ranks, the CAU's"
else
	not_ok "the parameter file lacks lines" "$tmp/model"
fi
# 18 algorithms of five collectives at 8 B, 2 ranks.
model_run "percs-bench model: the file read back, every algorithm predicted" \
	'"points": 18,' --model "$tmp/model" --ranks 2 --sizes 8 --json
else
	for t in "percs-bench model --calibrate writes the parameter file" \
		 "the parameter file's lines" \
		 "percs-bench model: the file read back, every algorithm predicted"; do
		n=$((n + 1))
		echo "ok $n - $t # SKIP PERCS_TEST_MODEL=1 runs it (about 90 s)"
	done
fi
printf 'percs-mpi-model 1\nsizes 0 8\njunk 1\n' >"$tmp/badmodel"
PERCS_MPI_MODEL=$tmp/badmodel \
job "a corrupt model file: refused by name, the fixed rules run" 0 \
	'hello from rank 1 of 2' \
	"percs-mpi: model file refused, the fixed rules choose the collectives' algorithms: $tmp/badmodel: line 3: unknown item 'junk'" \
	60 -n 2 "$bin/hello"

# percs-run's own arguments: exit 2, a message naming the problem.
bad() {
	local name=$1 re=$2 rc
	shift 2
	"$run" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q -E -e "$re" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		ok "percs-run $name: exit 2, says why"
	else
		not_ok "percs-run $name: exit $rc" "$tmp/out" "$tmp/err"
	fi
}
bad "without -n" 'number of ranks is missing' "$bin/hello"
bad "-n 0" "-n wants a number of ranks from 1 to 4096, not '0'" -n 0 "$bin/hello"
bad "unknown placement" "unknown placement 'far'" -n 2 --placement far "$bin/hello"
bad "unknown binding" "unknown binding 'socket'" -n 2 --bind socket "$bin/hello"
bad "bad --grace" "--grace wants seconds from 0 to 3600, not '-1'" -n 2 --grace -1 "$bin/hello"
printf '0 0\n0 7\n' >"$tmp/badmap"
bad "map naming a missing HFI" 'no HFI 7 on hub 0' -n 2 --placement map "$tmp/badmap" "$bin/hello"
bad "unknown option / no program" "unknown option '--frobnicate'" --frobnicate -n 2

[ "$n" = "$plan" ] || echo "# mpi.sh: ran $n tests, planned $plan"
exit $failed
