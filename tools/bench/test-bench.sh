#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-bench tests that need no kernel: --help (exit 0); every option's
# bad values, unknown options and subcommands (exit 2, a message naming
# the problem on stderr, nothing on stdout); valid values at the edges of
# their ranges, which must get as far as the device (exit 1); no device
# (exit 1, "the percs module is not loaded: DIR/percs-hfi0 not found"); a
# file that is not an HFI (exit 1); and the hub checks against the system
# test-fake-hfi.so (percs-ctl's LD_PRELOAD shim) describes: 4 hubs.
# PERCS_DEV_DIR points at a directory of our own in every run but one, so
# a percs module loaded on the host changes nothing.  TAP on stdout.
# Usage: test-bench.sh PATH-TO-percs-bench PATH-TO-test-fake-hfi.so
#        test-bench.sh --count
if [ "$1" = "--count" ]; then
	dry=1
else
	dry=
	bench=${1:?usage: test-bench.sh PATH-TO-percs-bench PATH-TO-test-fake-hfi.so}
	shim=${2:?usage: test-bench.sh PATH-TO-percs-bench PATH-TO-test-fake-hfi.so}
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/empty" "$tmp/plain" "$tmp/fake"
	: > "$tmp/plain/percs-hfi0"
	# What the shim answers for: HFIs 0-7, 2 supernodes x 2 hubs.
	for i in 0 1 2 3 4 5 6 7; do
		: > "$tmp/fake/percs-hfi$i"
	done
fi

# The message depends on whether the host has the module: both are exact.
if [ -e /sys/module/percs ]; then
	nodev="percs-bench: the percs module is loaded but its device is missing: $tmp/empty/percs-hfi0 not found"
else
	nodev="percs-bench: the percs module is not loaded: $tmp/empty/percs-hfi0 not found"
fi
# The CPUs we may run on (nproc would also heed OMP_NUM_THREADS).
ncpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2> /dev/null || echo 1)

n=0
failed=0
also=
# check(): scripts/tap-check.sh, with fixed strings.
check_fixed=1
. "$(dirname "$0")/../../scripts/tap-check.sh"

skip() {
	n=$((n + 1))
	[ -n "$dry" ] || echo "ok $n - $1 # SKIP $2"
}

# run ARGS...: percs-bench with no device (a directory of our own).
run() {
	env PERCS_DEV_DIR="$tmp/empty" "$bench" "$@"
}
# fake ARGS...: percs-bench on the shim's 4-hub system.
fake() {
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/fake" "$bench" "$@"
}
# bad NAME STDERR-STRING ARGS...: bad usage: exit 2, the message and
# "Try 'percs-bench --help'." on stderr, nothing on stdout.
bad() {
	name=$1 msg=$2
	shift 2
	also="Try 'percs-bench --help'."
	check "$name: exit 2" 2 "$msg" "" -- run "$@"
	also=
}
# nodev NAME ARGS...: accepted; stops at the missing device with exit 1.
nodev() {
	name=$1
	shift
	check "$name: accepted, exit 1 at the missing device" 1 "$nodev" "" -- \
		run "$@"
}

# bad_number OPTION TOO-LOW TOO-HIGH RANGE: the values an unsigned option
# refuses; TOO-LOW empty if the least value is 0.
bad_number() {
	o=$1 lo=$2 hi=$3 range=$4
	bad "$o without a value" "option '$o' requires an argument" "$o"
	for v in abc "" 5x 1.5 -1 -0 +5 " 5" " -18446744073709551615" 0x \
		 99999999999999999999999 $lo $hi; do
		bad "$o '$v'" "$o: '$v' is not a number in $range" "$o" "$v"
	done
}
# bad_secs OPTION TOO-LOW TOO-HIGH RANGE
bad_secs() {
	o=$1 lo=$2 hi=$3 range=$4
	bad "$o without a value" "option '$o' requires an argument" "$o"
	for v in abc "" 1s -1 0 " 1" +1 nan inf -inf 1e999 $lo $hi; do
		bad "$o '$v'" "$o: '$v' is not a number of seconds in $range" "$o" "$v"
	done
}
# bad_word OPTION MESSAGE-TAIL: an option that takes one of a few words.
bad_word() {
	o=$1 tail=$2
	bad "$o without a value" "option '$o' requires an argument" "$o"
	for v in bogus "" FIFO1 " "; do
		bad "$o '$v'" "$o: '$v' is not $tail" "$o" "$v"
	done
}

[ -n "$dry" ] || echo "TAP version 13"

# Help.
check "--help: usage on stdout, exit 0" 0 "" "Usage: percs-bench [OPTIONS]" -- \
	run --help
check "-h: usage on stdout, exit 0" 0 "" "Usage: percs-bench [OPTIONS]" -- run -h
check "--help before a bad option wins: exit 0" 0 "" "Usage:" -- \
	run --help --iters 0
n=$((n + 1))
if [ -z "$dry" ]; then
	run --help > "$tmp/out" 2>&1
	miss=
	for w in all limits engine lat bw rdma atomic coll --quick --iters \
		 --bw-time --batch --fifo-size --copy --hub-a --hub-b --kind \
		 --mode --pair --sizes --procs --cpus --yield --timeout --json \
		 --plot --quiet --help "Exit status"; do
		grep -q -F -e "$w" "$tmp/out" || miss="$miss $w"
	done
	if [ -z "$miss" ]; then
		echo "ok $n - --help names every subcommand and option"
	else
		echo "#   missing:$miss"
		echo "not ok $n - --help names every subcommand and option"
		failed=$((failed + 1))
	fi
fi
# The exit-2 cases of the lists are documented where they are refused.
check "--help: exit 2 for a --sizes value with no case" 0 "" \
	"value the subcommand has no case of" -- run --help
check "--help: exit 2 for a list item given twice" 0 "" \
	"a list with an empty item, an item twice or too many" -- run --help

# Options and subcommands that do not exist.
bad "an unknown option" "unrecognized option '--frobnicate'" --frobnicate
bad "an unknown short option" "invalid option -- 'x'" -x
bad "an ambiguous abbreviation" "option '--p' is ambiguous" --p 2
bad "--quick with a value" "option '--quick' doesn't allow an argument" --quick=1
bad "--json with a value" "option '--json' doesn't allow an argument" --json=yes
bad "an unknown subcommand" "unknown subcommand 'frob'" frob
bad "a subcommand in capitals" "unknown subcommand 'LAT'" LAT
bad "an empty subcommand" "unknown subcommand ''" ""
bad "two subcommands" "unexpected argument 'bw'" lat bw
bad "a subcommand and a stray word" "unexpected argument 'now'" --quick coll now
bad "-q keeps the usage errors" "--iters: '0' is not a number" -q --iters 0

# Numbers.
bad_number --iters 0 10000001 "[1, 10000000]"
bad_number --batch 0 65537 "[1, 65536]"
bad_number --fifo-size 4095 8388608 "[4096, 4194304]"
bad "--fifo-size not a power of two" "--fifo-size: 12288 is not a power of two" \
	--fifo-size 12288
bad_number --hub-a "" 2147483648 "[0, 2147483647]"
bad_number --hub-b "" 2147483648 "[0, 2147483647]"
bad_number --cpus 0 1025 "[1, 1024]"
bad "--cpus above the CPUs this process may use" \
	"--cpus $((ncpus + 1)): this process may run on $ncpus CPU" \
	coll --cpus $((ncpus + 1))
bad_secs --bw-time 0.009 3601 "[0.01, 3600]"
bad_secs --timeout 0.09 3601 "[0.1, 3600]"

# Words.
bad_word --kind "fifo or imm"
bad_word --mode "kick, poll or auto"
bad_word --pair "near or far"

# Lists.
bad "--sizes without a value" "option '--sizes' requires an argument" --sizes
bad "--sizes ''" "--sizes: no size given" --sizes ""
bad "--sizes ','" "--sizes: empty item in ','" --sizes ,
bad "--sizes with an empty item" "--sizes: empty item in '8,,16'" lat --sizes 8,,16
bad "--sizes ending in a comma" "--sizes: empty item in '8,'" lat --sizes 8,
bad "--sizes starting with a comma" "--sizes: empty item in ',8'" lat --sizes ,8
bad "--sizes with a word" "--sizes: 'x' is not a number in [0, 65536]" lat --sizes 8,x
bad "--sizes with a negative size" "--sizes: '-8' is not a number in [0, 65536]" \
	lat --sizes -8
bad "--sizes with a size over 64 KiB" "--sizes: '65537' is not a number in [0, 65536]" \
	coll --sizes 65537
bad "--sizes with a size twice" "--sizes: 64 given twice" lat --sizes 64,128,64
bad "--sizes with 17 sizes" "--sizes: at most 16 sizes" \
	coll --sizes 8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136
bad "lat --sizes: a size lat does not measure" \
	"--sizes: lat has no 100-byte case (sizes: 8, 16, 32, 64, 96, 128, 256, 512, 1024, 2016)" \
	lat --sizes 8,100
bad "lat --sizes 0" "--sizes: lat has no 0-byte case" lat --sizes 0
bad "lat --sizes over the largest payload" "--sizes: lat has no 4096-byte case" \
	lat --sizes 4096
bad "lat --kind imm --sizes: over the immediate payload" \
	"--sizes: lat has no 128-byte imm case (sizes: 8, 16, 32, 64, 96)" \
	lat --kind imm --sizes 128
bad "bw --sizes: a size only lat measures" \
	"--sizes: bw has no 8-byte case (sizes: 64, 96, 128, 256, 512, 1024, 2016)" \
	bw --sizes 8
bad "bw --kind fifo --sizes 96: only immediate sends stream 96 bytes" \
	"--sizes: bw has no 96-byte fifo case" bw --kind fifo --sizes 96
bad "engine --sizes: a size engine does not measure" \
	"--sizes: engine has no 16-byte case" engine --sizes 16
bad "all --sizes: a size no part measures" "--sizes: all has no 100-byte case" \
	--sizes 100
bad "coll --sizes 0" "--sizes: 0 is not a multiple of 8 in [8, 65536]" coll --sizes 0
bad "coll --sizes not a multiple of 8" "--sizes: 12 is not a multiple of 8 in [8, 65536]" \
	coll --sizes 8,12
bad "--procs without a value" "option '--procs' requires an argument" --procs
bad "--procs ''" "--procs: no count given" coll --procs ""
bad "--procs with an empty item" "--procs: empty item in '2,,4'" coll --procs 2,,4
bad "--procs 1" "--procs: '1' is not a number in [2, 16]" coll --procs 1
bad "--procs 0" "--procs: '0' is not a number in [2, 16]" coll --procs 0
bad "--procs 17" "--procs: '17' is not a number in [2, 16]" coll --procs 2,17
bad "--procs -4" "--procs: '-4' is not a number in [2, 16]" coll --procs -4
bad "--procs with a word" "--procs: 'all' is not a number in [2, 16]" coll --procs all
bad "--procs with a count twice" "--procs: 4 given twice" coll --procs 4,2,4
bad "--procs with 9 counts" "--procs: at most 8 counts" \
	coll --procs 2,3,4,5,6,7,8,9,10

# Combinations and file names.
bad "--plot without a file name" "option '--plot' requires an argument" lat --plot
bad "--plot ''" "--plot: no file name" lat --plot ""

# Values at the edges of their ranges get as far as the device.
nodev "no subcommand (all)"
for w in all limits engine lat bw rdma atomic coll; do
	nodev "$w" "$w"
done
nodev "--quick --json -q --yield --copy" --quick --json -q --yield --copy lat
nodev "rdma --json" rdma --json
nodev "--iters 1" --iters 1
nodev "--iters 10000000" --iters 10000000
nodev "--iters=5 (one argument)" --iters=5 coll
nodev "--bw-time 0.01" --bw-time 0.01 bw
nodev "--bw-time 3600" --bw-time 3600
nodev "--batch 1, --batch 65536" --batch 1 --batch 65536 bw
nodev "--fifo-size 4096" --fifo-size 4096
nodev "--fifo-size 4194304" --fifo-size 4194304
nodev "--fifo-size 0x10000 (hexadecimal)" --fifo-size 0x10000
nodev "--timeout 0.1" --timeout 0.1
nodev "--timeout 3600" --timeout 3600
nodev "--hub-a 0 --hub-b 0" --hub-a 0 --hub-b 0 lat
nodev "--hub-b 2147483647 (checked against the system later)" --hub-b 2147483647
nodev "--cpus 1" coll --cpus 1
nodev "--cpus: every CPU this process may use" coll --cpus "$ncpus"
nodev "--kind fifo --mode kick --pair near" --kind fifo --mode kick --pair near lat
nodev "--kind imm --mode poll --pair far" --kind imm --mode poll --pair far lat
nodev "--pair same-hub (the older name)" --pair same-hub lat
nodev "lat --sizes: every size lat measures" lat \
	--sizes 8,16,32,64,96,128,256,512,1024,2016
nodev "lat --kind imm --sizes 8,96" lat --kind imm --sizes 8,96
nodev "bw --sizes 64,96,2016" bw --sizes 64,96,2016
nodev "bw --kind imm --sizes 96" bw --kind imm --sizes 96
nodev "engine --sizes 8,64,96,256,1024,2016" engine --sizes 8,64,96,256,1024,2016
nodev "all --sizes 16 (lat measures it)" --sizes 16
nodev "atomic --sizes 8 (sizes not used)" atomic --sizes 8
nodev "coll --sizes 8,65536" coll --sizes 8,65536
nodev "coll --sizes: 16 sizes" coll \
	--sizes 8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128
nodev "coll --procs 2,16" coll --procs 2,16
nodev "coll --procs: 8 counts" coll --procs 16,2,3,4,5,6,7,8
nodev "--sizes and --procs given twice: the last wins" coll --sizes 12 --sizes 8 \
	--procs 3 --procs 2
nodev "--plot" coll --plot "$tmp/never.png"

# The device, by other paths.
if [ -e /dev/percs-hfi0 ] || [ -e /sys/module/percs ]; then
	skip "no PERCS_DEV_DIR: the documented message, exit 1" \
		"the host has the percs module loaded"
else
	check "no PERCS_DEV_DIR: the documented message, exit 1" 1 \
		"percs-bench: the percs module is not loaded: /dev/percs-hfi0 not found" "" -- \
		env -u PERCS_DEV_DIR "$bench" --quick
fi
check "no device: how to load the module" 1 \
	"percs-bench: load the module first (insmod percs.ko" "" -- run
check "--hub-a 3 with no device: HFI 0 is what is missing" 1 "$nodev" "" -- \
	run --hub-a 3
check "a file that is not an HFI: exit 1" 1 "percs-bench: PERCS_IOC_HFI_INFO:" "" -- \
	env PERCS_DEV_DIR="$tmp/plain" "$bench"
check "--hub-a 1 where only HFI 0 exists: exit 2" 2 \
	"--hub-a 1: no such hub ($tmp/plain/percs-hfi2 is missing)" "" -- \
	env PERCS_DEV_DIR="$tmp/plain" "$bench" --hub-a 1
check "--hub-a 4 on a 4-hub system: exit 2" 2 \
	"--hub-a 4: no such hub ($tmp/fake/percs-hfi8 is missing)" "" -- \
	fake --hub-a 4 lat
check "--hub-b 4 on a 4-hub system: exit 2" 2 "--hub-b 4: the system has 4 hubs" "" -- \
	fake --hub-b 4 lat
# The shim answers no window reservation (ENOTTY): every lat and bw case
# fails, and lat and bw say how many and exit 1.
check "lat, no window can be reserved: exit 1, 1 case failed" 1 \
	"percs-bench: lat: 1 case failed" \
	"FAILED: reserve a window on hub 0 HFI 0: Inappropriate ioctl" -- \
	fake -q lat --kind imm --mode kick --pair near --sizes 8
check "bw --json, no window can be reserved: exit 1, 2 cases failed" 1 \
	"percs-bench: bw: 2 cases failed" \
	'"error": "reserve a window on hub 0 HFI 0: Inappropriate ioctl for device"' -- \
	fake -q --json bw --kind imm --mode poll --sizes 96
# No HFI 1 (only percs-hfi0 there): its open fails with ENOENT, which is
# "No such file or directory", not percs_strerror()'s RDMA meaning.
check "engine, HFI 1 missing: ENOENT as strerror() gives it, exit 1" 1 \
	"percs-bench: engine: No such file or directory" "*" -- \
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/plain" "$bench" -q engine
# The same for rdma: it fails at its first
# step, says which on stderr and in its JSON, and exits 1.
check "rdma --json, no window can be reserved: exit 1, the error in the JSON" 1 \
	"percs-bench: rdma: reserve a window on hub 0 HFI 0: Inappropriate ioctl" \
	'"error": "reserve a window on hub 0 HFI 0: Inappropriate ioctl for device"' -- \
	fake -q --json rdma
check "rdma, no window can be reserved: exit 1, FAILED in the table" 1 \
	"percs-bench: rdma: reserve a window on hub 0 HFI 0:" \
	"FAILED: reserve a window on hub 0 HFI 0:" -- fake -q rdma
check "--hub-b 2147483647 on a 4-hub system: exit 2" 2 \
	"--hub-b 2147483647: the system has 4 hubs" "" -- fake --hub-a 3 --hub-b 2147483647

if [ -n "$dry" ]; then
	echo "$n"
	exit 0
fi
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
