#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-ctl tests that need no kernel: usage errors (exit 2), help (exit 0),
# the no-device and not-an-HFI cases (exit 1), and every command's text and
# JSON output against test-fake-hfi.so, an LD_PRELOAD shim that answers the
# query ioctls on plain files.  TAP on stdout.
# Usage: test-ctl.sh PATH-TO-percs-ctl PATH-TO-test-fake-hfi.so
#        test-ctl.sh --count
NTESTS=31
if [ "$1" = "--count" ]; then
	echo "$NTESTS"
	exit 0
fi
ctl=${1:?usage: test-ctl.sh PATH-TO-percs-ctl PATH-TO-test-fake-hfi.so}
shim=${2:?usage: test-ctl.sh PATH-TO-percs-ctl PATH-TO-test-fake-hfi.so}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty" "$tmp/plain" "$tmp/dev" "$tmp/sys" "$tmp/nosys"
: > "$tmp/plain/percs-hfi0"
# The fake system: 2 supernodes x 2 hubs, 8 HFIs of 8 windows; sysfs says
# HFI 2 has 9 windows (the ioctl says 8) to show which source list uses.
for i in 0 1 2 3 4 5 6 7; do
	: > "$tmp/dev/percs-hfi$i"
	d="$tmp/sys/percs-hfi$i"
	mkdir "$d"
	echo $((i / 2)) > "$d/hub"
	echo $((i / 4)) > "$d/supernode"
	echo $((i % 2)) > "$d/unit"
	if [ $i = 2 ]; then echo 9; else echo 8; fi > "$d/windows_total"
	case $i in 0) echo 2 ;; 3) echo 1 ;; *) echo 0 ;; esac > "$d/windows_in_use"
done
fake() {
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/dev" PERCS_SYSFS_DIR="$tmp/sys" "$@"
}
nosys() {
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/dev" PERCS_SYSFS_DIR="$tmp/nosys" "$@"
}

n=0
failed=0
# check NAME WANT-STATUS STDERR-PATTERN STDOUT-PATTERN -- ARGS...
# An empty pattern means that stream must be empty; '*' means anything.
check() {
	name=$1 want=$2 epat=$3 opat=$4
	shift 5
	n=$((n + 1))
	"$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
	ok=1
	if [ "$st" -ne "$want" ]; then
		echo "#   exit status $st, expected $want"
		ok=0
	fi
	for s in err out; do
		if [ $s = err ]; then pat=$epat; else pat=$opat; fi
		if [ -z "$pat" ]; then
			if [ -s "$tmp/$s" ]; then
				echo "#   std$s not empty:"; sed 's/^/#     /' "$tmp/$s"
				ok=0
			fi
		elif [ "$pat" != "*" ] && ! grep -q -e "$pat" "$tmp/$s"; then
			echo "#   std$s lacks '$pat':"; sed 's/^/#     /' "$tmp/$s"
			ok=0
		fi
	done
	if [ $ok = 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}

# check_json NAME PYTHON-ASSERTS -- ARGS...: exit 0, nothing on stderr,
# stdout one JSON document (bound to d) satisfying the asserts.
check_json() {
	name=$1 code=$2
	shift 3
	n=$((n + 1))
	"$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ "$st" -ne 0 ] || [ -s "$tmp/err" ]; then
		echo "#   exit status $st, stderr:"; sed 's/^/#     /' "$tmp/err"
		echo "not ok $n - $name"
		failed=$((failed + 1))
	elif ! command -v python3 > /dev/null; then
		echo "ok $n - $name # SKIP python3 missing"
	elif python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$code" "$tmp/out" 2> "$tmp/err"; then
		echo "ok $n - $name"
	else
		sed 's/^/#   /' "$tmp/err" "$tmp/out"
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..$NTESTS"
check "--help prints usage, exit 0" 0 "" "usage:" -- "$ctl" --help
check "-h prints usage, exit 0" 0 "" "windows \[--hfi N\]" -- "$ctl" -h
check "help wins over a bad command" 0 "" "usage:" -- "$ctl" bogus --help
check "no command: usage on stderr, exit 2" 2 "usage:" "" -- "$ctl"
check "unknown command, exit 2" 2 "unknown command 'bogus'" "" -- "$ctl" bogus
check "unknown option, exit 2" 2 "unknown option '--bogus'" "" -- "$ctl" list --bogus
check "unknown short option, exit 2" 2 "unknown option '-x'" "" -- "$ctl" -x list
check "--hfi without a value, exit 2" 2 "needs a value" "" -- "$ctl" windows --hfi
check "--hfi with a bad number, exit 2" 2 "bad HFI number 'x1'" "" -- "$ctl" windows --hfi x1
check "--hfi=-1 refused, exit 2" 2 "bad HFI number '-1'" "" -- "$ctl" windows --hfi=-1
check "--hfi with list, exit 2" 2 "applies to 'windows' only" "" -- "$ctl" list --hfi 0
check "extra argument, exit 2" 2 "unexpected argument 'more'" "" -- "$ctl" list more
check "list without the module, exit 1" 1 \
	"percs module not loaded: $tmp/empty/percs-hfi0 missing" "" -- \
	env PERCS_DEV_DIR="$tmp/empty" "$ctl" list
check "windows --json without the module, exit 1" 1 \
	"percs module not loaded: $tmp/empty/percs-hfi0 missing" "" -- \
	env PERCS_DEV_DIR="$tmp/empty" "$ctl" --json windows --hfi 3
check "topology without the module, exit 1" 1 \
	"percs module not loaded" "" -- \
	env PERCS_DEV_DIR="$tmp/empty" "$ctl" topology --json
check "default device directory is /dev" "$([ -e /dev/percs-hfi0 ] && echo 0 || echo 1)" \
	"$([ -e /dev/percs-hfi0 ] && echo '' || echo '/dev/percs-hfi0 missing')" "*" -- \
	env -u PERCS_DEV_DIR "$ctl" topology
check "a file that is not an HFI, exit 1" 1 "PERCS_IOC_HFI_INFO" "" -- \
	env PERCS_DEV_DIR="$tmp/plain" "$ctl" list

check "topology" 0 "" "HFIs:  *8\$" -- fake "$ctl" topology
check_json "topology --json" "
assert d == {'nr_supernodes': 2, 'hubs_per_supernode': 2, 'nr_hubs': 4,
             'hfis_per_hub': 2, 'nr_hfis': 8, 'windows_per_hfi': 8,
             'max_packet': 2048, 'flit_size': 128}, d" -- fake "$ctl" topology --json
check "list: shape line" 0 "" "^2 supernodes x 2 hubs = 4 hubs, 8 HFIs\$" -- fake "$ctl" list
check "list: one row per HFI" 0 "" "^percs-hfi7  *3  *1  *1  *8  *0\$" -- fake "$ctl" list
check "list: sysfs preferred" 0 "" "^percs-hfi2  *1  *0  *0  *9  *0\$" -- fake "$ctl" list
check "list: ioctl without sysfs" 0 "" "^percs-hfi2  *1  *0  *0  *8  *0\$" -- nosys "$ctl" list
check_json "list --json" "
h = d['hfis']
assert [x['hfi'] for x in h] == list(range(8)), h
assert sum(x['windows_in_use'] for x in h) == 3
assert h[5] == {'device': 'percs-hfi5', 'hfi': 5, 'hub': 2, 'supernode': 1,
                'unit': 1, 'windows_total': 8, 'windows_in_use': 0}, h[5]
assert d['nr_hfis'] == 8" -- fake "$ctl" --json list
check "windows: kick window" 0 "" "^ *0  *1  *43  *1001  *7 kick  *65536  *4096  *11  *20  *3  *4\$" -- fake "$ctl" windows
check "windows: poll window" 0 "" "^ *0  *5  *47  *1005  *7 poll " -- fake "$ctl" windows
check "windows --hfi 3" 0 "" "^ *3  *0  *42 " -- fake "$ctl" windows --hfi 3
check_json "windows --json" "
w = d['windows']
assert [(x['hfi'], x['window']) for x in w] == [(0, 1), (0, 5), (3, 0)], w
assert [x['mode'] for x in w] == ['kick', 'poll', 'kick']
assert w[1]['packets_sent'] == 51 and w[1]['job_key'] == 47
assert w[2]['hub'] == 1 and w[2]['unit'] == 1" -- fake "$ctl" windows --json
check_json "windows --json --hfi=2 (none in use)" "
assert d == {'windows': []}, d" -- fake "$ctl" windows --json --hfi=2
check "windows --hfi 8: out of range, exit 2" 2 "the system has HFIs 0..7" "" -- \
	fake "$ctl" windows --hfi 8
check "a missing HFI device, exit 1" 1 "percs-hfi6: No such file" "*" -- \
	sh -c "rm '$tmp/dev/percs-hfi6' && env LD_PRELOAD='$shim' PERCS_DEV_DIR='$tmp/dev' '$ctl' windows"
echo "# $((n - failed)) passed, $failed failed"
[ "$n" -eq "$NTESTS" ] || echo "# ran $n tests, planned $NTESTS"
[ "$failed" -eq 0 ] && [ "$n" -eq "$NTESTS" ]
