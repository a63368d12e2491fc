#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-bench model's script without a VM: its options and their errors,
# the parameter file it writes --from a directory of calibration rows, and
# the report, JSON and PNG it makes --from validation rows (made-up
# measurements in percs-mpi-model's formats: this tests the arithmetic and
# the formats, not the figures).  TAP on stdout.
# Usage: test-model.sh PATH-TO-percs-bench-model
#        test-model.sh --count
NTESTS=17
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
mb=${1:?usage: test-model.sh PATH-TO-percs-bench-model}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
dry=
. "$(dirname "$0")/../../scripts/tap-check.sh"

c=$tmp/c
mkdir -p "$c"
cat > "$c/calibrate.jsonl" <<'J'
{"what":"l","p":2,"class":"same_hub","sizes":[0,8],"us":[3.0,3.5]}
{"what":"l","p":2,"class":"other_supernode","sizes":[0,8],"us":[4.0,4.5]}
{"what":"round","p":2,"sizes":[0,8],"us":[4000.0,6.0]}
{"what":"cau","p":2,"bytes":8,"us":7.0}
{"what":"cau","p":2,"bytes":1024,"us":22.0}
{"what":"g","p":2,"sizes":[0,8],"us":[1.0,1.5]}
{"what":"o","p":2,"bytes":8,"us":0.25}
{"what":"gamma","p":2,"bytes":1,"us":0.0005}
{"what":"round","p":4,"sizes":[0,8],"us":[10.0,12.0]}
{"what":"cau","p":4,"bytes":8,"us":9.0}
{"what":"cau","p":4,"bytes":1024,"us":24.0}
J
v=$tmp/v
mkdir -p "$v"
# barrier p=4: cau predicted 5% off, fastest, chosen; dissemination 12%
# off.  allreduce 8 B: the model picks recursive_doubling, 50% slower
# than the fastest (cau).
cat > "$v/validate.jsonl" <<'J'
{"what":"point","p":4,"coll":"barrier","algo":"dissemination","bytes":0,"measured_us":100.0,"predicted_us":112.0,"model_choice":"cau"}
{"what":"point","p":4,"coll":"barrier","algo":"cau","bytes":0,"measured_us":10.0,"predicted_us":10.5,"model_choice":"cau"}
{"what":"point","p":4,"coll":"allreduce","algo":"recursive_doubling","bytes":8,"measured_us":30.0,"predicted_us":31.5,"model_choice":"recursive_doubling"}
{"what":"point","p":4,"coll":"allreduce","algo":"cau","bytes":8,"measured_us":20.0,"predicted_us":40.0,"model_choice":"recursive_doubling"}
J

echo "TAP version 13"
echo "1..$NTESTS"
check "--help prints usage, exit 0" 0 "" "--calibrate" -- "$mb" --help
check "unknown argument, exit 2" 2 "unknown argument '--bogus'" "" -- "$mb" --bogus
check "--ranks out of range, exit 2" 2 "--ranks: 17 is out of range (2 .. 16)" "" \
	-- "$mb" --ranks 2,17
check "--sizes not a list, exit 2" 2 "--sizes '8;64': want comma-separated whole numbers" "" \
	-- "$mb" --sizes '8;64'
check "--sizes not of doubles, exit 2" 2 "--sizes: 12 is not a multiple of 8" "" \
	-- "$mb" --sizes 8,12
check "--calibrate without 2 ranks, exit 2" 2 "--ranks must include 2" "" \
	-- "$mb" --calibrate --ranks 4,8
check "--calibrate with --plot, exit 2" 2 "--calibrate takes" "" \
	-- "$mb" --calibrate --plot x.png
check "--classes naming no class, exit 2" 2 "--classes: 'far' is no distance class" "" \
	-- "$mb" --calibrate --classes same_hub,far
check "-o without --calibrate, exit 2" 2 "-o goes with --calibrate" "" -- "$mb" -o f
check "--from a directory without the rows, exit 1" 1 "no validate.jsonl there" "" \
	-- "$mb" --from "$tmp/nothing"
check "--calibrate --from writes the file and says where" 0 "" \
	"model file written to $tmp/res/model" \
	-- "$mb" --calibrate --from "$c" -o "$tmp/res/model"
check "the file: version line, sizes, rounds, CAU packet (22 - 7) / 15 = 1" 0 "" \
	"^5$" -- grep -c -e '^percs-mpi-model 1$' -e '^sizes 0 8$' -e '^round 4 10.0000 12.0000$' \
	-e '^cau_packet 1.0000$' -e '^l other_supernode 4.0000 4.5000$' "$tmp/res/model"
check "a stalled figure takes the smallest at a larger size: R(2, 0) 4000 -> 6" 0 "" \
	"^round 2 6.0000 6.0000$" -- cat "$tmp/res/model"
check "validation: 2 of 4 within 10%, 3 of 4 within 15%" 0 "" \
	"predictions within 10%: 50.0% and within 15%: 75.0% of 4" -- "$mb" --from "$v"
check "validation: the choice off by 50% is named" 0 "" \
	"choice off: allreduce p=4 8 B: model recursive_doubling, fastest cau, 50% slower" \
	-- "$mb" --from "$v"
check "--json: the summary" 0 "" '"choice_within_10pct_of_fastest": 0.5' \
	-- "$mb" --from "$v" --json
check "--plot writes a PNG" 0 "plot written to $tmp/p.png" "*" \
	-- "$mb" --from "$v" --plot "$tmp/p.png"
exit $((failed > 0))
