# shellcheck shell=bash disable=SC2034 # $failed is read by the sourcing script
# SPDX-License-Identifier: GPL-2.0
#
# tap.sh - sourced by packaging/test-*.sh: TAP on stdout.
#
#   tap_plan N         the header and plan (with --count as the script's
#                      first argument, the script prints N and exits)
#   check NAME CMD...  one test: ok when CMD exits 0; its output (stdout and
#                      stderr, 40 lines) follows a failure as comments
# $failed is 1 once a test failed: the script ends with exit $failed.

n=0
failed=0

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

check() {
	local name=$1 output
	shift
	n=$((n + 1))
	if output=$("$@" 2>&1); then
		echo "ok $n - $name"
	else
		failed=1
		echo "not ok $n - $name"
		printf '%s\n' "$output" | head -n 40 | sed 's/^/# /'
	fi
}
