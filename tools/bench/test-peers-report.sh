#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# peers-report without a VM: its options and their errors, and the table,
# JSON, CSV and PNG made --from a directory of measurements in the formats
# peers.sh keeps (percs-bench's JSON, perftest figures, mpi-peer's lines;
# a small made-up set: this tests the report, not the figures), complete
# and with a peer missing.  TAP on stdout.
# Usage: test-peers-report.sh [--count]
NTESTS=16
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
pr=$(dirname "$0")/peers-report
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
. "$(dirname "$0")/../../scripts/tap-check.sh"

m=$tmp/m
mkdir -p "$m"
cat > "$m/limits.json" <<'J'
{"limits": {"cacheline_half_rtt": {"median_ns": 200}, "getppid_ns": 760,
 "fdatasync_empty_ns": 1300,
 "memcpy_cache_bytes_per_s": 5e9, "memcpy_stream_bytes_per_s": 2e9}}
J
cat > "$m/lat.json" <<'J'
{"latency": [{"kind": "imm", "bytes": 8, "median_ns": 2000}]}
J
cat > "$m/rdma.json" <<'J'
{"rdma": {"sizes": [{"bytes": 4096, "write_bytes_per_s": 1e8, "read_bytes_per_s": 1e8},
 {"bytes": 1048576, "write_bytes_per_s": 2e8, "read_bytes_per_s": 1.5e8}],
 "write_8b_latency": {"median_ns": 3000}}}
J
cat > "$m/atomic.json" <<'J'
{"atomic": [{"pair": "same-hub", "mode": "poll", "fetch_add": {"median_ns": 1}},
 {"pair": "same-hub", "mode": "kick", "fetch_add": {"median_ns": 3000},
  "adds_per_s_unpacked": 200000, "adds_per_s_packed": 800000}]}
J
# perftest: latencies us, bandwidths MB/s, the atomic rate Mpps
for x in "ib_send_lat 20 15" "ib_write_lat 18 10" "ib_read_lat 30 20" \
	 "ib_atomic_lat 34 25" "ib_write_bw 50 300" "ib_read_bw 40 200" \
	 "ib_atomic_bw 0.025 0.1"; do
	set -- $x
	echo "$2" > "$m/$1.rxe.value"
	echo "$3" > "$m/$1.percs.value"
done
for impl in ompi percs; do
	if [ $impl = ompi ]; then l=0.5 b=4e9 a=3; else l=2.5 b=2e9 a=6; fi
	cat > "$m/mpi-$impl-2.jsonl" <<J
rank 0 says hello
{"test":"latency","bytes":8,"ranks":2,"value":$l,"unit":"us"}
{"test":"bw","bytes":1048576,"ranks":2,"value":$b,"unit":"B/s"}
{"test":"allreduce","bytes":8,"ranks":2,"value":$a,"unit":"us"}
{"test":"barrier","bytes":0,"ranks":2,"value":2,"unit":"us"}
J
	cat > "$m/mpi-$impl-4.jsonl" <<J
{"test":"allreduce","bytes":8,"ranks":4,"value":$a,"unit":"us"}
{"test":"barrier","bytes":0,"ranks":4,"value":4,"unit":"us"}
J
done
# percs spread over the hubs, the CAU on and off: collectives only.
for impl in percs-cau percs-sw; do
	if [ $impl = percs-cau ]; then a=1.5 b=1; else a=6 b=5; fi
	for r in 2 4; do
		cat > "$m/mpi-$impl-$r.jsonl" <<J
{"test":"allreduce","bytes":8,"ranks":$r,"value":$a,"unit":"us"}
{"test":"barrier","bytes":0,"ranks":$r,"value":$b,"unit":"us"}
J
	done
done
echo "2 4" > "$m/ranks"
: > "$m/failures"
# The same without rxe's atomic latency, and the reason peers.sh gave.
cp -r "$m" "$tmp/gap"
rm "$tmp/gap/ib_atomic_lat.rxe.value"
echo "ib_atomic_lat over rxe: no result row: Couldn't connect" > "$tmp/gap/failures"

echo "TAP version 13"
echo "1..$NTESTS"
check "--help prints usage, exit 0" 0 "" "--from RAW --out DIR" -- "$pr" --help
check "unknown argument, exit 2" 2 "unknown argument '--bogus'" "" -- "$pr" --bogus
check "--out without a value, exit 2" 2 "--out needs a value" "" -- "$pr" --from "$m" --out
check "no --from, exit 2" 2 "--from and --out are required" "" -- "$pr" --out "$tmp/o"
check "--from a missing directory, exit 2" 2 "not a directory" "" \
	-- "$pr" --from "$tmp/none" --out "$tmp/o"
check "every figure there: exit 0, the table" 0 "" "^measured in" \
	-- "$pr" --from "$m" --out "$tmp/o"
check "send latency 2 us / rxe 20 us = 0.10, target met" 0 "" \
	"^send latency, 8 B, half RTT  *2.00  *20.00  *0.10  *15.00  *0.13  *percs/rxe <= 0.1: met" \
	-- "$pr" --from "$m" --out "$tmp/o"
check "the send floor beside its target: 1.3 + 0.2 us, 0.075x rxe, JSON and CSV" 0 "" \
	"percs/rxe <= 0.1: met [(]floor 1.50 us = 0.07x rxe[)] 1.5 0.075 1.5" \
	-- sh -c "('$pr' --from '$m' --out '$tmp/o' | grep '^send latency' && python3 -c '
import csv, json, sys
d = json.load(open(sys.argv[1] + \"/peers.json\"))
r = d[\"rows\"][0]
c = next(csv.DictReader(open(sys.argv[1] + \"/peers.csv\")))
print(r[\"floor\"], r[\"floor_ratio\"], c[\"floor\"])' '$tmp/o') | tr '\\n' ' '"
check "write bandwidth 200 MB/s / rxe 50 MB/s = 4.00, target missed" 0 "" \
	"^RDMA write bandwidth, 1 MiB  *200M  *50M  *4.00 .*percs/rxe >= 5: missed" \
	-- "$pr" --from "$m" --out "$tmp/o"
check "atomic rate against perftest's Mpps: 200k / 25k = 8.00" 0 "" \
	"^atomic rate  *200k  *25k  *8.00" -- "$pr" --from "$m" --out "$tmp/o"
check "MPI latency: ratio to Open MPI and where the time goes" 0 "" \
	"mpi_lat: of percs's 2.50 us, 2.00 us is the HFI's immediate send (80%)" \
	-- "$pr" --from "$m" --out "$tmp/o"
check "CAU on and off rows beside Open MPI, their ratio noted" 0 "" \
	"MPI_Allreduce, 8 B, 4 ranks, CAU on  *1.50  *3.00  *0.50 .*mpi_allreduce_4_cau_on: CAU on / off = 0.25" \
	-- sh -c "'$pr' --from '$m' --out '$tmp/o' | tr '\\n' ' '"
check "JSON and CSV: 25 rows, the CSV's ratio" 0 "" "25 25 0.5" -- python3 -c '
import csv, json, sys
d = json.load(open(sys.argv[1] + "/peers.json"))
c = list(csv.DictReader(open(sys.argv[1] + "/peers.csv")))
print(len(d["rows"]), len(c), next(r for r in c if r["id"] == "mpi_bw")["ratio_openmpi"])' "$tmp/o"
check "a missing peer: exit 1, named, with peers.sh's reason in the JSON" 1 \
	"missing figure: atomic_lat: no rxe figure" "*" \
	-- "$pr" --from "$tmp/gap" --out "$tmp/g"
check "its reason is in peers.json" 0 "" "Couldn't connect" -- cat "$tmp/g/peers.json"
check "--plot writes a PNG" 0 "plot written to $tmp/p.png" "*" \
	-- sh -c "'$pr' --from '$m' --out '$tmp/o' --plot '$tmp/p.png' && head -c 4 '$tmp/p.png' >&2"
exit $((failed > 0))
