#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs-vs-rxe.sh [-n ITERS] [PERCS_VERBS_KO]: perftest over the percs
# verbs device and over rdma_rxe (on a dummy netdev) in the same boot, one
# table: the figure of each, percs/rxe, the verbs calls percs made per
# operation and the floor they set, and the issue's target.
#
# Run as root in the test VM with percs.ko loaded, e.g.
#   tools/vm/percs-vm --module ./percs.ko -- tools/bench/verbs-vs-rxe.sh
# Latencies are perftest's t_typical (half round trip for send and write,
# the whole round trip for read and atomics, us); ib_write_bw is its BW
# average (MB/s) at 64 KiB.  Each program is a server and a client over
# localhost; percs runs between the two HFIs of hub 0 (percs0, percs1),
# rxe on one device.
#
# With uverbs ABI version 1 each post, poll and notify is a system call.
# "calls/op" counts them (the devices' hw_counters, both ends, before and
# after the run) per operation, leaving out the polls that found nothing;
# "floor" is calls/op times the cost of one verbs command measured here
# by verbs-floor ($PERCS_BUILD/tools/verbs-floor): the latency percs
# cannot go below while the data path is made of system calls.  Exit
# status 1 when a program failed (no result row), 0 otherwise: the
# targets are reported, not asserted.

set -u
iters=2000
if [ "${1:-}" = -n ]; then
	iters=$2
	shift 2
fi
here=$(cd "$(dirname "$0")" && pwd)
floor_bin=${PERCS_BUILD:-$here/../../build}/tools/verbs-floor
vko=${1:-$here/../../percs_verbs.ko}
scratch=$(mktemp -d)
failed=0

say() { echo "verbs-vs-rxe: $*" >&2; }

# shellcheck source=tools/bench/perftest.sh
. "$here/perftest.sh"

teardown() {
	rxe_teardown
	rm -rf "$scratch"
}

# run PROG COLUMN SDEV CDEV ARGS...: print the figure in COLUMN of the
# client's result row (5: t_typical of a latency test, 4: BW average of
# a bandwidth test), or nothing.
run() {
	local prog=$1 col=$2
	shift 2
	perftest_run "$prog" "$col" "$scratch/pt" "$@"
}

trap teardown EXIT
rxe_setup "$vko" || { say "cannot set up percs_verbs and rdma_rxe"; exit 1; }
sleep 1

# The productive verbs calls both percs devices served so far.
calls() {
	local d c s=0 v
	for d in percs0 percs1; do
		for c in post_send_calls post_recv_calls poll_cq_calls \
			 req_notify_calls; do
			read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/$c" ||
				return 1
			s=$((s + v))
		done
		read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/poll_cq_empty" ||
			return 1
		s=$((s - v))
	done
	echo "$s"
}

floor=$("$floor_bin" percs0)
call_ns=$(awk '$1 == "verbs_call_ns" { print $2 }' <<<"$floor")
sys_ns=$(awk '$1 == "syscall_ns" { print $2 }' <<<"$floor")
[ -n "$call_ns" ] || { say "$floor_bin failed"; failed=1; }
echo "one verbs command (an empty ibv_poll_cq on percs0): ${call_ns:-?} ns;" \
	"a bare system call: ${sys_ns:-?} ns"

printf '%-22s %9s %9s %9s %8s %8s %10s %s\n' test percs rxe percs/rxe \
	calls/op floor floor/rxe target
# name, program, column, operations per iteration (2: a ping-pong, two
# half round trips), target relation (le, ge, none) and value, args
while read -r name prog col per rel target args; do
	say "$name"
	c0=$(calls)
	# shellcheck disable=SC2086 # args are words
	p=$(run "$prog" "$col" percs0 percs1 $args)
	c1=$(calls)
	# shellcheck disable=SC2086
	r=$(run "$prog" "$col" pvrxe0 pvrxe0 -x 1 $args)
	[ -n "$p" ] && [ -n "$r" ] || failed=1
	n=$(awk '{ for (i = 1; i < NF; i++) if ($i == "-n") print $(i + 1) }' <<<"$args")
	awk -v n="$name" -v p="${p:-}" -v r="${r:-}" -v rel="$rel" -v t="$target" \
	    -v calls="$((${c1:-0} - ${c0:-0}))" -v ops="$((n * per))" \
	    -v cns="${call_ns:-}" '
	BEGIN {
		ratio = -1
		if (p != "" && r != "" && r > 0)
			ratio = p / r
		met = "no result"
		if (ratio >= 0 && rel == "le")
			met = ratio <= t ? "met" : "missed"
		if (ratio >= 0 && rel == "ge")
			met = ratio >= t ? "met" : "missed"
		rs = ratio < 0 ? "-" : sprintf("%.2f", ratio)
		op = rel == "le" ? "<= " t : ">= " t
		if (rel == "none") {
			op = "none"
			met = ratio < 0 ? "no result" : "-"
		}
		cpo = ops > 0 ? calls / ops : 0
		fl = "-"; flr = "-"
		# A floor for the latencies only: bandwidth is bound by the copy.
		if (rel != "ge" && cns != "") {
			fl = sprintf("%.2f", cpo * cns / 1000)
			if (r != "" && r > 0)
				flr = sprintf("%.2f", cpo * cns / 1000 / r)
		}
		printf "%-22s %9s %9s %9s %8.2f %8s %10s %s (%s)\n", n, \
			(p == "" ? "-" : p), (r == "" ? "-" : r), rs, cpo, \
			fl, flr, op, met
	}'
done <<EOT
ib_send_lat_us ib_send_lat 5 2 le 0.33 -n $iters
ib_write_lat_us ib_write_lat 5 2 le 0.33 -n $iters
ib_read_lat_us ib_read_lat 5 1 none 0 -n $((iters / 2))
ib_atomic_lat_us ib_atomic_lat 5 1 le 0.33 -n $((iters / 2))
ib_write_bw_64k_MBps ib_write_bw 4 1 ge 3 -n 300 -s 65536
EOT
exit $failed
