#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# summary.sh DIR: count the test results in DIR/*.tap and print
#
#   NAME.tap: P passed, F failed, S skipped     (one line per file)
#     not ok 3 name                             (each failing test)
#   stage times: build 97 s, lint 40 s, ... (21 min 3 s in all)
#                                               (if DIR/stage-times exists)
#   N passed, N failed[, N skipped]             (the last line)
#
# Only top-level results count: lines that start, in column 0, with "ok" or
# "not ok" (subtests are indented, or "# "-prefixed by the kselftest runner).
# "# SKIP" marks a skipped test; a "not ok" line with a TAP todo directive is not a failure
# (counted as skipped). A "Bail out!" counts as a failure.
#
# A stage that may die before writing all its results writes NAME.expected
# (the number of tests it will run) first; results missing from NAME.tap,
# or the whole file, count as failures. A TAP plan ("1..N") is an
# expectation too.
#
# Exit status: 1 if anything failed or DIR holds no test at all, else 0.

set -uo pipefail

if (($# != 1)) || [[ $1 == -* ]]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
if [ ! -d "$dir" ]; then
	echo "summary.sh: no such directory: $dir" >&2
	echo "0 passed, 0 failed"
	exit 1
fi

# The stage names: every NAME.tap and every NAME.expected.
mapfile -t names < <(
	cd "$dir" &&
		for f in *.tap *.expected; do
			[ -e "$f" ] && echo "${f%.*}"
		done | LC_ALL=C sort -u
)

total_p=0
total_f=0
total_s=0

for name in "${names[@]}"; do
	tap=$dir/$name.tap
	expected=
	if [ -f "$dir/$name.expected" ]; then
		read -r expected <"$dir/$name.expected" || true
		expected=${expected//[[:space:]]/}
		if ! [[ $expected =~ ^[0-9]+$ ]]; then
			echo "summary.sh: $name.expected: not a number: '$expected'" >&2
			expected=
		fi
	fi
	if [ -f "$tap" ]; then
		src=$tap
	else
		src=/dev/null
	fi
	# awk prints "P F S" on its first line, then the failing tests.
	report=$(awk -v expected="$expected" -v missing_file="$([ -f "$tap" ] || echo 1)" '
		function directive(line,   i) {
			# the text after the first unescaped "#", lowercased
			i = index(line, "#")
			while (i > 1 && substr(line, i - 1, 1) == "\\") {
				line = substr(line, 1, i - 2) "  " substr(line, i + 1)
				i = index(line, "#")
			}
			if (i == 0)
				return ""
			line = tolower(substr(line, i + 1))
			sub(/^[ \t]+/, "", line)
			return line
		}
		{ sub(/\r$/, "") }
		/^ok($|[ \t])/ {
			n++
			if (directive($0) ~ /^skip/)
				s++
			else
				p++
			next
		}
		/^not ok($|[ \t])/ {
			n++
			d = directive($0)
			if (d ~ /^skip/ || d ~ /^todo/)
				s++
			else {
				f++
				fails[++nf] = $0
			}
			next
		}
		/^1\.\.[0-9]+/ {
			plan = $0
			sub(/^1\.\./, "", plan)
			plan = plan + 0
			if (plan == 0 && directive($0) ~ /^skip/)
				skipall = 1
			next
		}
		/^Bail out!/ {
			bail = $0
			next
		}
		END {
			want = plan
			if (expected != "" && expected + 0 > want)
				want = expected + 0
			miss = want - n
			if (miss < 0)
				miss = 0
			if (skipall && n == 0 && miss == 0)
				s++
			if (bail != "" && miss == 0) {
				f++
				fails[++nf] = bail
			}
			f += miss
			printf "%d %d %d\n", p, f, s
			for (i = 1; i <= nf; i++)
				print fails[i]
			if (missing_file)
				printf "no results at all (%d expected)\n", want
			else if (miss)
				printf "%d result(s) missing: %d of %d reported\n", miss, n, want
		}' "$src")
	read -r p f s <<<"$(head -n 1 <<<"$report")"
	printf '%s: %d passed, %d failed, %d skipped\n' "$name.tap" "$p" "$f" "$s"
	if ((f > 0)); then
		tail -n +2 <<<"$report" | sed 's/^/  /'
	fi
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	total_s=$((total_s + s))
done

# make check's stage times (scripts/stage-time.sh), on one line, and the
# time from the first stage to the summary (DIR/wall-time, written by
# scripts/check.sh: stages run side by side, so they add up to more).
if [ -s "$dir/stage-times" ]; then
	times=$(awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $1, $2 }' \
		"$dir/stage-times")
	if [ -s "$dir/wall-time" ]; then
		wall=$(<"$dir/wall-time")
		times+=" ($((wall / 60)) min $((wall % 60)) s in all)"
	fi
	echo "stage times: $times"
fi

line="$total_p passed, $total_f failed"
((total_s > 0)) && line+=", $total_s skipped"
echo "$line"

if ((total_f > 0)); then
	exit 1
fi
if ((total_p + total_s == 0)); then
	echo "summary.sh: no test results in $dir" >&2
	exit 1
fi
exit 0
