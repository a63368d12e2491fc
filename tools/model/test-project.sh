#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-bench project without a VM: the projection's arithmetic on a
# hand-made parameter file (its decomposition, tree depths and hop
# classes for known job sizes, the CAU and software times worked out by
# hand, monotonic in p), the validation against made-up measurements,
# its options and their errors, bad and missing parameter files.  TAP on
# stdout.
# Usage: test-project.sh PATH-TO-percs-bench-project
#        test-project.sh --count
NTESTS=25
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
pb=${1:?usage: test-project.sh PATH-TO-percs-bench-project}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
dry=
. "$(dirname "$0")/../../scripts/tap-check.sh"

# On the 2x4 calibration system (spread): hubs 0-1 are one L hop, hubs
# 0-4 one D hop, so at 8 B: one-hub message 3, L hop 4 - 3 = 1, D hop
# 7 - 3 = 4; the 2-rank round (hubs 0 and 4) 12 = 3 + 4 + contention 5.
# The CAU at 2 ranks (depth 1, a D edge): 30 = members + 2 (level + 4);
# members taken as a one-hub message (3): level (30 - 3 - 8) / 2 = 9.5.
# At 6 ranks the deepest member (hub 6) is 2 levels down, hub 6 - hub 4
# (L, 1) - hub 0 (D, 4): 51 = 3 + 2 (2 x 9.5 + 5), so fitting both
# figures gives the same members' cost and level.
m=$tmp/model
cat > "$m" <<'M'
percs-mpi-model 1
sizes 0 8
l same_hub 2.0 3.0
l same_supernode 3.0 4.0
l other_supernode 5.0 7.0
g 1.0 1.0
o 0.5
gamma 0.0
round 2 10.0 12.0
round 6 10.0 12.0
cau 2 30.0
cau 6 51.0
cau_packet 1.0
M
grep -v '^cau' "$m" > "$tmp/nocau"
printf 'percs-mpi-model 1\nsizes 0 8\ng 1 1\n' > "$tmp/truncated"
echo 'hello' > "$tmp/notmodel"

# jq-like checks of the JSON, in python: field PATH EXPECTED.
cat > "$tmp/field.py" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
for expr in sys.argv[2:]:
    print(eval(expr, {"d": d, "rows": d.get("rows", [])}))
P
field() {
	f=$1
	shift
	python3 "$tmp/field.py" "$f" "$@"
}
j() {
	"$pb" --model "$m" --json "$@" > "$tmp/j.json" 2> "$tmp/j.err"
}

echo "TAP version 13"
echo "1..$NTESTS"
check "--help prints usage, exit 0" 0 "" "--calib-topology" -- "$pb" --help
check "unknown argument, exit 2" 2 "unknown argument '--bogus'" "" -- "$pb" --bogus
check "--placement unknown, exit 2" 2 "--placement 'round': spread or block" "" \
	-- "$pb" --model "$m" --placement round
check "--topology unparsable, exit 2" 2 "--topology 9x99:" "" \
	-- "$pb" --model "$m" --topology 9x99
check "--ranks below 2, exit 2" 2 "--ranks: 1 is out of range" "" \
	-- "$pb" --model "$m" --ranks 1,4
check "--fanout above the library's limit, exit 2" 2 "--fanout: 33 is out of range (0 .. 32)" "" \
	-- "$pb" --model "$m" --fanout 33
check "no model file, exit 1" 1 "no model file '$tmp/none'" "" \
	-- "$pb" --model "$tmp/none"
check "not a model file, exit 1" 1 "not a percs MPI model file" "" \
	-- "$pb" --model "$tmp/notmodel"
check "a truncated model file, exit 1" 1 "no 'o' line (a truncated file?)" "" \
	-- "$pb" --model "$tmp/truncated"
check "a model without the CAU's figures, exit 1" 1 "the model has no 'cau' lines" "" \
	-- "$pb" --model "$tmp/nocau"
check "--fit-ranks a size the model lacks, exit 1" 1 "no CAU figure at 4 ranks" "" \
	-- "$pb" --model "$m" --fit-ranks 4
check "--measured without validate.jsonl, exit 1" 1 "no validate.jsonl there" "" \
	-- "$pb" --model "$m" --measured "$tmp"

j --topology 1x32 --ranks 2,5,6,21,22
check "decomposition: one-hub 3, L hop 1, D hop 4, contention 5, members 3, level 9.5" 0 "" \
	"^\[3.0, 1.0, 4.0, 5.0, 3.0, 9.5, False\]$" -- field "$tmp/j.json" \
	"[d['costs'][k][1] for k in ('base', 'hop_l', 'hop_d', 'extra')] + [d['costs']['cau_fixed'], d['costs']['cau_level'], d['costs']['cau_fitted']]"
check "fan-out 4 depths at 2, 5, 6, 21, 22 ranks: 1, 1, 2, 2, 3" 0 "" "^\[1, 1, 2, 2, 3\]$" \
	-- field "$tmp/j.json" "[r['depth'] for r in rows]"
check "CAU on one supernode: 3 + 2 depth (9.5 + 1): 24, 24, 45, 45, 66" 0 "" \
	"^\[24.0, 24.0, 45.0, 45.0, 66.0\]$" -- field "$tmp/j.json" "[r['cau_us'] for r in rows]"
check "software at 2 ranks: barrier R(2, 0) = 2 + 5 + 1, allreduce R(2, 8) = 9" 0 "" \
	"^\[8.0, 9.0, 'dissemination', 'recursive_doubling'\]$" -- field "$tmp/j.json" \
	"[rows[0]['barrier']['best_us'], rows[0]['allreduce']['best_us'], rows[0]['barrier']['best'], rows[0]['allreduce']['best']]"
j --fit-ranks 2,6 --ranks 2
check "two depths fitted: members 3, level 9.5" 0 "" "^\[3.0, 9.5, True\]$" \
	-- field "$tmp/j.json" "[d['costs']['cau_fixed'], d['costs']['cau_level'], d['costs']['cau_fitted']]"
j --cau-fixed 0 --ranks 2
check "--cau-fixed 0: the whole CAU figure per level, (30 - 8) / 2 = 11" 0 "" "^\[0.0, 11.0\]$" \
	-- field "$tmp/j.json" "[d['costs']['cau_fixed'], d['costs']['cau_level']]"
check "--cau-fixed not a time, exit 2" 2 "--cau-fixed '-1': want microseconds" "" \
	-- "$pb" --model "$m" --cau-fixed -1
j
check "513x32 sweep: to 16416 ranks, depth 5 at 1024 (log4), no tree past 1024 hubs" 0 "" \
	"^\[16416, 5, None, -1\]$" -- field "$tmp/j.json" \
	"[rows[-1]['p'], [r['depth'] for r in rows if r['p'] == 1024][0], rows[-1]['cau_us'], [r['depth'] for r in rows if r['p'] == 2048][0]]"
# Software is monotonic over powers of two only: recursive doubling pays
# two more rounds for the fold when p is no power of two (96 > 128).
check "monotonic in p: depth and CAU always, best software over powers of two" 0 "" "^True$" \
	-- field "$tmp/j.json" \
	"all(a['p'] < b['p'] and (a['depth'] <= b['depth'] or b['depth'] < 0) for a, b in zip(rows, rows[1:])) and all(a['cau_us'] <= b['cau_us'] for a, b in zip(rows, rows[1:]) if b['cau_us'] is not None) and (lambda pw: all(a[k]['best_us'] < b[k]['best_us'] for a, b in zip(pw, pw[1:]) for k in ('barrier', 'allreduce')))([r for r in rows if not r['p'] & (r['p'] - 1)])"
check "hop classes, block placement: 32 ranks stay in a supernode, 64 cross" 0 "" \
	"^\[False, True\]$" -- field "$tmp/j.json" \
	"[any(r['level_crosses_supernodes']) for r in rows if r['p'] in (32, 64)]"

v=$tmp/v
mkdir -p "$v"
cat > "$v/validate.jsonl" <<'J'
{"what":"point","p":2,"coll":"allreduce","algo":"recursive_doubling","bytes":8,"measured_us":12.0,"predicted_us":12.0,"model_choice":"recursive_doubling"}
{"what":"point","p":2,"coll":"allreduce","algo":"cau","bytes":8,"measured_us":40.0,"predicted_us":30.0,"model_choice":"recursive_doubling"}
{"what":"point","p":2,"coll":"bcast","algo":"binomial","bytes":8,"measured_us":9.0,"predicted_us":9.0,"model_choice":"binomial"}
J
# On 2x4 (spread) at 2 ranks: CAU 3 + 2 (9.5 + 4) = 30 against 40 measured,
# software R(2, 8) = 3 + 5 + 4 = 12 against 12.
check "validation: projected against measured, the error, the target" 0 "" \
	"allreduce    2 cau                   40.00         30.00   -25.0%" \
	-- "$pb" --model "$m" --ranks 2 --measured "$v"
check "one hub (1x1): no tree, the CAU n/a and why" 0 "" \
	"CAU n/a: all ranks on one hub, no tree" -- "$pb" --model "$m" --topology 1x1 --ranks 2
check "every figure of the table is labelled projected; --plot writes a PNG" 0 \
	"plot written to $tmp/p.png" "every time above is projected" \
	-- "$pb" --model "$m" --ranks 2,64 --plot "$tmp/p.png"
exit $((failed > 0))
