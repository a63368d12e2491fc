#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# peers.sh - the short peer comparison (tools/bench/peers.sh --quick: few
# iterations, MPI at 2 ranks) inside the test VM; run-vm-tests.sh
# runs it as the program "peers" on the stock kernel.  TAP on stdout.
#
# Not a measurement (the host is shared and the iterations few): it checks
# that every row of the table has its percs figure and every peer's, that
# the JSON, CSV and PNG were written, and that peers.sh exited 0.  A
# missing figure fails its row, and the reason peers.sh gave (a peer that
# could not be set up or run: rdma_rxe, perftest, mpirun) is printed.
#
# Environment: PERCS_OUT (where the table goes: $PERCS_OUT/peers),
# PERCS_BUILD.  About 60 s of VM time on an idle host.

set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${PERCS_OUT:-$(mktemp -d)}/peers
# The rows of a --quick run: 7 verbs, 2 MPI point-to-point, 2 collectives
# at 2 ranks packed and spread with the CAU on and off (6), 4 limits.
rows=19
plan=$((rows + 4))
n=0
failed=0
echo "TAP version 13"
echo "1..$plan"
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }

start=$SECONDS
"$here/../tools/bench/peers.sh" --quick --out "$out" >"$out.txt" 2>"$out.err"
rc=$?
sed 's/^/# /' "$out.txt"
echo "# peers.sh --quick: exit $rc, $((SECONDS - start)) s"
if [ "$rc" -eq 0 ]; then
	ok "peers.sh --quick exits 0"
else
	not_ok "peers.sh --quick exits 0 (exit $rc)"
	grep -E 'FAILED|missing|peers-report' "$out.err" | sed 's/^/#   /'
fi

# One line per row: OK|BAD id what is missing (with peers.sh's reasons).
check=$(python3 -I - "$out" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1] + "/peers.json"))
for r in d["rows"]:
    gaps = [p for p, v in r["peers"].items() if v is None]
    # percs-bench measures no RDMA read latency: that row's percs cell is empty.
    if r["percs"] is None and r["id"] != "read_lat":
        gaps.insert(0, "percs")
    print(("BAD" if gaps else "OK"), r["id"], r["measure"] + ":",
          ("no figure for " + ", ".join(gaps)) if gaps else "every figure")
for f in d["failures"]:
    print("WHY", f)
PY
)
lines=0
while read -r verdict id what; do
	case $verdict in
	OK) ok "$id: $what"; lines=$((lines + 1)) ;;
	BAD) not_ok "$id: $what"; lines=$((lines + 1)) ;;
	WHY) echo "#   $id $what" ;;
	*) echo "# $verdict $id $what" ;;
	esac
done <<<"$check"
for ((; lines < rows; lines++)); do
	not_ok "a row of peers.json (only $lines of $rows there)"
done

if [ "$(head -c 4 "$out/peers.png" 2>/dev/null | tail -c 3)" = PNG ]; then
	ok "peers.png is a PNG"
else
	not_ok "peers.png is a PNG"
fi
csv_rows=$(($(wc -l <"$out/peers.csv" 2>/dev/null || echo 0) - 1))
if [ "$csv_rows" -eq "$rows" ]; then
	ok "peers.csv has a line per row ($csv_rows)"
else
	not_ok "peers.csv has a line per row ($csv_rows, expected $rows)"
fi
if grep -q "^measured in" "$out/peers.txt" 2>/dev/null; then
	ok "peers.txt has the table"
else
	not_ok "peers.txt has the table"
fi
[ "$n" -eq "$plan" ] || echo "# ran $n tests, planned $plan"
exit "$failed"
