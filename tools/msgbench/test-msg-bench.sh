#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-msg-bench's report, without a VM: its options and their errors,
# and the table, JSON and PNG made --from a directory of measurements in
# the formats percs-bench rdma and percs-mpi-bench write (a small made-up set:
# this tests the report, not the figures).  TAP on stdout.
# Usage: test-msg-bench.sh PATH-TO-percs-msg-bench
#        test-msg-bench.sh --count
NTESTS=16
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
mb=${1:?usage: test-msg-bench.sh PATH-TO-percs-msg-bench}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
. "$(dirname "$0")/../../scripts/tap-check.sh"

m=$tmp/m
mkdir -p "$m"
cat > "$m/rdma.json" <<'J'
{"rdma": {"sizes": [{"bytes": 4096, "write_bytes_per_s": 500000000},
                    {"bytes": 1048576, "write_bytes_per_s": 2000000000}]}}
J
cat > "$m/mpi.jsonl" <<'J'
rank 0 says hello
{"test":"latency","bytes":0,"value":2.400,"unit":"us"}
{"test":"pair_round","bytes":8,"value":1.200,"unit":"x"}
{"test":"pair_round","bytes":8,"value":1.340,"unit":"x"}
{"test":"latency","bytes":8,"value":2.500,"unit":"us"}
{"test":"raw_latency","bytes":8,"value":2.000,"unit":"us"}
{"test":"floor_latency","bytes":8,"value":2.200,"unit":"us"}
{"test":"bw","bytes":4096,"value":400.000,"unit":"MB/s"}
{"test":"bw","bytes":1048576,"value":1800.000,"unit":"MB/s"}
{"test":"bibw","bytes":1048576,"value":2500.000,"unit":"MB/s"}
J

echo "TAP version 13"
echo "1..$NTESTS"
check "--help prints usage, exit 0" 0 "" "--from DIR" -- "$mb" --help
check "unknown argument, exit 2" 2 "unknown argument '--bogus'" "" -- "$mb" --bogus
check "--plot without a file, exit 2" 2 "--plot needs a file or directory" "" -- "$mb" --plot
check "--save with --from, exit 2" 2 "--save and --from exclude each other" "" \
	-- "$mb" --save "$tmp/s" --from "$m"
check "--from a directory without the files, exit 1" 1 "no rdma.json there" "" \
	-- "$mb" --from "$tmp/nothing"
mkdir -p "$tmp/noraw"
cp "$m/rdma.json" "$tmp/noraw/"
grep -v raw_latency "$m/mpi.jsonl" > "$tmp/noraw/mpi.jsonl"
check "no raw 8 B row from percs-mpi-bench, exit 1" 1 \
	"no raw_latency row in percs-mpi-bench's output" "" -- "$mb" --from "$tmp/noraw"
check "8 B latency ratio to raw: 2.5 / 2.0 = 1.25, target met" 0 "" \
	"target: 8 B latency <= 1.3x raw immediate send: 1.25 met (2 rounds: median 1.34, range 1.20 - 1.34)" \
	-- "$mb" --from "$m"
check "the raw 8 B figure is percs-mpi-bench's, rounds counted" 0 "" \
	"^raw: immediate send 8 B half round trip 2.00 us (same HFIs, engine mode and clock as MPI, 2 alternating rounds)" \
	-- "$mb" --from "$m"
check "the floor beside the latency target: 2.2 / 2.0 = 1.10x raw, MPI 2.5 / 2.2" 0 "" \
	"^  floor: raw immediate send + the messaging header + one match 2.20 us = 1.10x raw; MPI at 1.14x the floor" \
	-- "$mb" --from "$m"
check "--json: the floor's figure" 0 "" '"floor_8b_half_rtt_us": 2.2' \
	-- "$mb" --from "$m" --json
mkdir -p "$tmp/nofloor"
cp "$m/rdma.json" "$tmp/nofloor/"
grep -v floor_latency "$m/mpi.jsonl" > "$tmp/nofloor/mpi.jsonl"
check "a run without a floor row: the target, no floor line" 0 "" "" \
	-- sh -c '"$1" --from "$2" > "$3" &&
		grep -q "target: 8 B latency <= 1.3x raw immediate send: 1.25 met" "$3" &&
		! grep "floor:" "$3"' sh "$mb" "$tmp/nofloor" "$tmp/nofloor.out"
check "1 MiB streaming ratio to raw RDMA write: 0.90, met" 0 "" \
	"target: 1 MiB streaming >= 80% of raw RDMA write: 0.90 met" -- "$mb" --from "$m"
check "4 KiB streaming ratio against the 4 KiB RDMA row: 0.80" 0 "" \
	"^bw  *4096  *400.00 MB/s     0.80  raw RDMA write" -- "$mb" --from "$m"
check "--json: rows, raw figures and targets" 0 "" '"ratio_to": "raw imm 8 B half RTT"' \
	-- "$mb" --from "$m" --json
check "--plot writes the PNG and says so" 0 "plot written to $tmp/p.png" "*" \
	-- "$mb" --from "$m" --plot "$tmp/p.png"
check "the plot is a PNG" 0 "" "PNG" -- head -c 4 "$tmp/p.png"
exit $((failed > 0))
