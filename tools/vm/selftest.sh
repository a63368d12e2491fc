#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh: check tools/vm/percs-vm itself (TAP on stdout): exit status
# and the output share, argument passing, host binaries built with ASan,
# --module, --timeout, the boot watchdog, the oracle, a kernel panic, and
# the arguments it adds for the kernel it boots.  A boot costs 5-7 s under
# TCG, so checks that can share one do.  The debug kernels' boots are
# make check's vm-tests-kasan and vm-tests-kcsan (selftests/vm-tests.sh
# checks their boot time).
# selftest.sh --count prints the number of tests.

set -uo pipefail

tests=(
	usage exit_status_out_share argv asan module insmod_fails timeout
	boot_watchdog oracle_file oracle_live panic kernel_args
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

t_exit_status_out_share() {
	local o=$scratch/out out rc
	# shellcheck disable=SC2016 # expanded in the VM
	out=$(run_vm --out "$o" 'echo "$PERCS_KVER" >"$PERCS_OUT/kver"; test -d /sys/kernel/debug/block && echo hello; exit 7')
	rc=$?
	expect 7 "$rc" "exit status" && expect hello "$out" "output" &&
		expect "$kver" "$(cat "$o/kver" 2>/dev/null)" "file written to \$PERCS_OUT" &&
		expect 1 "$(grep -c 'Linux version' "$o/dmesg.txt" 2>/dev/null)" "dmesg.txt" &&
		expect 1 "$([ -s "$o/console.log" ] && echo 1)" "console.log"
}

t_argv() {
	local out want
	# shellcheck disable=SC2016 # literally
	out=$(run_vm -- printf '[%s]' 'a b' '$HOME' "it's" '*' '' 'x,y')
	want="[a b][\$HOME][it's][*][][x,y]"
	expect "$want" "$out" "arguments"
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
	# A clean run, then one that overflows, in one boot.
	# shellcheck disable=SC2016 # expanded in the VM
	out=$(cd "$d" && run_vm './t; echo "rc=$?"; ./t x' 2>&1)
	rc=$?
	expect 1 "$(head -n 1 <<<"$out")" "ASan binary, clean run" &&
		expect 1 "$(grep -c '^rc=0$' <<<"$out")" "its exit status" &&
		expect 1 "$(grep -c 'ERROR: AddressSanitizer: heap-buffer-overflow' <<<"$out")" \
			"ASan report" &&
		expect 1 "$([ "$rc" -ne 0 ] && echo 1)" "failing exit status"
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

# kboot CONFIG-LINE... -- PERCS-VM-ARGS...: boot the host's kernel as a
# --kernel tree ($scratch/ktree) whose .config holds CONFIG-LINE...; echo the
# command line the kernel reports.  The tree's initramfs (of its own
# release, in a cache of its own) has no modules, so the boot ends in the
# init, unable to mount anything: percs-vm exits 125, which is all this
# needs.  percs-vm's stderr goes to $scratch/kboot.err.
kboot() {
	local t=$scratch/ktree out=$scratch/kboot
	rm -rf "$t" "$out"
	mkdir -p "$t/arch/x86/boot" "$t/include/config" "$out"
	ln -s "/boot/vmlinuz-$kver" "$t/arch/x86/boot/bzImage"
	echo "$kver-percs-selftest" >"$t/include/config/kernel.release"
	: >"$t/.config"
	while [ "$1" != -- ]; do
		echo "$1" >>"$t/.config"
		shift
	done
	shift
	PERCS_VM_CACHE=$scratch/cache "$vm" --out "$out" --kernel "$t" \
		--append loglevel=7 "$@" -- true >/dev/null 2>"$scratch/kboot.err"
	echo "# percs-vm exit $?, $(grep -m1 'adding\|not adding' "$scratch/kboot.err")"
	sed -n 's/.*Kernel command line: //p' "$out/console.log" | tr -d '\r' | head -n 1
}

t_kernel_args() {
	local line
	if [ ! -r "/boot/vmlinuz-$kver" ]; then
		skip="cannot read /boot/vmlinuz-$kver"
		return 0
	fi
	# ACPI and KASAN, as a debug kernel: acpi=noirq added.
	line=$(kboot CONFIG_ACPI=y CONFIG_KASAN=y --)
	printf '%s\n' "$line" | grep '^#'
	line=$(printf '%s\n' "$line" | grep -v '^#')
	expect 1 "$(grep -c ' acpi=noirq' <<<"$line")" "acpi=noirq in '$line'" ||
		return 1
	expect 1 "$(grep -c 'adding acpi=noirq to the kernel command line: .*/ktree/.config has ACPI and KASAN' \
		"$scratch/kboot.err")" "the reason on stderr" || return 1
	# Without the debug instrumentation (as Debian's kernel): nothing.
	line=$(kboot CONFIG_ACPI=y '# CONFIG_KASAN is not set' -- | grep -v '^#')
	expect 1 "$(grep -c 'rdinit=/init loglevel=7$' <<<"$line")" \
		"nothing added to '$line'" || return 1
	# An acpi= of the caller's own wins.
	line=$(kboot CONFIG_ACPI=y CONFIG_PROVE_LOCKING=y -- --append acpi=strict |
		grep -v '^#')
	expect 1 "$(grep -c 'rdinit=/init loglevel=7 acpi=strict$' <<<"$line")" \
		"only the caller's acpi= in '$line'"
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
