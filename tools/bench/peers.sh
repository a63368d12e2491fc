#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# peers.sh [--quick] [--ranks "2 4 8 16"] [--out DIR]: percs side by side
# with its peers in one boot (Documentation/benchmarks.rst, "Peers"):
#
#   - rdma_rxe on a dummy netdev driven by perftest (ib_send_lat,
#     ib_write_lat, ib_read_lat, ib_atomic_lat, ib_write_bw, ib_read_bw,
#     ib_atomic_bw), the same perftest binaries over the percs verbs device
#     (percs0 <-> percs1, hub 0) and percs's native equivalents
#     (percs-bench lat, rdma, atomic);
#   - Open MPI over shared memory (mpirun, btl self,vader) against percs's
#     MPI (percs-run, packed on hub 0): tools/bench/mpi-peer.c built with
#     mpicc and with percs-cc, 8-byte ping-pong, 1 MiB streaming,
#     MPI_Allreduce and MPI_Barrier for each rank count of --ranks, and
#     percs's again spread over the hubs with the CAU on (the cau
#     algorithm) and off (software forced);
#   - the limits (percs-bench limits: cache line, memcpy, system call).
#
# Run as root in the test VM with percs.ko loaded, e.g. make bench-peers or
#   tools/vm/percs-vm --module ./percs.ko -- tools/bench/peers.sh --out DIR
# Writes DIR/peers.txt (the table, also on stdout), peers.json, peers.csv,
# peers.png and the raw measurements in DIR/raw (for tools/bench/peers-report
# --from). --quick: few iterations, ranks "2" (make check's version).
# Exit status 1 when a measure has no figure (each missing one is named
# with its reason), 2 for bad usage; targets are reported, not asserted.
#
# Environment: PERCS_BUILD (default build/ of this tree).

set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$here/../../build}
src=$(cd "$here/../.." && pwd)
quick=
ranks=
out=

usage() { sed -n '4,26p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=--quick ;;
	--ranks | --out)
		[ $# -ge 2 ] && [ -n "$2" ] ||
			{ echo "peers.sh: $1 needs a value" >&2; exit 2; }
		if [ "$1" = --out ]; then out=$2; else ranks=$2; fi
		shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "peers.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
for r in ${ranks:-2}; do
	[[ $r =~ ^[0-9]+$ ]] && [ "$r" -ge 2 ] && [ "$r" -le 16 ] ||
		{ echo "peers.sh: --ranks: '$r' is not a rank count 2..16" >&2; exit 2; }
done
[ -n "$ranks" ] || ranks=$([ -n "$quick" ] && echo 2 || echo "2 4 8 16")
[ -n "$out" ] || { echo "peers.sh: --out DIR is required" >&2; exit 2; }
raw=$out/raw
t_start=$SECONDS
mkdir -p "$raw" || exit 1
: >"$raw/failures"

say() { echo "peers: $((SECONDS - t_start)) s: $*" >&2; }
# fail WHAT REASON: the measure WHAT has no figure, and why.
fail() { echo "$1: $2" >>"$raw/failures"; say "FAILED $1: $2"; }

bench=$build/tools/percs-bench
run=$build/tools/percs-run
mpi_percs=$build/tools/mpi-peer-percs
mpi_ompi=$build/tools/mpi-peer-ompi
vko=${PERCS_VERBS_MODULE:-$src/percs_verbs.ko}

# --- the limits and percs's native figures (percs-bench, JSON)
iters=$([ -n "$quick" ] && echo 1000 || echo 10000)
native() {	# native NAME ARGS...: percs-bench -q --json ARGS > raw/NAME.json
	local name=$1
	shift
	say "percs-bench $*"
	"$bench" -q --json "$@" >"$raw/$name.json" 2>"$raw/$name.err" ||
		fail "percs-bench $*" "exit $?: $(tail -n 3 "$raw/$name.err")"
}
native limits limits $quick
native lat lat --kind imm --mode kick --pair near --sizes 8 --iters "$iters"
native rdma rdma $quick
native atomic atomic --pair near --mode kick $quick

# --- perftest over rdma_rxe and over the percs verbs device
# shellcheck source=tools/bench/perftest.sh
. "$here/perftest.sh"
lat_n=$([ -n "$quick" ] && echo 100 || echo 2000)
bw_n=$([ -n "$quick" ] && echo 5 || echo 200)
if rxe_setup "$vko" >"$raw/rxe-setup.log" 2>&1; then
	trap rxe_teardown EXIT
	# name, program, column of the client's row, arguments
	while read -r name prog col args; do
		for dev in percs rxe; do
			if [ $dev = percs ]; then set -- percs0 percs1; else set -- pvrxe0 pvrxe0 -x 1; fi
			say "$prog over $dev"
			# shellcheck disable=SC2086 # args are words
			v=$(perftest_run "$prog" "$col" "$raw/$name.$dev" "$@" $args)
			if [ -n "$v" ]; then
				echo "$v" >"$raw/$name.$dev.value"
			else
				fail "$prog over $dev" "no result row: $(tail -n 2 "$raw/$name.$dev.client" | tr '\n' ' ')"
			fi
		done
	done <<-EOT
	ib_send_lat ib_send_lat 5 -n $lat_n
	ib_write_lat ib_write_lat 5 -n $lat_n
	ib_read_lat ib_read_lat 5 -n $lat_n
	ib_atomic_lat ib_atomic_lat 5 -n $lat_n -A FETCH_AND_ADD
	ib_write_bw ib_write_bw 4 -n $bw_n -s 1048576
	ib_read_bw ib_read_bw 4 -n $bw_n -s 1048576
	ib_atomic_bw ib_atomic_bw 5 -n $((bw_n * 40)) -A FETCH_AND_ADD
	EOT
	rxe_teardown
	trap - EXIT
else
	rxe_teardown
	fail "rdma_rxe and percs_verbs" "cannot set them up: $(tail -n 3 "$raw/rxe-setup.log" | tr '\n' ' ')"
fi

# --- MPI: one source, Open MPI over shared memory and percs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmo=$([ -n "$quick" ] && echo 120 || echo 600)
mpi() {	# mpi IMPL N WHAT...: raw/mpi-IMPL-N.jsonl
	local impl=$1 n=$2 f=$raw/mpi-$1-$2 rc
	shift 2
	say "MPI $impl: $*, $n ranks"
	if [ "$impl" = ompi ]; then
		# vader, busy-polling ranks yield when more ranks than CPUs
		timeout "$tmo" mpirun --oversubscribe --bind-to none -np "$n" \
			--mca pml ob1 --mca btl self,vader --mca mpi_yield_when_idle 1 \
			"$mpi_ompi" $quick "$@" >"$f.jsonl" 2>"$f.err"
	elif [ "$impl" = percs ]; then
		timeout "$tmo" "$run" -n "$n" --placement packed \
			"$mpi_percs" $quick "$@" >"$f.jsonl" 2>"$f.err"
	else
		# Spread, one rank a hub up to 8: CAU on (the cau algorithm)
		# and off (the software default's algorithms) on one placement.
		local a=recursive_doubling b=dissemination
		[ "$impl" = percs-cau ] && a=cau b=cau
		PERCS_MPI_COLL_ALLREDUCE=$a PERCS_MPI_COLL_BARRIER=$b \
		timeout "$tmo" "$run" -n "$n" "$mpi_percs" $quick "$@" \
			>"$f.jsonl" 2>"$f.err"
	fi
	rc=$?
	[ "$rc" -eq 0 ] && grep -q '^{' "$f.jsonl" ||
		fail "MPI $impl $* $n ranks" "exit $rc: $(tail -n 3 "$f.err" | tr '\n' ' ')"
}
# One launch per rank count (a launch costs seconds in the VM); the
# point-to-point figures come from the 2-rank one.
for impl in ompi percs; do
	# shellcheck disable=SC2086 # ranks is words
	for n in $(printf '%s\n' 2 $ranks | sort -n -u); do
		what=coll
		[ "$n" = 2 ] && what="p2p coll"
		case " $ranks " in *" $n "*) ;; *) what=p2p ;; esac
		# shellcheck disable=SC2086 # what is words
		mpi "$impl" "$n" $what
	done
done
# shellcheck disable=SC2086 # ranks is words
for n in $ranks; do
	mpi percs-cau "$n" coll
	mpi percs-sw "$n" coll
done
echo "$ranks" >"$raw/ranks"
echo $((SECONDS - t_start)) >"$raw/seconds"

# --- the table, JSON, CSV and chart
python3 -I "$here/peers-report" --from "$raw" --out "$out" --plot "$out/peers.png"
rc=$?
[ -s "$raw/failures" ] && { say "measures without a figure:"; sed 's/^/  /' "$raw/failures" >&2; }
[ "$rc" -eq 0 ] && ! [ -s "$raw/failures" ]
