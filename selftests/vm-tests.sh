#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-tests.sh FLAVOR: run the whole in-VM suite on one kernel and put its
# TAP files into $PERCS_BUILD/results/PREFIX-*.tap.
#
#   stock   Debian's kernel and the module built against its headers
#           (make module); results vm-*.tap, with vm-bench.tap from
#           selftests/bench.sh (percs-bench), which only this pass runs
#           (run-vm-tests.sh reads PERCS_KERNEL_FLAVOR)
#   kasan   the KASAN + lockdep + kmemleak + UBSAN + fault-injection
#           kernel (tools/vm/debug-kernel.sh kasan, built once and cached),
#           the module built again for it; results kasan-*.tap
#   kcsan   the KCSAN kernel likewise; results kcsan-*.tap
#
# The debug kernels run syscall-heavy loops ~20x slower, so their runs
# scale test sizes with PERCS_TEST_SCALE (default 0.05; see pt_scale()).
# Only a VM that could not run the suite (no TAP came back) or whose exit
# status is not the runner's own 0/1 is recorded as a failure in
# PREFIX-boot.tap; test and oracle failures are in the other TAP files.
set -uo pipefail
flavor=${1:?usage: vm-tests.sh stock|kasan|kcsan}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${PERCS_BUILD:-$src/build}
results=$build/results
timeout=${PERCS_VM_TIMEOUT:-1500}
vm_args=()
scale=1

case $flavor in
stock)
	prefix=vm
	module=$src/percs.ko
	[ -f "$module" ] || { echo "vm-tests: $module missing (make module)" >&2; exit 2; }
	;;
kasan | kcsan)
	prefix=$flavor
	scale=${PERCS_DEBUG_TEST_SCALE:-0.05}
	tree=$("$src/tools/vm/debug-kernel.sh" "$flavor") || {
		echo "vm-tests: the $flavor kernel could not be built" >&2
		mkdir -p "$results"
		printf 'TAP version 13\n1..1\nnot ok 1 - %s kernel built\n' \
			"$flavor" >"$results/$prefix-boot.tap"
		exit 1
	}
	# The module again, for this kernel (vermagic), out of the source tree.
	kmod=$build/kmod-$flavor
	mkdir -p "$kmod"
	cp -rp "$src/Kbuild" "$src/kernel" "$src/firmware-model" "$src/include" "$kmod/"
	make -s -C "$tree" M="$kmod" PERCS_TEST=1 modules >"$kmod/build.log" 2>&1 || {
		cat "$kmod/build.log" >&2
		printf 'TAP version 13\n1..1\nnot ok 1 - module built for the %s kernel\n' \
			"$flavor" >"$results/$prefix-boot.tap"
		exit 1
	}
	module=$kmod/percs.ko
	# percs-vm adds what these kernels need on the command line itself
	# (acpi=noirq: see its --help).  The fuzzer makes 2 x 10^4 calls
	# there (10^5 on the stock kernel): at ~4x the stock cost per call,
	# the full count was the largest part of make check's time budget.
	# Less memory makes each kmemleak scan shorter; module.sh's own
	# load/unload loop is covered at length by cycles.sh, and it tries
	# one rejected parameter of each kind (the stock pass tries all).
	vm_args+=(--kernel "$tree" --mem 1536M --append "kasan_multi_shot"
		--env PERCS_FUZZ_CALLS=20000 --env PERCS_LOAD_CYCLES=1
		--env PERCS_BAD_PARAMS=some)
	# The stock pass runs every program; the debug kernels, 3-20x
	# slower, run a subset chosen by measured coverage so that make
	# check stays near its time budget: tools/vm/func-coverage.sh
	# counts, per program, the percs.ko functions it runs (kprobes on
	# the stock kernel), and tools/vm/coverage-cover.py picks the
	# cheapest programs that together run every function the whole
	# suite runs (267 of the 354 traceable ones; testing.rst says which
	# and why).  Each list is such a cover, plus programs kept for what a
	# function count does not show.  KASAN (with kmemleak and fail-nth)
	# keeps failnth (fault injection exists only there), unload (held
	# datagrams freed at unload), fuzz and races (random call sequences
	# and teardown races, where use-after-free lives).  KCSAN keeps
	# races, faults and storm (several tasks on one window, timers
	# resending, a process storm).  Both keep regcache (the MMU
	# notifier's teardown against running transfers, which no other
	# program runs).  KASAN also runs coll, the CAU's combine path and its
	# trees ended while members wait (98 s there); mcast, the multicast
	# half split from it, runs on the stock kernel only.  Rerun the measurement (make vm-coverage) when a program or a
	# kernel file is added.
	if [ -z "${PERCS_SELFTESTS:-}" ]; then
		case $flavor in
		kasan) vm_args+=(--env "PERCS_SELFTESTS=atomic badinput clock coll failnth fifo fuzz hybrid isr mmap_matrix races rdma regcache reorder reserve unload module") ;;
		kcsan) vm_args+=(--env "PERCS_SELFTESTS=atomic clock faults fifo fuzz hybrid isr jobs mmap_matrix races rdma regcache reorder reserve storm module") ;;
		esac
	fi
	;;
*)
	echo "vm-tests: unknown flavor '$flavor' (stock, kasan, kcsan)" >&2
	exit 2
	;;
esac

out=$build/vm-out-$flavor
rm -rf "$out" && mkdir -p "$out" "$results"
rm -f "$results/$prefix"-*
echo "vm-tests: $flavor kernel, test scale $scale"
start=$(date +%s)
"$src/tools/vm/percs-vm" --out "$out" --timeout "$timeout" "${vm_args[@]}" \
	--module "$module" \
	--env PERCS_SRC="$src" --env PERCS_BUILD="$build" \
	--env PERCS_MODULE="$module" --env PERCS_TEST_SCALE="$scale" \
	--env PERCS_KERNEL_FLAVOR="$flavor" \
	-- "$src/selftests/run-vm-tests.sh"
rc=$?
for f in "$out"/*.tap "$out"/*.expected; do
	[ -e "$f" ] && cp "$f" "$results/$prefix-${f##*/}"
done
boot=$results/$prefix-boot.tap
echo 1 >"$results/$prefix-boot.expected"
if ! ls "$out"/*.tap >/dev/null 2>&1; then
	echo "vm-tests: the $flavor VM produced no TAP (percs-vm exit $rc)"
	printf 'TAP version 13\n1..1\nnot ok 1 - %s VM run (percs-vm exit %s, no TAP)\n' \
		"$flavor" "$rc" >"$boot"
elif [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	echo "vm-tests: percs-vm exit $rc (kernel oracle, timeout or VM failure)"
	printf 'TAP version 13\n1..1\nnot ok 1 - %s VM run: percs-vm exit %s (see %s)\n' \
		"$flavor" "$rc" "$out/dmesg.txt" >"$boot"
else
	printf 'TAP version 13\n1..1\nok 1 - %s VM run: percs-vm exit %s\n' \
		"$flavor" "$rc" >"$boot"
fi
# A debug kernel must reach the command in time (percs-vm adds what it
# needs on the command line: without acpi=noirq it stalls for minutes).
if [ "$flavor" != stock ]; then
	booted=$(sed -n 's/^boot_to_command_s=\([0-9]*\).*/\1/p' "$out/vm-times.txt" 2>/dev/null)
	echo 2 >"$results/$prefix-boot.expected"
	sed -i 's/^1\.\.1$/1..2/' "$boot"
	if [ "${booted:-999}" -lt 150 ]; then
		echo "ok 2 - $flavor kernel: the command started ${booted} s after launch (< 150)"
	else
		echo "not ok 2 - $flavor kernel: the command started ${booted:-?} s after launch (< 150)"
	fi >>"$boot"
fi
echo "vm-tests: $flavor pass took $(($(date +%s) - start)) s; results in $results/$prefix-*"
exit 0
