#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh: check tools/vm/percs-vm itself (TAP on stdout): exit status,
# argument passing, the output share, host binaries built with ASan,
# --module, --timeout, the boot watchdog, the oracle and a kernel panic.
# selftest.sh --count prints the number of tests.

set -uo pipefail

tests=(
	usage exit_status argv out_share asan module insmod_fails timeout
	boot_watchdog oracle_file oracle_live panic
)
if [ "${1-}" = --count ]; then
	echo "${#tests[@]}"
	exit 0
fi

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
vm=$here/percs-vm
kver=${KVER:-$("$here/../../scripts/kver.sh")} || exit 1
scratch=$(mktemp -d -t percs-vm-selftest.XXXXXX) || exit 1
trap 'rm -rf -- "$scratch"' EXIT

n=0
failed=0
: >"$scratch/stderr"
# result NAME RC [SKIP-REASON]
result() {
	n=$((n + 1))
	if [ -n "${3-}" ]; then
		echo "ok $n $1 # SKIP $3"
	elif [ "$2" -eq 0 ]; then
		echo "ok $n $1"
	else
		sed 's/^/# /' "$scratch/stderr"
		echo "not ok $n $1"
		failed=$((failed + 1))
	fi
	: >"$scratch/stderr"
}
# expect WANT GOT WHAT: print a diagnostic unless equal; status = equal
expect() {
	[ "$1" = "$2" ] && return 0
	echo "# $3: expected '$1', got '$2'"
	return 1
}
# Run percs-vm quietly; its stderr is shown if the test fails.
run_vm() {
	"$vm" -q "$@" 2>>"$scratch/stderr"
}

t_usage() {
	"$vm" --no-such-option true >/dev/null 2>&1
	expect 2 $? "exit status of a bad option"
}

t_exit_status() {
	local out rc
	out=$(run_vm 'echo hello; exit 7')
	rc=$?
	expect 7 "$rc" "exit status" && expect hello "$out" "output"
}

t_argv() {
	local out want
	# shellcheck disable=SC2016 # literally
	out=$(run_vm -- printf '[%s]' 'a b' '$HOME' "it's" '*' '' 'x,y')
	want="[a b][\$HOME][it's][*][][x,y]"
	expect "$want" "$out" "arguments"
}

t_out_share() {
	local o=$scratch/out rc
	# shellcheck disable=SC2016 # expanded in the VM
	run_vm --out "$o" -- sh -c 'echo "$PERCS_KVER" >"$PERCS_OUT/kver"; test -d /sys/kernel/debug/block'
	rc=$?
	expect 0 "$rc" "exit status" &&
		expect "$kver" "$(cat "$o/kver" 2>/dev/null)" "file written to \$PERCS_OUT" &&
		expect 1 "$(grep -c 'Linux version' "$o/dmesg.txt" 2>/dev/null)" "dmesg.txt" &&
		expect 1 "$([ -s "$o/console.log" ] && echo 1)" "console.log"
}

t_asan() {
	local d=$scratch/asan out rc
	mkdir -p "$d"
	cat >"$d/t.c" <<-'EOF'
		#include <stdio.h>
		#include <stdlib.h>
		int main(int argc, char **argv)
		{
			char *p = malloc(8);
			(void)argv;
			p[argc + 6] = 1; /* one past the end when called with an argument */
			printf("%d\n", argc);
			free(p);
			return 0;
		}
	EOF
	if ! cc -g -O0 -fsanitize=address,undefined -o "$d/t" "$d/t.c" 2>/dev/null; then
		skip="no ASan toolchain"
		return 0
	fi
	out=$(cd "$d" && run_vm -- ./t 2>&1)
	rc=$?
	expect 1 "$out" "ASan binary, clean run" && expect 0 "$rc" "its exit status" || return 1
	out=$(cd "$d" && run_vm -- ./t x 2>&1)
	rc=$?
	expect 1 "$(grep -c 'ERROR: AddressSanitizer: heap-buffer-overflow' <<<"$out")" \
		"ASan report" && expect 1 "$([ "$rc" -ne 0 ] && echo 1)" "failing exit status"
}

dummy=$(modinfo -k "$kver" -n dummy 2>/dev/null)

t_module() {
	local out
	if [ ! -f "$dummy" ]; then
		skip="no dummy.ko"
		return 0
	fi
	out=$(run_vm --module "$dummy" --modparams "numdummies=3" -- \
		sh -c 'ls /sys/class/net | grep -c "^dummy"')
	expect 3 "$out" "dummy devices made by the module"
}

t_insmod_fails() {
	if [ ! -f "$dummy" ]; then
		skip="no dummy.ko"
		return 0
	fi
	run_vm --module "$dummy" --modparams "numdummies=bad" -- true >/dev/null
	expect 125 $? "exit status"
}

t_timeout() {
	local start=$SECONDS
	run_vm --timeout 4 -- sleep 600 >/dev/null
	expect 124 $? "exit status" && expect 1 "$((SECONDS - start < 30))" "ended in time"
}

t_boot_watchdog() {
	# No boot reaches the command within 1 s: both attempts are stuck.
	local out=$scratch/wd start=$SECONDS rc
	mkdir -p "$out"
	PERCS_VM_BOOT_TIMEOUT=1 "$vm" -q --out "$out" -- echo never \
		>"$out/stdout" 2>"$out/stderr"
	rc=$?
	expect 124 "$rc" "exit status" || return 1
	expect 1 "$((SECONDS - start < 60))" "ended in time" || return 1
	expect 1 "$(grep -c 'booting it again' "$out/stderr")" "one retry" ||
		return 1
	expect 1 "$(grep -c 'had not started the command after 1 s, twice' "$out/stderr")" \
		"the final message" || return 1
	expect 0 "$(wc -c <"$out/stdout")" "no output from the command" ||
		return 1
	[ -s "$out/console.log.stuck" ]
	expect 0 $? "the stuck console log kept"
}

t_oracle_file() {
	local f=$scratch/dmesg.txt
	printf '[    1.0] ok\n[    2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x1 [percs]\n' >"$f"
	"$vm" --check-log "$f" >/dev/null 2>&1
	expect 3 $? "a log with a WARNING" || return 1
	printf '[    1.0] ok\n' >"$f"
	"$vm" --check-log "$f" >/dev/null 2>&1
	expect 0 $? "a clean log"
}

t_oracle_live() {
	# sysrq l: a backtrace of all CPUs, which puts a Call Trace in the log.
	run_vm -- sh -c 'echo l >/proc/sysrq-trigger; sleep 1' >/dev/null
	expect 3 $? "exit status" || return 1
	run_vm --no-oracle -- sh -c 'echo l >/proc/sysrq-trigger; sleep 1' >/dev/null
	expect 0 $? "exit status with --no-oracle"
}

t_panic() {
	run_vm -- sh -c 'echo c >/proc/sysrq-trigger' >/dev/null 2>&1
	expect 125 $? "exit status"
}

echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	skip=
	echo "# $t"
	"t_$t"
	result "$t" $? "$skip"
done
echo "# $((n - failed)) of $n passed"
((failed == 0))
