#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verbs.sh - percs_verbs.ko under stock rdma-core programs (ibverbs-utils,
# perftest), as Debian ships them, through the hfi1verbs provider.
#
# Run as root inside the test VM with percs.ko loaded (default 2x4
# topology).  Loads ib_uverbs and percs_verbs.ko (beside $PERCS_MODULE),
# runs each program as a server/client pair over localhost TCP for the
# out-of-band exchange, between two HFIs of one hub and between HFIs of
# different supernodes, and unloads percs_verbs again.  A pair passes when
# both ends exit 0 and print their result; payloads are checked (-c)
# where the program can.  TAP on stdout (run-vm-tests.sh keeps it as
# $PERCS_OUT/verbs.tap).
#
# Environment: PERCS_MODULE, PERCS_BUILD (for
# helpers/verbs-attack), PERCS_VERBS_TIMEOUT seconds per program
# (default 60).

set -u

ko=${PERCS_MODULE:?PERCS_MODULE must name percs.ko}
vko=$(dirname "$ko")/percs_verbs.ko
here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
attack=$build/selftests/helpers/verbs-attack
tmo=${PERCS_VERBS_TIMEOUT:-60}
knobs=/sys/kernel/debug/percs/isr
links=$knobs/links
scratch=$(mktemp -d)
plan=56

n=0
failures=0
port=18515
# The server/client runner (perftest_pair), its ports below $port's.
perftest_port=18000
perftest_timeout=$tmo
# shellcheck source=tools/bench/perftest.sh
. "$here/../tools/bench/perftest.sh"

emit() { echo "$*"; }
ok() { n=$((n + 1)); emit "ok $n - $1"; }
not_ok() { n=$((n + 1)); failures=$((failures + 1)); emit "not ok $n - $1"; }
skip() { n=$((n + 1)); emit "ok $n - $1 # SKIP $2"; }
diag() { emit "# $*"; }
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

emit "TAP version 13"
emit "1..$plan"

# pair DESC PATTERN PROG SERVER_DEV CLIENT_DEV [ARGS...]: run PROG as
# server on SERVER_DEV and client on CLIENT_DEV with the same ARGS
# (perftest_pair, which runs a pair again when perftest could not
# calibrate its clock under TCG); both must exit 0 and the client print a
# line matching PATTERN (extended regexp; perftest's servers print no
# result for reads and atomics).
pair() {
	local desc=$1 pat=$2 line
	shift 2
	perftest_pair "$scratch/pair" "$@" 2>"$scratch/pair.note"
	while read -r line; do diag "$line"; done <"$scratch/pair.note"
	if [ "$perftest_src" -eq 0 ] && [ "$perftest_crc" -eq 0 ] &&
	   grep -q -E "$pat" "$scratch/pair.client"; then
		ok "$desc"
	else
		not_ok "$desc (server exit $perftest_src, client exit $perftest_crc)"
		diag "server:"; head -n 30 "$scratch/pair.server" | sed 's/^/#   /'
		diag "client:"; head -n 30 "$scratch/pair.client" | sed 's/^/#   /'
	fi
}

# Sum of the packets column of isr/links.
link_packets() {
	awk '{ s += $9 } END { print s + 0 }' "$links"
}

nr_hfis=$(ls -d /sys/class/percs/percs-hfi* 2>/dev/null | wc -l)
last=$((nr_hfis - 1))
sn_last=$(cat "/sys/class/percs/percs-hfi$last/supernode" 2>/dev/null)
one_hub="percs0 percs1"
far="percs0 percs$last"
diag "$nr_hfis HFIs; percs$last is on supernode $sn_last"

# 1-2: load
modprobe ib_uverbs
check "insmod percs_verbs.ko" insmod "$vko"
udevadm settle 2>/dev/null
devs=$(ibv_devices 2>&1)
listed=0
for ((i = 0; i < nr_hfis; i++)); do
	grep -q -E "^\s+percs$i\s" <<<"$devs" && listed=$((listed + 1))
done
check "ibv_devices lists every HFI ($listed of $nr_hfis)" [ "$listed" -eq "$nr_hfis" ]

# 3-6: ibv_devinfo
info=$(ibv_devinfo -v -d "percs$last" 2>&1)
check "ibv_devinfo: port active" grep -q -E "state:\s+PORT_ACTIVE" <<<"$info"
check "ibv_devinfo: LID of HFI $last is $((last + 1))" \
	grep -q -E "port_lid:\s+$((last + 1))$" <<<"$info"
check "ibv_devinfo: atomic capability" grep -q -E "atomic_cap:\s+ATOMIC_HCA" <<<"$info"
check "ibv_devinfo: InfiniBand link layer, GID fe80::GUID" \
	grep -q -E "GID\[\s*0\]:\s+fe80(:0000)*:0250:4552:4353:000f|GID\[\s*0\]:\s+fe80::250:4552:4353:f" <<<"$info"

# 7-16: the rdma-core examples, checking the payload (-c)
pp='[0-9]+ iters in'
for where in one_hub far; do
	set -- ${!where}
	pair "ibv_rc_pingpong -c, $1 <-> $2" "$pp" ibv_rc_pingpong "$1" "$2" -n 50 -c
	pair "ibv_rc_pingpong -c -e (completion events), $1 <-> $2" "$pp" ibv_rc_pingpong "$1" "$2" -n 50 -c -e
	pair "ibv_uc_pingpong -c, $1 <-> $2" "$pp" ibv_uc_pingpong "$1" "$2" -n 50 -c
	pair "ibv_ud_pingpong -c, $1 <-> $2" "$pp" ibv_ud_pingpong "$1" "$2" -n 50 -c
	pair "ibv_srq_pingpong -c, $1 <-> $2" "$pp" ibv_srq_pingpong "$1" "$2" -n 50 -c
done

# 17-18: RC with the network's fault knobs on
for k in drop_ppm dup_ppm reorder_ppm; do echo 200000 >"$knobs/$k"; done
pair "ibv_rc_pingpong -c with drop/dup/reorder knobs at 20%" "$pp" \
	ibv_rc_pingpong percs0 "percs$last" -n 50 -c
pair "ibv_rc_pingpong -c -s 65536 with the knobs at 20%" "$pp" \
	ibv_rc_pingpong percs0 "percs$last" -n 20 -s 65536 -c
for k in drop_ppm dup_ppm reorder_ppm; do echo 0 >"$knobs/$k"; done

# 19-30: perftest, each result row (bytes, iterations, then figures)
row='^ +[0-9]+ +[0-9]+ +[0-9.]+'
for where in one_hub far; do
	set -- ${!where}
	pair "ib_send_lat, $1 <-> $2" "$row" ib_send_lat "$1" "$2" -n 200
	diag "ib_send_lat $1 <-> $2: $(grep -E "$row" "$scratch/cli.txt" | head -1)"
	pair "ib_write_lat, $1 <-> $2" "$row" ib_write_lat "$1" "$2" -n 200
	pair "ib_read_lat, $1 <-> $2" "$row" ib_read_lat "$1" "$2" -n 200
	pair "ib_atomic_lat FETCH_AND_ADD, $1 <-> $2" "$row" ib_atomic_lat "$1" "$2" -n 200 -A FETCH_AND_ADD
	pair "ib_atomic_lat CMP_AND_SWAP, $1 <-> $2" "$row" ib_atomic_lat "$1" "$2" -n 200 -A CMP_AND_SWAP
done
before=$(link_packets)
pair "ib_write_bw -s 65536, percs0 <-> percs$last" "$row" ib_write_bw percs0 "percs$last" -n 100 -s 65536
diag "ib_write_bw: $(grep -E "$row" "$scratch/cli.txt" | head -1)"
after=$(link_packets)
# 100 x 64 KiB cut into 2 KiB packets: at least 3200 packets per hop.
check "link counters carry the verbs traffic ($((after - before)) packets)" \
	[ $((after - before)) -ge 3200 ]
# The other bandwidth tests, and perftest over UC and UD
far_dev=percs$last
pair "ib_send_bw, percs0 <-> $far_dev" "$row" ib_send_bw percs0 "$far_dev" -n 100
pair "ib_read_bw, percs0 <-> $far_dev" "$row" ib_read_bw percs0 "$far_dev" -n 100
pair "ib_atomic_bw, percs0 <-> $far_dev" "$row" ib_atomic_bw percs0 "$far_dev" -n 100
pair "ib_send_bw -c UC, percs0 <-> $far_dev" "$row" ib_send_bw percs0 "$far_dev" -n 100 -c UC
pair "ib_send_bw -c UD, percs0 <-> $far_dev" "$row" ib_send_bw percs0 "$far_dev" -n 100 -c UD
pair "ib_write_lat -c UC, percs0 <-> $far_dev" "$row" ib_write_lat percs0 "$far_dev" -n 100 -c UC

# 37-41: a native window cannot reach a verbs QP's window
if [ -x "$attack" ]; then
	port=$((port + 1))
	timeout "$tmo" ibv_rc_pingpong -d percs2 -p "$port" -n 1 >"$scratch/hold.txt" 2>&1 &
	hold=$!
	perftest_listening "$port"
	inuse=$(cat /sys/class/percs/percs-hfi2/windows_in_use)
	check "a verbs QP holds a window of its HFI (windows_in_use $inuse)" \
		[ "$inuse" -eq 1 ]
	ctlout=$("$build/tools/percs-ctl" windows --hfi 2 2>&1)
	check "percs-ctl windows shows it as a verbs QP (mode qp)" \
		grep -q -E '^ *2 +0 +[0-9]+ .* qp ' <<<"$ctlout"
	"$attack" 1 0 >"$scratch/attack.txt" 2>&1
	arc=$?
	sed 's/^/# /' "$scratch/attack.txt"
	check "the verbs QP window is in a job of its own (no native job)" \
		grep -q "^ok the verbs QP window is in a job of its own" "$scratch/attack.txt"
	check "native FIFO packet to a verbs QP window refused (EACCES), nothing received" \
		[ "$arc" -eq 0 ]
	# Release the waiting server: a client that connects and leaves.
	timeout "$tmo" ibv_rc_pingpong -d percs3 -p "$port" -n 1 localhost >/dev/null 2>&1
	wait "$hold"
	inuse=$(cat /sys/class/percs/percs-hfi2/windows_in_use)
	check "the window is released with the QP (windows_in_use $inuse)" \
		[ "$inuse" -eq 0 ]
else
	skip "a verbs QP holds a window of its HFI" "no $attack"
	skip "percs-ctl windows shows it as a verbs QP" "no $attack"
	skip "the verbs QP window is in a job of its own" "no $attack"
	skip "native FIFO packet to a verbs QP window refused" "no $attack"
	skip "the window is released with the QP" "no $attack"
fi

# 42-43: an MR is charged to RLIMIT_MEMLOCK as a native registration: a
# user without CAP_IPC_LOCK (nobody) cannot register 1 MiB under a
# 128 KiB limit, and can under 64 MiB (the server then waits: killed)
chmod 666 /dev/infiniband/uverbs* 2>/dev/null
memlock_try() {
	local limit=$1
	port=$((port + 1))
	( ulimit -l "$limit" && exec setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all ibv_rc_pingpong -d percs0 \
		-p "$port" -s 1048576 -n 1 ) >"$scratch/memlock.txt" 2>&1 &
	local pid=$! hex _
	hex=$(printf ':%04X ' "$port")
	for _ in $(seq 200); do
		if grep -q -E "$hex[0-9A-F:]+ 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			echo listening
			return
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
	cat "$scratch/memlock.txt"
}
got=$(memlock_try 128)
check "RLIMIT_MEMLOCK 128 KiB: a 1 MiB MR is refused (nobody)" \
	grep -q "Couldn't register MR" <<<"$got"
got=$(memlock_try 65536)
check "RLIMIT_MEMLOCK 64 MiB: the 1 MiB MR is registered (nobody)" \
	[ "$got" = listening ]

# 44: rdma-core's python tests (python3-pyverbs) on percs0.  The
# tests dir ships partly gzipped; Debian's python3 has pyverbs.
pytests="test_device test_pd test_mr test_cq test_cq_events test_qp test_atomic test_addr test_shared_pd test_cqex test_qpex"
if [ -d /usr/share/doc/rdma-core/tests ] && /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	cp -r /usr/share/doc/rdma-core/tests "$scratch/pyt"
	gunzip -f "$scratch"/pyt/*.gz
	# shellcheck disable=SC2086 # test names are words
	timeout 600 /usr/bin/python3 "$scratch/pyt/run_tests.py" --dev percs0 -v \
		$pytests >"$scratch/py.txt" 2>&1
	prc=$?
	diag "pyverbs: $(grep -E '^(Ran|OK|FAILED)' "$scratch/py.txt" | tr '\n' ' ')"
	grep -E '\.\.\. (FAIL|ERROR)' "$scratch/py.txt" | head -n 20 | sed 's/^/#   /'
	check "rdma-core python tests on percs0: no failure or error" \
		[ "$prc" -eq 0 ]
else
	skip "rdma-core python tests" "python3-pyverbs not installed"
fi

# 45-47: the verbs calls each device served, in its port's hw_counters
# (ABI 1: each is a system call), and verbs-floor, the cost of one
hwc() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo -1; }
s0=$(hwc percs0 post_send_calls) r1=$(hwc percs1 post_recv_calls)
p0=$(hwc percs0 poll_cq_calls) e0=$(hwc percs0 poll_cq_empty)
pair "ibv_rc_pingpong -n 50 for the counters" "$pp" ibv_rc_pingpong percs0 percs1 -n 50
s0=$(($(hwc percs0 post_send_calls) - s0)) r1=$(($(hwc percs1 post_recv_calls) - r1))
p0=$(($(hwc percs0 poll_cq_calls) - p0)) e0=$(($(hwc percs0 poll_cq_empty) - e0))
diag "hw_counters over 50 ping-pongs: percs0 post_send $s0, poll_cq $p0 ($e0 empty); percs1 post_recv $r1"
check "hw_counters count posts and polls (post_send >= 50, post_recv >= 50, polls > empty)" \
	[ "$s0" -ge 50 ] && [ "$r1" -ge 50 ] && [ "$p0" -gt "$e0" ] && [ "$e0" -ge 0 ]
floor_out=$("$build/tools/verbs-floor" percs0 1000 2>&1)
"$build/tools/verbs-floor" percs0 10 >/dev/null 2>&1
bad=$?
diag "verbs-floor: $(tr '\n' ' ' <<<"$floor_out")"
check "verbs-floor measures a verbs command and a system call; refuses CALLS 10 (exit $bad)" \
	grep -q -E '^verbs_call_ns [1-9][0-9]*$' <<<"$floor_out" &&
	grep -q -E '^syscall_ns [1-9][0-9]*$' <<<"$floor_out" && [ "$bad" -eq 2 ]

# 48-50: UCX (Debian's ucx-utils) on the verbs devices: its transports
# list them, and ucx_perftest runs over rc_verbs (UCX connects its RC QPs
# through UD, so a first request may find the peer not yet ready: the ACK
# timeout and retry; it flushes with zero-length RDMA writes) across
# supernodes
if command -v ucx_perftest >/dev/null; then
	uinfo=$(ucx_info -d 2>&1)
	check "ucx_info -d: rc_verbs and ud_verbs on percs0:1" \
		grep -q -E "Device: percs0:1" <<<"$uinfo"
	for t in "tag_lat -n 200" "tag_bw -s 65536 -n 50"; do
		port=$((port + 1))
		# shellcheck disable=SC2086 # $t is words
		UCX_NET_DEVICES=percs0:1 UCX_TLS=rc_verbs,ud_verbs,self \
			timeout "$tmo" ucx_perftest -t $t -p "$port" >"$scratch/srv.txt" 2>&1 &
		spid=$!
		perftest_listening "$port"
		# shellcheck disable=SC2086
		UCX_NET_DEVICES=percs$last:1 UCX_TLS=rc_verbs,ud_verbs,self \
			timeout "$tmo" ucx_perftest -t $t -p "$port" localhost >"$scratch/cli.txt" 2>&1
		crc=$?
		wait "$spid"
		src=$?
		diag "ucx_perftest -t $t: $(grep '^Final' "$scratch/cli.txt")"
		if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] && grep -q '^Final' "$scratch/cli.txt"; then
			ok "ucx_perftest -t ${t%% *} over rc_verbs, percs0 <-> percs$last"
		else
			not_ok "ucx_perftest -t ${t%% *} over rc_verbs (server exit $src, client exit $crc)"
			grep -E 'ERROR|error' "$scratch/srv.txt" "$scratch/cli.txt" | head -n 6 | sed 's/^/#   /'
		fi
	done
else
	skip "ucx_info -d" "ucx-utils not installed"
	skip "ucx_perftest tag_lat" "ucx-utils not installed"
	skip "ucx_perftest tag_bw" "ucx-utils not installed"
fi

# 51-52: Open MPI (Debian's, pml ucx) over the verbs devices: selftests/mpi's
# ping-pong and collectives (allreduce among them), built with mpicc,
# one rank on percs0 and one on a device of another supernode, checking
# their answers; and the far device's counters moved (verbs, not shared
# memory, carried it)
ompi=$build/ompi-tests
if command -v mpirun >/dev/null && [ -x "$ompi/pingpong" ] && [ -x "$ompi/coll" ]; then
	for prog in "pingpong 10" coll; do
		before=$(hwc "percs$last" post_send_calls)
		# shellcheck disable=SC2086 # $prog is words
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout 180 mpirun --oversubscribe --mca pml ucx \
			--mca btl '^vader,tcp,openib,uct' --mca osc '^ucx' \
			-x UCX_TLS=rc_verbs,ud_verbs,self \
			-np 1 -x UCX_NET_DEVICES=percs0:1 $ompi/$prog : \
			-np 1 -x "UCX_NET_DEVICES=percs$last:1" $ompi/$prog \
			>"$scratch/ompi.txt" 2>&1
		rc=$?
		sent=$(($(hwc "percs$last" post_send_calls) - before))
		diag "mpirun ${prog%% *}: exit $rc, percs$last posted $sent sends; $(tail -n 1 "$scratch/ompi.txt")"
		if [ "$rc" -eq 0 ] && [ "$sent" -gt 0 ]; then
			ok "Open MPI over UCX: ${prog%% *}, percs0 <-> percs$last"
		else
			not_ok "Open MPI over UCX: ${prog%% *} (exit $rc, $sent sends)"
			head -n 20 "$scratch/ompi.txt" | sed 's/^/#   /'
		fi
	done
else
	skip "Open MPI over UCX: pingpong" "no mpirun or $ompi"
	skip "Open MPI over UCX: coll" "no mpirun or $ompi"
fi

# 53-56: unload while a process holds a device (the core disassociates
# its context: our objects are destroyed under it), then a clean cycle
port=$((port + 1))
timeout "$tmo" ibv_rc_pingpong -d percs4 -p "$port" -n 1 >"$scratch/hold.txt" 2>&1 &
hold=$!
perftest_listening "$port"
check "rmmod percs_verbs while a process holds percs4 (a QP, an MR, a CQ)" \
	timeout 60 rmmod percs_verbs
inuse=$(cat /sys/class/percs/percs-hfi4/windows_in_use)
check "its QP's window went with the device (windows_in_use $inuse)" \
	[ "$inuse" -eq 0 ]
kill "$hold" 2>/dev/null
wait "$hold" 2>/dev/null
check "ibv_devices lists nothing after rmmod" \
	bash -c '! ibv_devices 2>&1 | grep -q percs'
check "insmod and rmmod percs_verbs again" \
	bash -c "insmod '$vko' && rmmod percs_verbs"
rm -rf "$scratch"
[ "$n" -eq "$plan" ] || diag "ran $n tests, planned $plan"
exit $((failures > 0))
