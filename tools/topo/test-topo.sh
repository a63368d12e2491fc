#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-topo tests: flags and their errors (exit 2 with a message), the
# section VII.A figures, indirect routing against the sn-to-sn congestion,
# the aggregated engines against routing every flow, CSV, JSON, plot and
# progress.  TAP on stdout.
# Usage: test-topo.sh PATH-TO-percs-topo
#        test-topo.sh --count
NTESTS=51
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
topo=${1:?usage: test-topo.sh PATH-TO-percs-topo}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# check(): scripts/tap-check.sh (regular expressions).
. "$(dirname "$0")/../../scripts/tap-check.sh"

# check_json NAME PYTHON-ASSERTS -- ARGS...: exit 0, stdout one JSON
# document (bound to d) satisfying the asserts; earlier documents are
# j[0], j[1]... (see json_keep).
check_json() {
	name=$1 code=$2
	shift 3
	"$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
	st=$?
	if [ "$st" -ne 0 ]; then
		echo "#   exit status $st, stderr:"; sed 's/^/#     /' "$tmp/err"
		fail "$name"
	elif ! command -v python3 > /dev/null; then
		n=$((n + 1)); echo "ok $n - $name # SKIP python3 missing"
	elif python3 -c "import json, sys, glob
d = json.load(open(sys.argv[1]))
j = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[2] + '/keep.*'))]
$code" "$tmp/out" "$tmp" 2> "$tmp/err"; then
		pass "$name"
	else
		sed 's/^/#   /' "$tmp/err"
		fail "$name"
	fi
}
# json_keep: keep the last JSON output for the next check_json as j[k]
keep=0
json_keep() { cp "$tmp/out" "$tmp/keep.$keep"; keep=$((keep + 1)); }
json_clear() { rm -f "$tmp"/keep.*; keep=0; }

echo "TAP version 13"
echo "1..$NTESTS"

# --- flags and their errors -------------------------------------------------
check "--help prints usage, exit 0" 0 "" "usage: percs-topo --topology SPEC" -- "$topo" --help
check "no --topology, exit 2" 2 "percs-topo: --topology SPEC is required" "" -- "$topo"
check "unknown option, exit 2" 2 "unknown option '--bogus'" "" -- "$topo" --topology 2x4 --bogus
check "unknown short option, exit 2" 2 "unknown option '-x'" "" -- "$topo" -x
check "option without its value, exit 2" 2 "percs-topo: --route needs a value" "" -- "$topo" --topology 2x4 --route
check "extra argument, exit 2" 2 "unexpected argument 'more'" "" -- "$topo" --topology 2x4 more
check "--bench-route prints ns per look-up of every mode" 0 "" \
	"hw_indirect 1000 [0-9]" -- "$topo" --topology 3x8 --bench-route=1000
check "--bench-route with a bad count, exit 2" 2 "expected a positive count" "" -- \
	"$topo" --topology 2x4 --bench-route=x
check "topology: bad number, exit 2" 2 \
	"percs-topo: --topology 2x99: hubs_per_supernode=99: a supernode has 1..32 hubs" "" -- "$topo" --topology 2x99
check "topology: bad syntax names the column, exit 2" 2 \
	"expected an option name (dpair or dhub) at column 5, found 'f'" "" -- "$topo" --topology 2x4,foo=1
check "topology: too many supernodes, exit 2" 2 \
	"supernodes=514: the system has 1..513 supernodes" "" -- "$topo" --topology 514x32
check "pattern: unknown, exit 2" 2 \
	"--pattern bogus: unknown pattern (alltoall, permutation\[:SEED\], sn-to-sn:A:B, file:PATH)" "" -- \
	"$topo" --topology 2x4 --pattern bogus
check "pattern: sn-to-sn needs two supernodes, exit 2" 2 "A and B must be different supernodes" "" -- \
	"$topo" --topology 3x4 --pattern sn-to-sn:1:1
check "pattern: sn-to-sn outside the topology, exit 2" 2 "supernode 5 outside the topology (0..2)" "" -- \
	"$topo" --topology 3x4 --pattern sn-to-sn:1:5
check "pattern: sn-to-sn syntax, exit 2" 2 "expected sn-to-sn:A:B" "" -- \
	"$topo" --topology 3x4 --pattern sn-to-sn:1
check "pattern: bad permutation seed, exit 2" 2 "the seed after 'permutation:' is a decimal number" "" -- \
	"$topo" --topology 3x4 --pattern permutation:x1
check "pattern: missing file, exit 2" 2 "$tmp/none: No such file or directory" "" -- \
	"$topo" --topology 3x4 --pattern "file:$tmp/none"
printf '# flows\n0 5\n1 x\n' > "$tmp/bad1"
check "pattern: file line that is not two hubs, exit 2" 2 "$tmp/bad1:3: expected two hub numbers, 'SRC DST'" "" -- \
	"$topo" --topology 3x4 --pattern "file:$tmp/bad1"
printf '0 5\n\n12 1\n' > "$tmp/bad2"
check "pattern: file hub outside the topology, exit 2" 2 "$tmp/bad2:3: hub 12 outside the topology (0..11)" "" -- \
	"$topo" --topology 3x4 --pattern "file:$tmp/bad2"
printf '3 3\n' > "$tmp/bad3"
check "pattern: file flow to itself, exit 2" 2 "$tmp/bad3:1: hub 3 sends to itself" "" -- \
	"$topo" --topology 3x4 --pattern "file:$tmp/bad3"
printf '# nothing\n\n' > "$tmp/bad4"
check "pattern: file without flows, exit 2" 2 "$tmp/bad4: no flows" "" -- \
	"$topo" --topology 3x4 --pattern "file:$tmp/bad4"
check "route: unknown, exit 2" 2 \
	"--route sideways: unknown route mode (direct, direct-striped, sw-indirect:N, hw-indirect)" "" -- \
	"$topo" --topology 3x4 --route sideways
check "route: sw-indirect outside the topology, exit 2" 2 "--route sw-indirect:3: supernode 3 outside the topology (0..2)" "" -- \
	"$topo" --topology 3x4 --route sw-indirect:3
check "route: sw-indirect without a supernode, exit 2" 2 "expected sw-indirect:N" "" -- \
	"$topo" --topology 3x4 --route sw-indirect
check "route: argument to a mode without one, exit 2" 2 "--route direct:2: direct takes no ':' argument" "" -- \
	"$topo" --topology 3x4 --route direct:2
check "plot: not a .png name, exit 2" 2 "--plot out.txt: the file name must end in .png" "" -- \
	"$topo" --topology 3x4 --plot out.txt
check "csv: unwritable file, exit 1" 1 "percs-topo: $tmp/no/dir.csv: No such file or directory" "*" -- \
	"$topo" --topology 3x4 --csv "$tmp/no/dir.csv"

# --- section VII.A ---------------------------------------------------------
# c(LL) = c(LR) = 1 + 64d, c(D) = 1024; bottleneck D below d = 8, LR from 8
# on; bandwidth per node (31 + 1024d) * 10 / 1024, (155 + 5120d) / (1 + 64d).
for d in 1 4 7 8 9 16; do
	check_json "VII.A d=$d: path counts, bottleneck, bandwidth per node" "
d_ = $d
c = d['classes']
assert c['LL']['max_load'] == 1 + 64 * d_ == c['LL']['mean_load'], c['LL']
assert c['LR']['max_load'] == 1 + 64 * d_ == c['LR']['mean_load'], c['LR']
assert c['D']['max_load'] == 1024 == c['D']['mean_load'], c['D']
assert d['topology']['supernodes'] == 32 * d_ + 1
assert d['flows'] == d['topology']['hubs'] * (31 + 1024 * d_)
want = (155 + 5120 * d_) / (1 + 64 * d_) if d_ >= 8 else (31 + 1024 * d_) * 10 / 1024
assert d['bottleneck'] == ('LR' if d_ >= 8 else 'D'), d['bottleneck']
assert abs(d['bandwidth_per_node'] - want) < 1e-9 * want, (d['bandwidth_per_node'], want)
assert not d['injection_limited']" -- "$topo" --topology d$d --json
done

# indirect random routing about halves alltoall bandwidth where the D
# links limit it (d < 8 direct, up to about 10 indirect): twice the D hops
json_clear
for d in 1 4 8; do
	"$topo" --topology d$d --json > "$tmp/out" 2>/dev/null; json_keep
	check_json "VII.A d=$d: hw-indirect about halves the alltoall bandwidth" "
r = d['bandwidth_per_node'] / j[-1]['bandwidth_per_node']
assert 0.45 < r < 0.55, r
assert d['bottleneck'] == 'D' and d['engine'] == 'alltoall by symmetry'" -- \
		"$topo" --topology d$d --route hw-indirect --json
done

# 32 nodes of A sending to 32 of B: 32 on their one D link with direct
# routes; hw-indirect bounces each at a random supernode
json_clear
"$topo" --topology d8 --pattern sn-to-sn:3:200 --json > "$tmp/out" 2>/dev/null; json_keep
check_json "sn-to-sn: direct puts 32 flows on one D link" "
d = j[0]
assert d['classes']['D']['max_load'] == 32 and d['bottleneck'] == 'D', d
assert d['flows'] == 32 and abs(d['bandwidth_per_node'] - 10 / 32) < 1e-12" -- cat "$tmp/keep.0"
check_json "sn-to-sn: hw-indirect cuts the D-link congestion" "
assert d['classes']['D']['max_load'] < 0.2, d['classes']['D']
assert d['bandwidth_per_node'] > 50 * j[0]['bandwidth_per_node'], d" -- \
	"$topo" --topology d8 --pattern sn-to-sn:3:200 --route hw-indirect --json

# --- aggregated engines against routing every flow --------------------------
# agree SPEC ROUTE: the per-channel CSVs of the two agree to 1e-9
agree() {
	"$topo" --topology "$1" --route "$2" --csv "$tmp/a.csv" > /dev/null &&
	"$topo" --topology "$1" --route "$2" --csv "$tmp/b.csv" --per-flow > /dev/null &&
	[ "$(wc -l < "$tmp/a.csv")" -gt 1 ] &&
	paste -d, "$tmp/a.csv" "$tmp/b.csv" | awk -F, '
		NR == 1 { next }
		$1 != $9 || $2 != $10 { bad++; next }
		{ x = $8 - $16; if (x < 0) x = -x; if (x > 1e-9 * ($8 + 1)) bad++ }
		END { exit bad > 0 }'
}
for r in direct direct-striped hw-indirect sw-indirect:2; do
	if agree 5x4 "$r" && agree 7x2,dpair=2 "$r" && agree 3x12 "$r"; then
		pass "alltoall $r: aggregated loads equal per-flow loads"
	else
		fail "alltoall $r: aggregated loads equal per-flow loads"
	fi
done

# --- outputs -----------------------------------------------------------------
check "text report: bottleneck and bandwidth" 0 "" "^bandwidth   80.1462 GiB/s per node (8224 nodes send)\$" -- \
	"$topo" --topology d8
printf '# one flow, L-D-L\n2 6\n' > "$tmp/flows"
if "$topo" --topology 2x4,dpair=1 --pattern "file:$tmp/flows" --csv "$tmp/f.csv" > /dev/null &&
	[ "$(awk -F, 'NR > 1 && $8 != 0 { printf "%s:%s-%s ", $3, $4, $5 }' "$tmp/f.csv")" = "LL:2-0 LL:4-6 D:0-4 " ] &&
	[ "$(wc -l < "$tmp/f.csv")" -eq $((2 * (2 * 6 + 1) + 1)) ]; then
	pass "file pattern: one flow loads its three channels in the CSV"
else
	fail "file pattern: one flow loads its three channels in the CSV"
fi
check_json "hw-indirect on 2 supernodes: flows between them have no route" "
assert d['unroutable_flows'] == 2 * 4 * 4 and d['flows'] == 8 * 3, d
assert d['route'] == 'hw_indirect'" -- "$topo" --topology 2x4 --route hw-indirect --json
check_json "sw-indirect: flows from or to the intermediate supernode have none" "
assert d['via_supernode'] == 1 and d['unroutable_flows'] == 4 * 11 + 8 * 4, d
assert d['engine'] == 'alltoall in two parts'" -- "$topo" --topology 3x4 --route sw-indirect:1 --json
check_json "permutation: one flow per node, reproducible seed" "
assert d['flows'] == 1056 and d['senders'] == 1056, d
assert d['pattern'] == 'permutation:5'" -- "$topo" --topology d1 --pattern permutation:5 --route direct-striped --json
if command -v gnuplot > /dev/null; then
	if "$topo" --topology 5x8 --route hw-indirect --plot "$tmp/p.png" > /dev/null 2> "$tmp/err" &&
		[ "$(head -c 4 "$tmp/p.png" | od -An -c | tr -d ' ')" = "211PNG" ]; then
		pass "--plot writes a PNG"
	else
		sed 's/^/#   /' "$tmp/err"
		fail "--plot writes a PNG"
	fi
else
	n=$((n + 1)); echo "ok $n - --plot writes a PNG # SKIP gnuplot missing"
fi
# (a run of over half a second: every flow's 31 routes one by one)
check "--progress reports on stderr when it is not a terminal" 0 "percs-topo: routing done in" "*" -- \
	"$topo" --topology 33x32 --route hw-indirect --per-flow --progress
check "no progress without --progress when stderr is not a terminal" 0 "" "*" -- \
	"$topo" --topology 513x32 --route hw-indirect
check_json "Blue Waters size: 513 x 32 alltoall, hw-indirect" "
assert d['topology']['hubs'] == 16416 and d['flows'] == 16416 * 16415
assert d['bottleneck'] == 'LR' and 50 < d['bandwidth_per_node'] < 56, d
assert d['seconds'] < 30, d['seconds']" -- "$topo" --topology 513x32 --route hw-indirect --json

echo "# $((n - failed)) passed, $failed failed"
[ "$n" -eq "$NTESTS" ] || echo "# ran $n tests, planned $NTESTS"
[ "$failed" -eq 0 ] && [ "$n" -eq "$NTESTS" ]
