#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run-fuzz.sh N NAME BINARY SEEDS WORKDIR SECONDS [DICT]: run one libFuzzer
# target for SECONDS from the committed seed corpus SEEDS (new inputs go to
# WORKDIR/corpus, crashes to WORKDIR/crash-*), and print one TAP line,
# "ok N - fuzz: NAME ..." or "not ok N - ..." followed by the fuzzer's
# report.  Exit status 0 either way (the summary counts the line).
n=$1 name=$2 bin=$3 seeds=$4 work=$5 secs=$6 dict=$7
mkdir -p "$work/corpus" || exit 1
log=$work/fuzz.log
set -- -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/"
[ -n "$dict" ] && set -- "$@" -dict="$dict"
"$bin" "$@" "$work/corpus" "$seeds" > "$log" 2>&1
st=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
if [ "$st" -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
	echo "ok $n - fuzz: $name ($runs inputs in ${secs}s, corpus $(ls "$work/corpus" | wc -l))"
else
	echo "not ok $n - fuzz: $name (exit $st, ${runs:-no} inputs)"
	grep -E 'ERROR|SUMMARY|Test unit written|runtime error|deadly signal' "$log" |
		head -n 20 | sed 's/^/# /'
	ls "$work"/crash-* 2>/dev/null | sed 's/^/# reproducer: /'
fi
exit 0
