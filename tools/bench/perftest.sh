# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# perftest.sh: sourced by what runs perftest (or another server/client
# pair of rdma-core programs) over the percs verbs device and rdma_rxe:
# tools/bench/peers.sh, verbs-vs-rxe.sh and selftests/verbs.sh.
#
#   rxe_setup VERBS_KO   load ib_uverbs and percs_verbs.ko (unless loaded),
#                        rdma_rxe (with crc32_generic, which it needs) on a
#                        dummy netdev: devices percs0.. and pvrxe0
#   rxe_teardown         remove pvrxe0 and its netdev, and percs_verbs if
#                        rxe_setup inserted it (percs.ko can then go)
#   perftest_pair PREFIX PROG SERVER_DEV CLIENT_DEV ARGS...
#                        PROG as server and client over localhost (the
#                        next port of $perftest_port, each end killed after
#                        $perftest_timeout s); PREFIX.server and
#                        PREFIX.client keep their output, $perftest_src
#                        and $perftest_crc their exit statuses
#   perftest_run PROG COLUMN PREFIX SERVER_DEV CLIENT_DEV ARGS...
#                        perftest_pair, then print the figure in COLUMN of
#                        the client's first result row (5: t_typical of a
#                        latency test, 4: BW average of a bandwidth test, 5:
#                        its message rate), or nothing
#   perftest_listening PORT
#                        wait up to 20 s until something listens on PORT
#
# perftest gives up on a bandwidth report ("Correlation coefficient r^2")
# when the TCG vCPU's clock is too noisy to calibrate; that says nothing of
# the device, so the pair runs again, up to three times in all.

perftest_port=${perftest_port:-19615}
perftest_timeout=${perftest_timeout:-120}

rxe_setup() {
	modprobe ib_uverbs || return 1
	if ! grep -q '^percs_verbs ' /proc/modules; then
		insmod "$1" || return 1
		rxe_inserted_verbs=1
	fi
	modprobe crc32_generic && modprobe rdma_rxe && modprobe dummy ||
		return 1
	ip link add pvbench0 type dummy &&
	ip addr add 10.77.0.1/24 dev pvbench0 &&
	ip link set pvbench0 up &&
	rdma link add pvrxe0 type rxe netdev pvbench0 || return 1
	udevadm settle 2>/dev/null
	return 0
}

rxe_teardown() {
	rdma link delete pvrxe0 2>/dev/null
	ip link delete pvbench0 2>/dev/null
	[ -z "${rxe_inserted_verbs:-}" ] || rmmod percs_verbs
}

# Wait up to 20 s until something listens on TCP port $1.
perftest_listening() {
	local hex _
	hex=$(printf ':%04X ' "$1")
	for _ in $(seq 200); do
		grep -q -E "${hex}[0-9A-F:]+ 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null &&
			return 0
		sleep 0.1
	done
	return 1
}

perftest_pair() {
	local prefix=$1 prog=$2 sdev=$3 cdev=$4 spid try
	shift 4
	for try in 1 2 3; do
		perftest_port=$((perftest_port + 1))
		timeout "$perftest_timeout" "$prog" -d "$sdev" \
			-p "$perftest_port" "$@" >"$prefix.server" 2>&1 &
		spid=$!
		perftest_listening "$perftest_port"
		timeout "$perftest_timeout" "$prog" -d "$cdev" \
			-p "$perftest_port" "$@" localhost >"$prefix.client" 2>&1
		perftest_crc=$?
		wait "$spid"
		perftest_src=$?
		grep -q "Correlation coefficient r^2" "$prefix.client" \
			"$prefix.server" || break
		echo "perftest: $prog could not calibrate its clock (try $try)" >&2
	done
}

perftest_run() {
	local prog=$1 col=$2 prefix=$3
	shift 3
	perftest_pair "$prefix" "$prog" "$@"
	awk -v c="$col" '/^ +[0-9]+ +[0-9]+ +[0-9.]+/ { print $c; exit }' \
		"$prefix.client"
}
