#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# coverage-cover.py without a VM: its choice on a small made-up set of
# per-program function files (the format func-coverage.sh writes), the
# kept programs, the weights file and its errors.  TAP on stdout.
# Usage: test-coverage-cover.sh PATH-TO-coverage-cover.py
#        test-coverage-cover.sh --count
NTESTS=8
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
cc=${1:?usage: test-coverage-cover.sh PATH-TO-coverage-cover.py}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
. "$(dirname "$0")/../../scripts/tap-check.sh"

# big runs f1..f4 in 10 s; small1 f1 f2 and small2 f3 f4 in 2 s each;
# odd runs f5 alone (slow); dup runs f1 only.
d=$tmp/run
mkdir -p "$d/cov"
printf '5 f1\n1 f2\n7 f3\n2 f4\n' > "$d/cov/big"
printf '3 f1\n1 f2\n' > "$d/cov/small1"
printf '1 f3\n9 f4\n' > "$d/cov/small2"
printf '4 f5\n' > "$d/cov/odd"
printf '8 f1\n' > "$d/cov/dup"
echo "10 s exit 0" > "$d/cov/big.time"
echo "2 s exit 0" > "$d/cov/small1.time"
echo "2 s exit 0" > "$d/cov/small2.time"
echo "30 s exit 0" > "$d/cov/odd.time"
echo "1 s exit 0" > "$d/cov/dup.time"
printf 'big 1\nsmall1 50\n' > "$tmp/weights"

echo "TAP version 13"
echo "1..$NTESTS"
check "every function covered by the cheapest programs" 0 "" \
	"5 functions run by 5 programs (45 s); 3 programs run them all (34 s):" \
	-- python3 "$cc" "$d"
check "a program that adds nothing is left out" 0 "" "^left out: big dup$" \
	-- python3 "$cc" "$d"
check "a function one program alone runs is named" 0 "" "^only odd: f5$" \
	-- python3 "$cc" "$d"
check "weights change the choice: big at 1 s beats small1 at 50 s" 0 "" \
	"^left out: dup small1 small2$" -- python3 "$cc" "$d" --weights "$tmp/weights"
check "a kept program comes first even if it adds little" 0 "" \
	"^  dup  *1 s     1 functions,    1 new" -- python3 "$cc" "$d" --keep dup
check "--keep of an unknown program, exit 1" 1 "--keep nosuch: no such program" "" \
	-- python3 "$cc" "$d" --keep nosuch
check "a directory without cov/, exit 1" 1 "no such directory" "" \
	-- python3 "$cc" "$tmp/nothing"
check "--only narrows the candidates" 0 "" \
	"4 functions run by 2 programs (4 s); 2 programs run them all (4 s):" \
	-- python3 "$cc" "$d" --only small1 small2
exit $((failed > 0))
