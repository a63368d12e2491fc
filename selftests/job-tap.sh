# shellcheck shell=bash disable=SC2034 # $failed is read by the sourcing script
# SPDX-License-Identifier: GPL-2.0
#
# job-tap.sh - sourced by the selftests that run programs under percs-run
# (mpi.sh, shmem.sh): TAP output and the job() check they share.
#
# The sourcing script sets $run (the launcher), $tmp (a scratch
# directory) and $plan, then sources this file, which prints the TAP
# header and defines:
#   ok DESC, not_ok DESC [FILE...]   a TAP line (FILEs' tails as comments)
#   live_zero                        every debugfs live counter back to 0
#   job NAME WANT_RC STDOUT_RE STDERR_RE TIMEOUT LAUNCHER-ARGS...
# $failed is 1 once anything failed: the script ends with exit $failed.

live=/sys/kernel/debug/percs/live
n=0
failed=0
echo "TAP version 13"
echo "1..${plan:?set plan before sourcing job-tap.sh}"

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
	shift
	for f in "$@"; do
		[ -s "$f" ] && sed 's/^/# /' "$f" | tail -n 25
	done
}

# Every live counter back to zero within 5 s.
live_zero() {
	local i key val rest bad
	for i in $(seq 50); do
		bad=
		while read -r key val rest; do
			[ "$val" = 0 ] || bad+="$key=$val "
		done <"$live"
		[ -z "$bad" ] && return 0
		sleep 0.1
	done
	echo "# live counters: $bad"
	return 1
}

# job NAME WANT_RC STDOUT_RE STDERR_RE TIMEOUT LAUNCHER-ARGS...
# The job's exit status must be WANT_RC, its stdout match STDOUT_RE and
# its stderr STDERR_RE (egrep, '' for anything), it must end within
# TIMEOUT seconds (a hang fails) and leave nothing reserved or pinned.
# A passing job's line says how long it took; the result rows of a
# benchmark-like program (numbers only) follow it as comments.
job() {
	local name=$1 want=$2 out_re=$3 err_re=$4 limit=$5 rc why='' start
	shift 5
	start=$(date +%s)
	timeout -k 5 "$limit" "$run" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ "$want" != 137 ]; then
		why="hung: killed after ${limit}s"
	elif [ "$rc" != "$want" ]; then
		why="exit status $rc, want $want"
	elif [ -n "$out_re" ] && ! grep -q -E -e "$out_re" "$tmp/out"; then
		why="stdout lacks /$out_re/"
	elif [ -n "$err_re" ] && ! grep -q -E -e "$err_re" "$tmp/err"; then
		why="stderr lacks /$err_re/"
	elif ! live_zero; then
		why="something left reserved or pinned"
	fi
	if [ -z "$why" ]; then
		ok "$name ($(($(date +%s) - start)) s)"
		grep -E '^ *[0-9]+ +[0-9.]+ +[0-9.]+$' "$tmp/out" | sed 's/^/# /'
	else
		not_ok "$name: $why" "$tmp/out" "$tmp/err"
	fi
}
