#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# percs-ctl tests that need no kernel: usage errors (exit 2), help (exit 0),
# the no-device and not-an-HFI cases (exit 1), and every command's text and
# JSON output against test-fake-hfi.so, an LD_PRELOAD shim that answers the
# query ioctls on plain files.  The ISR commands run against a fake debugfs
# tree (PERCS_DEBUGFS_DIR) of plain files, the shim refusing writes to its
# control files as the kernel would; malformed files, missing files, a
# directory in place of a file and a user without access give the errors.
# TAP on stdout.
# Usage: test-ctl.sh PATH-TO-percs-ctl PATH-TO-test-fake-hfi.so
#        test-ctl.sh --count
NTESTS=237
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

# The fake debugfs tree $tmp/dbg/isr of the same system (spec 2x2): six
# links (a link of each class down, one with the largest counter), the
# reorder, drop and duplicate knobs at their defaults, the flight counters;
# and $tmp/dbg/atomic, the atomic counters.
mkdir -p "$tmp/dbg/isr"
HDR="id class hub_a hub_b port_a port_b state error_ppm packets flits flits_vc0 flits_vc1 flits_vc2 replays drops"
printf '%s\n' "$HDR" \
	"0 LL 0 1 0 0 up 0 12 40 40 0 0 0 0" \
	"1 LL 2 3 0 0 up 0 7 21 21 0 0 0 0" \
	"2 D 0 2 16 16 up 0 30 95 40 55 0 0 0" \
	"3 D 1 3 16 16 down 2000 5 80 30 50 0 3 0" \
	"4 LR 0 1 7 7 down 0 0 0 0 0 0 0 0" \
	"5 D 0 3 17 17 up 150 18446744073709551615 1 1 0 0 9 0" \
	> "$tmp/dbg/isr/links"
printf '%s\n' "spec 2x2" "supernodes 2" "hubs_per_supernode 2" "hubs 4" \
	"links 6" "d_links_per_pair 3" > "$tmp/dbg/isr/topology"
printf '%s\n' "in_flight 1" "held 17" "discarded 2" > "$tmp/dbg/isr/flight"
echo 0 > "$tmp/dbg/isr/reorder_ppm"
echo 8 > "$tmp/dbg/isr/reorder_depth"
echo 200 > "$tmp/dbg/isr/hold_us"
echo 0 > "$tmp/dbg/isr/drop_ppm"
echo 0 > "$tmp/dbg/isr/dup_ppm"
: > "$tmp/dbg/isr/link_up"
: > "$tmp/dbg/isr/link_down"
: > "$tmp/dbg/isr/link_error"
printf '%s\n' "issued 1200" "completed 1190" "retransmits 14" "duplicates 3" \
	"stale 1" "dropped 12" "duplicated 5" "delayed 6" "timeouts 0" \
	"outstanding 18446744073709551615" > "$tmp/dbg/atomic"

fake() {
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/dev" PERCS_SYSFS_DIR="$tmp/sys" \
		PERCS_DEBUGFS_DIR="$tmp/dbg" "$@"
}
nosys() {
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/dev" PERCS_SYSFS_DIR="$tmp/nosys" \
		PERCS_DEBUGFS_DIR="$tmp/nodbg" "$@"
}
# tree NAME: a fresh copy of the fake debugfs tree to change; sets $d to it.
trees=0
tree() {
	trees=$((trees + 1))
	d=$tmp/$1.$trees
	cp -R "$tmp/dbg" "$d"
}
# at DIR ARGS...: ARGS with the fake devices and DIR as debugfs.
at() {
	dir=$1
	shift
	env LD_PRELOAD="$shim" PERCS_DEV_DIR="$tmp/dev" PERCS_SYSFS_DIR="$tmp/sys" \
		PERCS_DEBUGFS_DIR="$dir" "$@"
}
# badlinks LINE...: a tree whose isr/links holds these lines, in $d.
badlinks() {
	tree bad
	printf '%s\n' "$@" > "$d/isr/links"
}
# unpriv ARGS...: ARGS as a user debugfs is closed to, as it is to users:
# nobody if we are root ($tmp is 0700), else ourselves on an unreadable isr/.
cp -R "$tmp/dbg" "$tmp/locked"
unpriv_skip=
if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv > /dev/null; then
		unpriv_skip="setpriv missing"
	elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$ctl"; then
		unpriv_skip="nobody cannot run $ctl"
	fi
else
	chmod 0 "$tmp/locked/isr" "$tmp/locked/atomic"
fi
unpriv() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			env PERCS_DEBUGFS_DIR="$tmp/locked" "$@"
	else
		env PERCS_DEBUGFS_DIR="$tmp/locked" "$@"
	fi
}

n=0
failed=0
# check(): scripts/tap-check.sh (regular expressions).
. "$(dirname "$0")/../../scripts/tap-check.sh"

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

# check_exact NAME WANT -- ARGS...: exit 0, nothing on stderr, stdout
# exactly the lines of WANT.
check_exact() {
	name=$1
	printf '%s\n' "$2" > "$tmp/want"
	shift 3
	n=$((n + 1))
	"$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ "$st" -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/want" "$tmp/out"; then
		echo "ok $n - $name"
	else
		echo "#   exit status $st, stderr:"; sed 's/^/#     /' "$tmp/err"
		diff -u "$tmp/want" "$tmp/out" | sed 's/^/#   /'
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}

# check_file NAME FILE WANT -- ARGS...: exit 0, no output at all, and FILE
# then holds exactly the line WANT (what the command wrote to debugfs).
check_file() {
	name=$1 file=$2
	printf '%s\n' "$3" > "$tmp/want"
	shift 4
	n=$((n + 1))
	"$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ "$st" -eq 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ] &&
	   cmp -s "$tmp/want" "$file"; then
		echo "ok $n - $name"
	else
		echo "#   exit status $st, output:"; sed 's/^/#     /' "$tmp/err" "$tmp/out"
		echo "#   $file:"; sed 's/^/#     /' "$file"
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
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
check "topology: the spec from isr/topology" 0 "" "^spec:  *2x2\$" -- fake "$ctl" topology
check "topology: links and D links per pair from isr/topology" 0 "" \
	"^D links per pair:  *3\$" -- fake "$ctl" topology
check_json "topology --json" "
assert d == {'spec': '2x2', 'nr_supernodes': 2, 'hubs_per_supernode': 2,
             'nr_hubs': 4, 'hfis_per_hub': 2, 'nr_hfis': 8,
             'windows_per_hfi': 8, 'max_packet': 2048, 'flit_size': 128,
             'nr_links': 6, 'd_links_per_pair': 3}, d" -- fake "$ctl" topology --json
check_json "topology --json without isr/topology" "
assert d == {'nr_supernodes': 2, 'hubs_per_supernode': 2, 'nr_hubs': 4,
             'hfis_per_hub': 2, 'nr_hfis': 8, 'windows_per_hfi': 8,
             'max_packet': 2048, 'flit_size': 128}, d" -- nosys "$ctl" topology --json
check_exact "topology without isr/topology: no spec line" "supernodes:          2
hubs per supernode:  2
hubs:                4
HFIs per hub:        2
HFIs:                8
windows per HFI:     8
max packet:          2048 bytes (128-byte flits)" -- nosys "$ctl" topology
tree topo; echo "spec" >> "$d/isr/topology"
check "topology: a malformed isr/topology, exit 1" 1 \
	"isr/topology:7: 1 fields, expected 'NAME VALUE'" "^HFIs:  *8\$" -- at "$d" "$ctl" topology
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
check "windows: kick window" 0 "" "^ *0  *1  *43  *1001  *7 kick  *65536  *4096  *11  *20  *3  *4  *5  *6  *7\$" -- fake "$ctl" windows
check "windows: poll window" 0 "" "^ *0  *5  *47  *1005  *7 poll " -- fake "$ctl" windows
check "windows --hfi 3: another user's verbs QP window, hidden" 0 "" \
	"^ *3  *0  *-  *-  *-   qp  *65536  *4096  *-  *-  *-  *-  *-  *-  *-\$" -- \
	fake "$ctl" windows --hfi 3
check_json "windows --json" "
w = d['windows']
assert [(x['hfi'], x['window']) for x in w] == [(0, 1), (0, 5), (3, 0)], w
assert [x['mode'] for x in w] == ['kick', 'poll', 'qp']
assert w[2]['qpn'] == 256 and 'qpn' not in w[0]
assert w[1]['packets_sent'] == 51 and w[1]['job_key'] == 47
assert (w[1]['sent_polled'], w[1]['sent_kicked'], w[1]['kicks']) == (5, 6, 7)
assert 'kicks' not in w[2]
assert w[2]['hub'] == 1 and w[2]['unit'] == 1
assert w[2]['hidden'] and 'job_key' not in w[2] and 'pid' not in w[2]
assert not w[0]['hidden']" -- fake "$ctl" windows --json
check_json "windows --json --hfi=2 (none in use)" "
assert d == {'windows': []}, d" -- fake "$ctl" windows --json --hfi=2
check "windows --hfi 8: out of range, exit 2" 2 "the system has HFIs 0..7" "" -- \
	fake "$ctl" windows --hfi 8
check "a missing HFI device, exit 1" 1 "percs-hfi6: No such file" "*" -- \
	sh -c "rm '$tmp/dev/percs-hfi6' && env LD_PRELOAD='$shim' PERCS_DEV_DIR='$tmp/dev' '$ctl' windows"
# ---- the ISR: usage errors (exit 2, nothing written) ----
check "--help names the ISR commands" 0 "" "link ID|all errors PPM" -- "$ctl" --help
check "--help names PERCS_DEBUGFS_DIR" 0 "" "PERCS_DEBUGFS_DIR" -- "$ctl" --help
check "links --class without a value, exit 2" 2 "option '--class' needs a value" "" -- \
	fake "$ctl" links --class
check "links --class XX, exit 2" 2 "bad link class 'XX': LL, LR or D" "" -- \
	fake "$ctl" links --class XX
check "links --hub x, exit 2" 2 "bad hub number 'x'" "" -- fake "$ctl" links --hub x
check "links --hub=-1, exit 2" 2 "bad hub number '-1'" "" -- fake "$ctl" links --hub=-1
check "links --hub 4: out of range, exit 2" 2 "--hub 4: the system has hubs 0..3" "" -- \
	fake "$ctl" links --hub 4
check "--down with isr, exit 2" 2 "--down applies to 'links' only, not 'isr'" "" -- \
	fake "$ctl" isr --down
check "--class with list, exit 2" 2 "--class applies to 'links' only, not 'list'" "" -- \
	fake "$ctl" list --class D
check "--depth with links, exit 2" 2 "--depth applies to 'reorder' only, not 'links'" "" -- \
	fake "$ctl" links --depth 4
check "--hold-us with link, exit 2" 2 "--hold-us applies to 'reorder' only, not 'link'" "" -- \
	fake "$ctl" link 3 up --hold-us 4
check "--json with link, exit 2" 2 \
	"--json applies to 'list', 'windows', 'topology', 'links', 'reach', 'isr' and 'atomic', not 'link'" "" -- \
	fake "$ctl" --json link 3 down
check "--json with reorder, exit 2" 2 "--json applies to .*, not 'reorder'" "" -- \
	fake "$ctl" reorder 5 --json
check "links with an argument, exit 2" 2 "unexpected argument 'D'" "" -- fake "$ctl" links D
check "isr with an argument, exit 2" 2 "unexpected argument 'x'" "" -- fake "$ctl" isr x
check "link alone, exit 2" 2 "link needs a link ID and an action: 'link ID up|down'" "" -- \
	fake "$ctl" link
check "link ID without an action, exit 2" 2 "link needs a link ID and an action" "" -- \
	fake "$ctl" link 3
check "link x down, exit 2" 2 "bad link ID 'x': a link number" "" -- fake "$ctl" link x down
check "link -1 down, exit 2" 2 "bad link ID '-1'" "" -- fake "$ctl" link -1 down
check "link 4294967296 down, exit 2" 2 "bad link ID '4294967296'" "" -- \
	fake "$ctl" link 4294967296 down
check "link 3 sideways, exit 2" 2 "link 3: unknown action 'sideways': up, down or errors PPM" "" -- \
	fake "$ctl" link 3 sideways
check "link all down, exit 2" 2 "'all' goes with 'errors' only" "" -- fake "$ctl" link all down
check "link 3 down extra, exit 2" 2 "unexpected argument 'extra'" "" -- \
	fake "$ctl" link 3 down extra
check "link 3 errors without a rate, exit 2" 2 \
	"link 3 errors needs a rate: errors per million flits, 0..500000" "" -- \
	fake "$ctl" link 3 errors
check "link 3 errors 500001, exit 2" 2 \
	"bad error rate '500001': errors per million flits, 0..500000" "" -- \
	fake "$ctl" link 3 errors 500001
check "link all errors 1e3, exit 2" 2 "bad error rate '1e3'" "" -- \
	fake "$ctl" link all errors 1e3
check "link 3 errors 5 6, exit 2" 2 "unexpected argument '6'" "" -- \
	fake "$ctl" link 3 errors 5 6
check "reorder without a rate, exit 2" 2 \
	"reorder needs a rate: packets per million held back, 0..1000000" "" -- fake "$ctl" reorder
check "reorder 1000001, exit 2" 2 \
	"bad reorder rate '1000001': packets per million held back, 0..1000000" "" -- \
	fake "$ctl" reorder 1000001
check "reorder -5, exit 2" 2 "bad reorder rate '-5'" "" -- fake "$ctl" reorder -5
check "reorder ' 5', exit 2" 2 "bad reorder rate ' 5'" "" -- fake "$ctl" reorder " 5"
check "reorder 5 6, exit 2" 2 "unexpected argument '6'" "" -- fake "$ctl" reorder 5 6
check "reorder --depth 0, exit 2" 2 \
	"bad --depth '0': a held packet is overtaken by 1..64 later packets" "" -- \
	fake "$ctl" reorder 5 --depth 0
check "reorder --depth=65, exit 2" 2 "bad --depth '65'" "" -- fake "$ctl" reorder 5 --depth=65
check "reorder --depth without a value, exit 2" 2 "option '--depth' needs a value" "" -- \
	fake "$ctl" reorder 5 --depth
check "reorder --hold-us 0, exit 2" 2 \
	"bad --hold-us '0': microseconds a packet is held at most, 1..1000000" "" -- \
	fake "$ctl" reorder 5 --hold-us 0
check "reorder --hold-us=1000001, exit 2" 2 "bad --hold-us '1000001'" "" -- \
	fake "$ctl" reorder 5 --hold-us=1000001
check "drop without a rate, exit 2" 2 \
	"drop needs a rate: atomic packets per million dropped, 0..500000" "" -- fake "$ctl" drop
check "dup without a rate, exit 2" 2 \
	"dup needs a rate: atomic packets per million duplicated, 0..500000" "" -- fake "$ctl" dup
check "drop 500001, exit 2" 2 \
	"bad drop rate '500001': atomic packets per million dropped, 0..500000" "" -- \
	fake "$ctl" drop 500001
check "dup 99999999999999999999: past 64 bits, exit 2" 2 \
	"bad dup rate '99999999999999999999': atomic packets per million duplicated, 0..500000" "" -- \
	fake "$ctl" dup 99999999999999999999
check "drop x, exit 2" 2 "bad drop rate 'x'" "" -- fake "$ctl" drop x
check "dup -1, exit 2" 2 "bad dup rate '-1'" "" -- fake "$ctl" dup -1
check "drop 1e3, exit 2" 2 "bad drop rate '1e3'" "" -- fake "$ctl" drop 1e3
check "dup '' (empty), exit 2" 2 "bad dup rate ''" "" -- fake "$ctl" dup ""
check "drop 5 6, exit 2" 2 "unexpected argument '6'" "" -- fake "$ctl" drop 5 6
check "--json with drop, exit 2" 2 "--json applies to .*, not 'drop'" "" -- \
	fake "$ctl" drop 5 --json
check "--depth with dup, exit 2" 2 "--depth applies to 'reorder' only, not 'dup'" "" -- \
	fake "$ctl" dup 5 --depth 3
check "atomic with an argument, exit 2" 2 "unexpected argument 'x'" "" -- fake "$ctl" atomic x
check "--down with atomic, exit 2" 2 "--down applies to 'links' only, not 'atomic'" "" -- \
	fake "$ctl" atomic --down
tree nowrite
check "usage errors write nothing" 0 "" "" -- sh -c "
	for a in 'link 3 errors 500001' 'link all down' 'reorder 7 --depth 0' 'reorder x' 'drop 500001' 'drop' 'drop 7 8' 'dup -3' 'dup 1000000' 'dup 5 --json'; do
		env PERCS_DEBUGFS_DIR='$d' '$ctl' \$a 2> /dev/null && exit 1
	done
	cmp -s '$d/isr/link_error' '$tmp/dbg/isr/link_error' &&
	cmp -s '$d/isr/link_down' '$tmp/dbg/isr/link_down' &&
	cmp -s '$d/isr/reorder_ppm' '$tmp/dbg/isr/reorder_ppm' &&
	cmp -s '$d/isr/drop_ppm' '$tmp/dbg/isr/drop_ppm' &&
	cmp -s '$d/isr/dup_ppm' '$tmp/dbg/isr/dup_ppm'"

# ---- links ----
check "links: header" 0 "" "^   ID CLASS HUB-A HUB-B PORT-A PORT-B STATE ERROR-PPM    PACKETS      FLITS  FLITS-VC0  FLITS-VC1  FLITS-VC2  REPLAYS    DROPS\$" -- \
	fake "$ctl" links
check "links: a link down with errors" 0 "" \
	"^    3 D         1     3     16     16 down       2000          5         80         30         50          0        3        0\$" -- \
	fake "$ctl" links
check "links: a 64-bit counter" 0 "" "^    5 D .* 18446744073709551615 " -- fake "$ctl" links
check_exact "links --hub 2" "   ID CLASS HUB-A HUB-B PORT-A PORT-B STATE ERROR-PPM    PACKETS      FLITS  FLITS-VC0  FLITS-VC1  FLITS-VC2  REPLAYS    DROPS
    1 LL        2     3      0      0 up            0          7         21         21          0          0        0        0
    2 D         0     2     16     16 up            0         30         95         40         55          0        0        0" -- \
	fake "$ctl" links --hub 2
check_exact "links --class D --down" "   ID CLASS HUB-A HUB-B PORT-A PORT-B STATE ERROR-PPM    PACKETS      FLITS  FLITS-VC0  FLITS-VC1  FLITS-VC2  REPLAYS    DROPS
    3 D         1     3     16     16 down       2000          5         80         30         50          0        3        0" -- \
	fake "$ctl" links --class D --down
check_json "links --json: every link, every field" "
assert list(d) == ['links'], d
d = d['links']
assert isinstance(d, list) and [x['id'] for x in d] == list(range(6)), d
keys = ['id', 'class', 'hub_a', 'hub_b', 'port_a', 'port_b', 'state', 'error_ppm',
        'packets', 'flits', 'flits_vc0', 'flits_vc1', 'flits_vc2', 'replays', 'drops']
for x in d:
    assert list(x) == keys, x
    assert all(type(x[k]) is int for k in keys if k not in ('class', 'state')), x
assert d[3] == {'id': 3, 'class': 'D', 'hub_a': 1, 'hub_b': 3, 'port_a': 16,
                'port_b': 16, 'state': 'down', 'error_ppm': 2000, 'packets': 5,
                'flits': 80, 'flits_vc0': 30, 'flits_vc1': 50, 'flits_vc2': 0,
                'replays': 3, 'drops': 0}, d[3]
assert [x['class'] for x in d] == ['LL', 'LL', 'D', 'D', 'LR', 'D']
assert [x['state'] for x in d] == ['up', 'up', 'up', 'down', 'down', 'up']
assert d[5]['packets'] == 2**64 - 1" -- fake "$ctl" --json links
check_json "links --json --class lr (any case)" "
d = d['links']
assert [x['id'] for x in d] == [4], d" -- fake "$ctl" links --json --class lr
check_json "links --json --down" "
d = d['links']
assert [x['id'] for x in d] == [3, 4], d" -- fake "$ctl" links --json --down
check_json "links --json --hub 3 --class d --down" "
d = d['links']
assert [x['id'] for x in d] == [3], d" -- fake "$ctl" links --json --hub 3 --class d --down
check_json "links --json --hub=0 --class LL" "
d = d['links']
assert [x['id'] for x in d] == [0], d" -- fake "$ctl" links --json --hub=0 --class LL
check_json "links --json: nothing matches" "
d = d['links']
assert d == [], d" -- fake "$ctl" links --json --hub 3 --class LR
badlinks "state class latency_ns id hub_b hub_a port_a port_b error_ppm packets flits flits_vc0 flits_vc1 flits_vc2 replays drops note" \
	"up LL 250 0 1 0 0 0 0 12 40 40 0 0 0 0 ok" \
	"down D 007 1 4 3 16 16 2000 5 80 30 50 0 3 0 -"
check_json "links --json: columns by header name, new ones passed on" "
d = d['links']
assert [x['id'] for x in d] == [0, 1], d
assert d[1]['hub_a'] == 3 and d[1]['state'] == 'down' and d[1]['replays'] == 3, d[1]
assert d[0]['latency_ns'] == 250 and d[0]['note'] == 'ok', d[0]
assert d[1]['latency_ns'] == '007' and d[1]['note'] == '-', d[1]" -- at "$d" "$ctl" links --json
check "links: columns by header name" 0 "" \
	"^    1 D         3     4     16     16 down       2000 " -- at "$d" "$ctl" links
tree notopo; rm "$d/isr/topology"
check_json "links --hub 9 without isr/topology: no range, no link" "
assert d == {'links': []}, d" -- at "$d" "$ctl" links --json --hub 9

# ---- links: a malformed or missing isr/links (exit 1) ----
badlinks "id class hub_a hub_b port_a port_b state error_ppm packets flits flits_vc0 flits_vc1 flits_vc2 replays"
check "links: a column missing from the header" 1 "isr/links:1: the header lacks column 'drops'" "" -- \
	at "$d" "$ctl" links
badlinks "$HDR packets"
check "links: a column named twice" 1 "isr/links:1: the header names column 'packets' twice" "" -- \
	at "$d" "$ctl" links
badlinks
rm -f "$d/isr/links"; : > "$d/isr/links"
check "links: an empty file" 1 "isr/links: empty, expected the header line" "" -- \
	at "$d" "$ctl" links --json
badlinks "$HDR" "0 LL 0 1 0 0 up 0 12 40 40 0 0 0 0" "1 LL 2 3 0 0 up 0 7 21 21 0 0 0"
check "links: a short line" 1 "isr/links:3: 14 fields, the header names 15" "" -- \
	at "$d" "$ctl" links
badlinks "$HDR" "0 LX 0 1 0 0 up 0 12 40 40 0 0 0 0"
check "links: a bad class" 1 "isr/links:2: class 'LX' is not LL, LR or D" "" -- \
	at "$d" "$ctl" links
badlinks "$HDR" "0 LL 0 1 0 0 sideways 0 12 40 40 0 0 0 0"
check "links: a bad state" 1 "isr/links:2: state 'sideways' is not up or down" "" -- \
	at "$d" "$ctl" links --json
badlinks "$HDR" "" "0 LL 0 1 0 0 up 0 12a 40 40 0 0 0 0"
check "links: a bad number" 1 "isr/links:3: packets '12a' is not a decimal number" "" -- \
	at "$d" "$ctl" links
badlinks "$HDR" "0 LL 0 1 0 0 up 0 12 -1 40 0 0 0 0"
check "links: a negative number" 1 "isr/links:2: flits '-1' is not a decimal number" "" -- \
	at "$d" "$ctl" links
badlinks "$HDR" "0 LL 0 1 0 0 up 0 12 40 40 0 0 18446744073709551616 0"
check "links: a number past 64 bits" 1 \
	"isr/links:2: replays '18446744073709551616' is out of range (64 bits)" "" -- \
	at "$d" "$ctl" links
tree nolinks; rm "$d/isr/links"
check "links: isr/links missing" 1 "$d/isr/links: No such file or directory" "" -- \
	at "$d" "$ctl" links
check "links without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted: $tmp/nodbg missing" "" -- \
	nosys "$ctl" links
if [ -n "$unpriv_skip" ]; then
	skip "links as a user: root only" "$unpriv_skip"
else
	check "links as a user: root only" 1 \
		"isr/links: Permission denied (the ISR's debugfs files are root only)" "" -- \
		unpriv "$ctl" links
fi

# ---- link: the writes, and the kernel's refusals (exit 1) ----
tree w
check_file "link 3 up writes isr/link_up" "$d/isr/link_up" 3 -- at "$d" "$ctl" link 3 up
check_file "link 2 down writes isr/link_down" "$d/isr/link_down" 2 -- at "$d" "$ctl" link 2 down
check_file "link 005 down writes 5" "$d/isr/link_down" 5 -- at "$d" "$ctl" link 005 down
check_file "link 3 errors 2000 writes isr/link_error" "$d/isr/link_error" "3 2000" -- \
	at "$d" "$ctl" link 3 errors 2000
check_file "link all errors 0 writes isr/link_error" "$d/isr/link_error" "all 0" -- \
	at "$d" "$ctl" link all errors 0
check_file "link all errors 500000: the top of the range" "$d/isr/link_error" "all 500000" -- \
	at "$d" "$ctl" link all errors 500000
check "link 999 down: no such link, exit 1" 1 "^percs-ctl: link 999: no such link\$" "" -- \
	at "$d" "$ctl" link 999 down
check "link 6 up: no such link, exit 1" 1 "^percs-ctl: link 6: no such link\$" "" -- \
	at "$d" "$ctl" link 6 up
check "link 999 errors 10: no such link, exit 1" 1 "^percs-ctl: link 999: no such link\$" "" -- \
	at "$d" "$ctl" link 999 errors 10
check "link 3 errors 10 refused with EINVAL, exit 1" 1 \
	"^percs-ctl: link 3 errors 10: Invalid argument\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=22 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" link 3 errors 10
check "link 3 down refused with EBUSY, exit 1" 1 \
	"^percs-ctl: link 3 down: Device or resource busy\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=16 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" link 3 down
tree dir; rm "$d/isr/link_down"; mkdir "$d/isr/link_down"
check "link 3 down: a directory in place of isr/link_down, exit 1" 1 \
	"$d/isr/link_down: Is a directory" "" -- at "$d" "$ctl" link 3 down
tree old; rm "$d/isr/link_error"
check "link 3 errors 5: isr/link_error missing, exit 1" 1 \
	"$d/isr/link_error: No such file or directory" "" -- at "$d" "$ctl" link 3 errors 5
check "link 3 up without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted" "" -- nosys "$ctl" link 3 up
if [ -n "$unpriv_skip" ]; then
	skip "link 3 down as a user: root only" "$unpriv_skip"
else
	check "link 3 down as a user: root only" 1 \
		"isr/link_down: Permission denied (the ISR's debugfs files are root only)" "" -- \
		unpriv "$ctl" link 3 down
fi

# ---- reorder ----
tree r
check_file "reorder 100000 writes isr/reorder_ppm" "$d/isr/reorder_ppm" 100000 -- \
	at "$d" "$ctl" reorder 100000
check "reorder PPM leaves depth and hold time alone" 0 "" "" -- \
	sh -c "[ \"\$(cat '$d/isr/reorder_depth' '$d/isr/hold_us')\" = '8
200' ]"
tree r
check_file "reorder 0 --depth 4 --hold-us=50: the rate" "$d/isr/reorder_ppm" 0 -- \
	at "$d" "$ctl" reorder 0 --depth 4 --hold-us=50
check "reorder 0 --depth 4 --hold-us=50: depth and hold time" 0 "" "" -- \
	sh -c "[ \"\$(cat '$d/isr/reorder_depth' '$d/isr/hold_us')\" = '4
50' ]"
check_file "reorder 1000000 --depth 64 --hold-us 1000000: the tops of the ranges" \
	"$d/isr/reorder_depth" 64 -- at "$d" "$ctl" reorder 1000000 --depth 64 --hold-us 1000000
tree r; rm "$d/isr/reorder_depth"; mkdir "$d/isr/reorder_depth"
check "reorder: depth refused, exit 1" 1 "$d/isr/reorder_depth: Is a directory" "" -- \
	at "$d" "$ctl" reorder 7 --depth 4
check "reorder: depth refused, the rate left alone" 0 "" "^0\$" -- cat "$d/isr/reorder_ppm"
tree r
check "reorder 5 refused with EINVAL, exit 1" 1 "^percs-ctl: reorder_ppm 5: Invalid argument\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=22 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" reorder 5
check "reorder --hold-us 9 refused with EPERM, exit 1" 1 \
	"^percs-ctl: hold_us 9: Operation not permitted\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=1 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" reorder 5 --hold-us 9
check "reorder without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted" "" -- nosys "$ctl" reorder 5

# ---- drop, dup ----
tree f
check_file "drop 1000 writes isr/drop_ppm" "$d/isr/drop_ppm" 1000 -- at "$d" "$ctl" drop 1000
check "drop 1000 leaves dup_ppm alone" 0 "" "^0\$" -- cat "$d/isr/dup_ppm"
check_file "dup 500000: the top of the range" "$d/isr/dup_ppm" 500000 -- at "$d" "$ctl" dup 500000
check "dup 500000 leaves drop_ppm alone" 0 "" "^1000\$" -- cat "$d/isr/drop_ppm"
check_file "drop 0 stops the drops" "$d/isr/drop_ppm" 0 -- at "$d" "$ctl" drop 0
check_file "dup 007 writes 7" "$d/isr/dup_ppm" 7 -- at "$d" "$ctl" dup 007
check "drop 5 refused with EINVAL, exit 1" 1 "^percs-ctl: drop_ppm 5: Invalid argument\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=22 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" drop 5
check "dup 5 refused with EPERM, exit 1" 1 "^percs-ctl: dup_ppm 5: Operation not permitted\$" "" -- \
	env PERCS_FAKE_WRITE_ERRNO=1 LD_PRELOAD="$shim" PERCS_DEBUGFS_DIR="$d" "$ctl" dup 5
tree old; rm "$d/isr/drop_ppm"
check "drop 5: a module without isr/drop_ppm, exit 1" 1 \
	"$d/isr/drop_ppm: No such file or directory" "" -- at "$d" "$ctl" drop 5
check "dup without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted" "" -- nosys "$ctl" dup 5
if [ -n "$unpriv_skip" ]; then
	skip "drop 5 as a user: root only" "$unpriv_skip"
else
	check "drop 5 as a user: root only" 1 \
		"isr/drop_ppm: Permission denied (the ISR's debugfs files are root only)" "" -- \
		unpriv "$ctl" drop 5
fi

# ---- isr ----
check_exact "isr" "topology:
  spec                 2x2
  supernodes           2
  hubs_per_supernode   2
  hubs                 4
  links                6
  d_links_per_pair     3
knobs:
  reorder_ppm          0
  reorder_depth        8
  hold_us              200
  drop_ppm             0
  dup_ppm              0
flight:
  in_flight            1
  held                 17
  discarded            2" -- fake "$ctl" isr
check_json "isr --json" "
assert d == {'topology': {'spec': '2x2', 'supernodes': 2, 'hubs_per_supernode': 2,
                          'hubs': 4, 'links': 6, 'd_links_per_pair': 3},
             'knobs': {'reorder_ppm': 0, 'reorder_depth': 8, 'hold_us': 200,
                       'drop_ppm': 0, 'dup_ppm': 0},
             'flight': {'in_flight': 1, 'held': 17, 'discarded': 2}}, d" -- fake "$ctl" --json isr
tree r
check_json "isr --json after reorder shows the new knobs" "
assert d['knobs'] == {'reorder_ppm': 250000, 'reorder_depth': 3, 'hold_us': 1000,
                      'drop_ppm': 0, 'dup_ppm': 0}, d" -- \
	sh -c "env LD_PRELOAD='$shim' PERCS_DEBUGFS_DIR='$d' '$ctl' reorder 250000 --depth 3 --hold-us 1000 &&
	       env PERCS_DEBUGFS_DIR='$d' '$ctl' isr --json"
tree f
check_json "isr --json after drop and dup shows the new knobs" "
assert list(d['knobs']) == ['reorder_ppm', 'reorder_depth', 'hold_us', 'drop_ppm', 'dup_ppm'], d
assert d['knobs']['drop_ppm'] == 20000 and d['knobs']['dup_ppm'] == 500000, d" -- \
	sh -c "env LD_PRELOAD='$shim' PERCS_DEBUGFS_DIR='$d' '$ctl' drop 20000 &&
	       env LD_PRELOAD='$shim' PERCS_DEBUGFS_DIR='$d' '$ctl' dup 500000 &&
	       env PERCS_DEBUGFS_DIR='$d' '$ctl' isr --json"
check "isr after drop and dup: the new knobs" 0 "" "^  drop_ppm  *20000\$" -- at "$d" "$ctl" isr
tree noatomic; rm "$d/isr/drop_ppm" "$d/isr/dup_ppm"
check_json "isr --json of a module without drop_ppm and dup_ppm: left out" "
assert d['knobs'] == {'reorder_ppm': 0, 'reorder_depth': 8, 'hold_us': 200}, d" -- \
	at "$d" "$ctl" isr --json
check_exact "isr of a module without drop_ppm and dup_ppm: no line" "topology:
  spec                 2x2
  supernodes           2
  hubs_per_supernode   2
  hubs                 4
  links                6
  d_links_per_pair     3
knobs:
  reorder_ppm          0
  reorder_depth        8
  hold_us              200
flight:
  in_flight            1
  held                 17
  discarded            2" -- at "$d" "$ctl" isr
tree bad; echo "lots" > "$d/isr/dup_ppm"
check "isr: dup_ppm not a number, exit 1" 1 \
	"isr/dup_ppm:1: expected one number from 0 to 4294967295" "" -- at "$d" "$ctl" isr
tree notopo; rm "$d/isr/topology"
check_json "isr --json without isr/topology" "
assert sorted(d) == ['flight', 'knobs'], d" -- at "$d" "$ctl" isr --json
check "isr without isr/topology: no topology section" 0 "" "^knobs:\$" -- at "$d" "$ctl" isr
tree bad; printf '%s\n' "in_flight 0" "held x" "discarded 0" > "$d/isr/flight"
check "isr: a bad flight counter, exit 1" 1 "isr/flight:2: held 'x' is not a number" "" -- \
	at "$d" "$ctl" isr
tree bad; printf '%s\n' "in_flight 0 0" > "$d/isr/flight"
check "isr: a flight line of 3 fields, exit 1" 1 "isr/flight:1: 3 fields, expected 'NAME VALUE'" "" -- \
	at "$d" "$ctl" isr --json
tree bad; printf '%s\n' "spec 2x2" "hubs 4" "hubs 4" > "$d/isr/topology"
check "isr: a name twice, exit 1" 1 "isr/topology:3: 'hubs' twice" "" -- at "$d" "$ctl" isr
tree bad; echo "eight" > "$d/isr/reorder_depth"
check "isr: a knob that is not a number, exit 1" 1 \
	"isr/reorder_depth:1: expected one number from 0 to 4294967295" "" -- at "$d" "$ctl" isr
tree bad; rm "$d/isr/hold_us"
check "isr: a knob missing, exit 1" 1 "$d/isr/hold_us: No such file or directory" "" -- \
	at "$d" "$ctl" isr
check "isr without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted: $tmp/nodbg missing" "" -- nosys "$ctl" isr
if [ -n "$unpriv_skip" ]; then
	skip "isr as a user: root only" "$unpriv_skip"
else
	check "isr as a user: root only" 1 "Permission denied (the ISR's debugfs files are root only)" "" -- \
		unpriv "$ctl" isr
fi

# ---- atomic ----
check_exact "atomic" "issued               1200
completed            1190
retransmits          14
duplicates           3
stale                1
dropped              12
duplicated           5
delayed              6
timeouts             0
outstanding          18446744073709551615" -- fake "$ctl" atomic
check_json "atomic --json" "
assert list(d) == ['issued', 'completed', 'retransmits', 'duplicates', 'stale',
                   'dropped', 'duplicated', 'delayed', 'timeouts', 'outstanding'], d
assert all(type(v) is int for v in d.values()), d
assert d['issued'] == 1200 and d['retransmits'] == 14 and d['duplicated'] == 5, d
assert d['outstanding'] == 2**64 - 1, d" -- fake "$ctl" --json atomic
tree new; echo "reply_cache 40" >> "$d/atomic"
check_json "atomic --json: a counter added later, under its own name" "
assert len(d) == 11 and d['reply_cache'] == 40, d" -- at "$d" "$ctl" atomic --json
tree bad; printf '%s\n' "issued 3" "completed x" > "$d/atomic"
check "atomic: a counter that is not a number, exit 1" 1 \
	"/atomic:2: completed 'x' is not a number" "" -- at "$d" "$ctl" atomic
tree bad; printf '%s\n' "issued 3" "issued 4" > "$d/atomic"
check "atomic --json: a name twice, exit 1, no partial output" 1 "/atomic:2: 'issued' twice" "" -- \
	at "$d" "$ctl" atomic --json
tree bad; printf '%s\n' "issued" > "$d/atomic"
check "atomic: a line without a value, exit 1" 1 \
	"/atomic:1: 1 fields, expected 'NAME VALUE'" "" -- at "$d" "$ctl" atomic
tree old; rm "$d/atomic"
check "atomic: a module without percs/atomic, exit 1" 1 \
	"$d/atomic: No such file or directory" "" -- at "$d" "$ctl" atomic
check "atomic without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted: $tmp/nodbg missing" "" -- nosys "$ctl" atomic
if [ -n "$unpriv_skip" ]; then
	skip "atomic as a user: root only" "$unpriv_skip"
else
	check "atomic as a user: root only" 1 \
		"atomic: Permission denied (the module's debugfs files are root only)" "" -- \
		unpriv "$ctl" atomic
fi
# ---- links --topology: the firmware model's wiring ----
for s in 2x2 3x2 4x3; do
	"$ctl" links --topology $s --json > "$tmp/w-$s.json"
done
check "--topology with isr, exit 2" 2 "--topology applies to 'links' and 'reach', not 'isr'" "" -- \
	fake "$ctl" isr --topology 2x2
check "links --topology --down, exit 2" 2 "--down: the links of --topology 3x2 are all up" "" -- \
	"$ctl" links --topology 3x2 --down
check "links --topology 3x2 --hub 6, exit 2" 2 "--hub 6: topology 3x2 has hubs 0..5" "" -- \
	"$ctl" links --topology 3x2 --hub 6
check "links --topology 2x33, exit 2" 2 "bad --topology '2x33'" "" -- "$ctl" links --topology 2x33
check "links --topology=3x, exit 2" 2 \
	"bad --topology '3x': topology spec: expected the hubs per supernode" "" -- \
	"$ctl" links --topology=3x
check "links --topology without a value, exit 2" 2 "option '--topology' needs a value" "" -- \
	"$ctl" links --topology
check_json "links --topology 4x3 --json: the wiring design.rst describes" "
from collections import Counter
assert d['spec'] == '4x3', d['spec']
l = d['links']
S, H = 4, 3
assert [x['id'] for x in l] == list(range(len(l)))
L = [x for x in l if x['class'] != 'D']
D = [x for x in l if x['class'] == 'D']
assert sorted((x['hub_a'], x['hub_b']) for x in L) == [
    (s * H + i, s * H + j) for s in range(S) for i in range(H) for j in range(i + 1, H)]
assert all(x['class'] == 'LL' and 'copy' not in x for x in L)
pairs = Counter((x['hub_a'] // H, x['hub_b'] // H) for x in D)
assert sorted(pairs) == [(a, b) for a in range(S) for b in range(a + 1, S)], pairs
dpair = pairs[0, 1]
assert set(pairs.values()) == {dpair} and dpair == 16 * H // (S - 1), pairs
for p in pairs:
    assert sorted(x['copy'] for x in D if (x['hub_a'] // H, x['hub_b'] // H) == p) == list(range(dpair))
ports = Counter((h, x[k]) for x in D for h, k in ((x['hub_a'], 'port_a'), (x['hub_b'], 'port_b')))
assert set(ports.values()) == {1} and all(31 <= p <= 46 for h, p in ports), ports" -- \
	"$ctl" links --topology 4x3 --json
check "links --topology 3x2: a D link's line" 0 "" "^ *3 D  *0  *2  *31  *39  *0\$" -- \
	"$ctl" links --topology 3x2
check_json "links --topology 3x2 --class d --hub 4: what the whole list has of them" "
w = json.load(open('$tmp/w-3x2.json'))['links']
want = [x for x in w if x['class'] == 'D' and 4 in (x['hub_a'], x['hub_b'])]
assert d['links'] == want and len(want) == 16, d" -- "$ctl" links --topology 3x2 --class d --hub 4 --json

# ---- reach: the routes left with links down ----
# The oracle: the routes design.rst ("Routes") defines, computed from the
# wiring 'links --topology SPEC --json' lists and not from route.c: one
# direct route per D link of the two supernodes that is up and whose ends
# the two hubs reach (a hub reaches itself and the hubs its L links that
# are up join it to); within a supernode, the L link; and one indirect
# route via each other supernode m: over a link into m the source reaches,
# then a direct route from the hub it arrives at.  Where the link the model
# picks into m decides (from some arrival hubs there is a way on, from
# others not), both answers pass.  reach_oracle(d, wiring, named, now, hub)
# checks reach's JSON d against it: the links down, every pair of hubs
# (listed exactly when it lost a route, with the counts and vias left), the
# totals.
cat > "$tmp/oracle.py" <<'EOF'
def reach_oracle(d, wiring, named, now=(), hub=None):
    links = json.load(open(wiring))['links']
    named, now = set(named), set(now)
    down = named | now
    got = {x['id']: x for x in d['down']}
    assert sorted(got) == sorted(down), (sorted(got), sorted(down))
    for i, x in got.items():
        assert (x['named'], x['down_now']) == (i in named, i in now), x
    topo = d['topology']
    S, H = topo['supernodes'], topo['hubs_per_supernode']
    N = S * H
    assert (topo['hubs'], topo['links']) == (N, len(links)), topo
    sn = lambda h: h // H
    copies, ncopies, lup = {}, {}, set()
    for l in links:
        x, y = l['hub_a'], l['hub_b']
        if l['class'] == 'D':
            a, b = sn(x), sn(y)
            ncopies[a, b] = ncopies[b, a] = ncopies.get((a, b), 0) + 1
            if l['id'] not in down:
                copies.setdefault((a, b), []).append((x, y))
                copies.setdefault((b, a), []).append((y, x))
        elif l['id'] not in down:
            lup |= {(x, y), (y, x)}
    near = lambda h, x: h == x or (h, x) in lup
    def direct(s, t, a):
        if a == sn(t):
            return int(near(s, t))
        return sum(near(s, x) and near(t, y) for x, y in copies.get((a, sn(t)), []))
    pairs = {(p['src'], p['dst']): p for p in d['pairs']}
    assert len(pairs) == len(d['pairs'])
    checked = 0
    for s in range(N):
        for t in range(N):
            if s == t or (hub is not None and hub not in (s, t)):
                assert (s, t) not in pairs, (s, t)
                continue
            checked += 1
            intra = sn(s) == sn(t)
            dt = 1 if intra else ncopies[sn(s), sn(t)]
            it = S - 1 if intra else S - 2
            dl = direct(s, t, sn(s))
            sure, maybe = set(), set()
            for m in set(range(S)) - {sn(s), sn(t)}:
                ok = [direct(y, t, m) > 0
                      for x, y in copies.get((sn(s), m), []) if near(s, x)]
                if ok and all(ok):
                    sure.add(m)
                elif any(ok):
                    maybe.add(m)
            p = pairs.get((s, t))
            if p is None:
                assert dl == dt and len(sure | maybe) == it, (s, t, dl, sure, maybe)
                continue
            assert (p['direct'], p['direct_total'], p['indirect_total']) == (dl, dt, it), (p, dl, dt, it)
            assert sure <= set(p['via']) <= sure | maybe, (p, sure, maybe)
            assert p['indirect'] == len(p['via']) == len(set(p['via'])), p
            assert p['direct'] < dt or p['indirect'] < it, p
            assert p['reachable'] == (p['direct'] + p['indirect'] > 0), p
            assert (p['src_supernode'], p['dst_supernode']) == (sn(s), sn(t)), p
    assert d['checked'] == checked, (d['checked'], checked)
    assert d['lost'] == len(pairs), d['lost']
    assert d['unreachable'] == sum(not p['reachable'] for p in pairs.values())
EOF
oracle="exec(open('$tmp/oracle.py').read())"
# ids SPEC AWK-CONDITION: the ids of the links 'links --topology SPEC'
# lists whose line ($2 class, $3 and $4 the hubs) meets the condition.
ids() {
	"$ctl" links --topology "$1" | awk "NR > 1 && ($2) { printf \"%s%s\", s, \$1; s = \",\" }"
}
d01=$(ids 3x2 '$2 == "D" && int($3 / 2) == 0 && int($4 / 2) == 1')
dall=$(ids 2x2 '$2 == "D"')
l01=$(ids 3x2 '$3 == 0 && $4 == 1')
l23=$(ids 3x2 '$3 == 2 && $4 == 3')

check "reach --topology without links, exit 2" 2 \
	"reach --topology needs the links to take down: link ids as 'percs-ctl links --topology SPEC' shows them" "" -- \
	"$ctl" reach --topology 3x2
check "reach --all-up without links, exit 2" 2 "reach --all-up needs the links to take down" "" -- \
	fake "$ctl" reach --all-up
check "reach '' (an empty link name), exit 2" 2 "an empty link name: link ids as 'percs-ctl links' shows them" "" -- \
	"$ctl" reach --topology 3x2 ""
check "reach x, exit 2" 2 "bad link 'x': a link id as 'percs-ctl links' shows it" "" -- \
	"$ctl" reach --topology 3x2 x
check "reach 1,,2: an empty item, exit 2" 2 "bad link list '1,,2': an empty item" "" -- \
	"$ctl" reach --topology 3x2 1,,2
check "reach 4,: an empty item, exit 2" 2 "bad link list '4,': an empty item" "" -- \
	"$ctl" reach --topology 3x2 4,
check "reach 9-3: a range backwards, exit 2" 2 "bad link range '9-3': 9 is above 3" "" -- \
	"$ctl" reach --topology 3x2 9-3
check "reach 5-: a range without its end, exit 2" 2 "bad link range '5-': FIRST-LAST" "" -- \
	"$ctl" reach --topology 3x2 5-
check "reach -1, exit 2" 2 "bad link '-1'" "" -- "$ctl" reach --topology 3x2 -1
check "reach 4294967296: past 32 bits, exit 2" 2 "bad link '4294967296'" "" -- \
	"$ctl" reach --topology 3x2 4294967296
check "reach 3 3: a link twice, exit 2" 2 "^percs-ctl: link 3 is named twice\$" "" -- \
	"$ctl" reach --topology 3x2 3 3
check "reach 2-4,4: a link twice in a range and a list, exit 2" 2 "link 4 is named twice" "" -- \
	"$ctl" reach --topology 3x2 2-4,4
check "reach 51: no such link, exit 2" 2 "link 51: no such link: topology 3x2 has links 0..50" "" -- \
	"$ctl" reach --topology 3x2 51
check "reach 0 of a system without links, exit 2" 2 "link 0: no such link: topology 1x1 has no links" "" -- \
	"$ctl" reach --topology 1x1 0
check "reach 40-60: a range past the last link, exit 2" 2 "link 51: no such link: topology 3x2 has links 0..50" "" -- \
	"$ctl" reach --topology 3x2 40-60
check "reach --topology 3x, exit 2" 2 \
	"bad --topology '3x': topology spec: expected the hubs per supernode" "" -- \
	"$ctl" reach --topology 3x 1
check "reach --topology=600x2, exit 2" 2 "bad --topology '600x2': supernodes=600" "" -- \
	"$ctl" reach --topology=600x2 1
check "reach --topology without a value, exit 2" 2 "option '--topology' needs a value" "" -- \
	"$ctl" reach 1 --topology
check "reach --topology with --all-up, exit 2" 2 "--all-up goes with the module's topology" "" -- \
	"$ctl" reach --topology 3x2 --all-up 1
check "reach --hub 6 of 6 hubs, exit 2" 2 "--hub 6: topology 3x2 has hubs 0..5" "" -- \
	"$ctl" reach --topology 3x2 --hub 6 1
check "reach on 2048 hubs without --hub: too many routes, exit 2" 2 \
	"topology 64x32: 2048 hubs, .* too many; name a hub with --hub" "" -- \
	"$ctl" reach --topology 64x32 1
check "reach --class, exit 2" 2 "--class applies to 'links' only, not 'reach'" "" -- \
	"$ctl" reach --topology 3x2 --class D 1
check "--all-up with links, exit 2" 2 "--all-up applies to 'reach' only, not 'links'" "" -- \
	fake "$ctl" links --all-up

# Every D link between supernodes 0 and 1 of three: only the route via 2.
check_json "reach --topology 3x2, supernodes 0-1 cut: only indirect routes via 2" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [$d01])
assert len(d['down']) == 16, d['down']
cut = [p for p in d['pairs'] if {p['src_supernode'], p['dst_supernode']} == {0, 1}]
assert len(cut) == 2 * 2 * 2, cut
for p in cut:
    assert (p['direct'], p['direct_total'], p['via'], p['reachable']) == (0, 16, [2], True), p
assert d['unreachable'] == 0" -- "$ctl" reach --topology 3x2 --json $d01
check_json "reach --topology 3x2, supernodes 0-1 cut: the text agrees with --json" "
rows = [l.split() for l in open('$tmp/text')]
i = [r[:1] for r in rows].index(['FROM'])
got = []
for r in rows[i + 1:]:
    if r[0] == 'hub':
        break
    dl, dt = map(int, r[2].split('/'))
    il, it = map(int, r[3].split('/'))
    got.append((int(r[0]), int(r[1]), dl, dt, il, it, r[4]))
def ranges(v):
    out, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(str(v[i]) if i == j else '%d-%d' % (v[i], v[j]))
        i = j + 1
    return ','.join(out) or '-'
want = [(p['src'], p['dst'], p['direct'], p['direct_total'], p['indirect'],
         p['indirect_total'], ranges(p['via'])) for p in d['pairs']]
assert got == want, (got, want)
assert rows[i + 1 + len(want)] == ('hub pairs: %d checked, %d lost routes, %d unreachable' %
                                   (d['checked'], d['lost'], d['unreachable'])).split()
assert ['links', 'down:', '16'] in rows, rows" -- \
	sh -c "'$ctl' reach --topology 3x2 $d01 > '$tmp/text' && '$ctl' reach --topology 3x2 $d01 --json"
# Every D link of a 2-supernode system: the other supernode is unreachable.
check_json "reach --topology 2x2, every D link: the other supernode unreachable" "
$oracle
reach_oracle(d, '$tmp/w-2x2.json', [$dall])
bad = [(p['src'], p['dst']) for p in d['pairs'] if not p['reachable']]
assert sorted(bad) == [(s, t) for s in range(4) for t in range(4) if s // 2 != t // 2], bad
for p in d['pairs']:
    if p['reachable']:
        assert p['src_supernode'] == p['dst_supernode'], p
        assert (p['direct'], p['indirect'], p['indirect_total']) == (1, 0, 1), p" -- \
	"$ctl" reach --topology 2x2 --json $dall
check "reach --topology 2x2, every D link: who cannot reach whom" 0 "" \
	"^  from hub 1: hubs 2-3\$" -- "$ctl" reach --topology 2x2 $dall
check "reach --topology 2x2, every D link: a row" 0 "" \
	"^      2       1      0/32       0/0  -  unreachable\$" -- "$ctl" reach --topology 2x2 $dall
check_json "reach --topology 3x2, the L link of hubs 0 and 1: indirect between them" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [$l01])
p = [p for p in d['pairs'] if (p['src'], p['dst']) in ((0, 1), (1, 0))]
assert [(x['direct'], x['via']) for x in p] == [(0, [1, 2])] * 2, p" -- \
	"$ctl" reach --topology 3x2 --json "$l01"
for seed in 1 2 3; do
	set=$(ids 4x3 "1" | tr , '\n' | awk -v seed=$seed 'BEGIN { srand(seed) } rand() < 0.3' |
		paste -sd, -)
	check_json "reach --topology 4x3, about 30% of the links down (awk seed $seed)" "
$oracle
reach_oracle(d, '$tmp/w-4x3.json', [$set])
assert d['lost'] > 0" -- "$ctl" reach --topology 4x3 --json "$set"
done
check_json "reach --topology 3x2 --hub 4: the pairs from and to hub 4" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [$d01], hub=4)
assert d['hub'] == 4 and d['checked'] == 2 * 5, d" -- "$ctl" reach --topology 3x2 --hub 4 --json $d01
check "reach --topology 3x2: the links down, named" 0 "" \
	"^ *0 LL  *0  *1  *0  *0  *-  named\$" -- "$ctl" reach --topology 3x2 0

# The module's topology: a fake debugfs of a 3x2 module whose isr/links is
# the model's wiring (mtree NAME IDS: those links down; in $d).
mtree() {
	tree "$1"
	printf '%s\n' "spec 3x2" "supernodes 3" "hubs_per_supernode 2" "hubs 6" \
		"links 51" "d_links_per_pair 16" > "$d/isr/topology"
	"$ctl" links --topology 3x2 | awk -v down=",$2," '
		NR == 1 { print "id class hub_a hub_b port_a port_b state error_ppm packets flits flits_vc0 flits_vc1 flits_vc2 replays drops"; next }
		{ print $1, $2, $3, $4, $5, $6, index(down, "," $1 ",") ? "down" : "up", 0, 7, 21, 21, 0, 0, 0, 0 }' \
		> "$d/isr/links"
}
mtree cut "$d01,$l23"
cut=$d
"$ctl" reach --topology 3x2 --json $d01,$l23 > "$tmp/cut.json"
check_json "reach on the module: its links down now, as --topology with them named" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [], now=[$d01, $l23])
assert d['pairs'] == json.load(open('$tmp/cut.json'))['pairs']" -- at "$cut" "$ctl" reach --json
check_json "reach 0 on the module: link 0 too" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [0], now=[$d01, $l23])" -- at "$cut" "$ctl" reach --json 0
check_json "reach --all-up 0 on the module: only link 0" "
$oracle
reach_oracle(d, '$tmp/w-3x2.json', [0])" -- at "$cut" "$ctl" reach --json --all-up 0
check "reach --all-up of a link down now" 0 "" "^ *${d01%%,*} D  .*  now, named\$" -- \
	at "$cut" "$ctl" reach --all-up "${d01%%,*}"
check "reach on the module: a link down now" 0 "" "^ *${d01##*,} D  .*  now\$" -- \
	at "$cut" "$ctl" reach
mtree up ""
check "reach on the module, every link up" 0 "" "^hub pairs: 30 checked, 0 lost routes, 0 unreachable\$" -- \
	at "$d" "$ctl" reach
check_json "reach --json on the module, every link up" "
assert (d['down'], d['pairs'], d['checked'], d['lost']) == ([], [], 30, 0), d" -- \
	at "$d" "$ctl" reach --json
check "reach 51 on the module: no such link, exit 2" 2 "link 51: no such link: topology 3x2 has links 0..50" "" -- \
	at "$cut" "$ctl" reach 51
check "reach --hub 6 on the module, exit 2" 2 "--hub 6: topology 3x2 has hubs 0..5" "" -- \
	at "$cut" "$ctl" reach --hub 6
check "reach on a module percs-ctl's model does not match: links, exit 1" 1 \
	"isr/topology: 6 links, topology 2x2 has 34 in percs-ctl's firmware model: it does not match the module's" "" -- \
	fake "$ctl" reach
mtree moved ""
sed -i 's/^4 D 1 3 /4 D 1 2 /' "$d/isr/links"
check "reach: a link the model wires elsewhere, exit 1" 1 \
	"isr/links:6: link 4 is D from hub 1 port 31 to hub 2 port 39, in percs-ctl's firmware model of 3x2 D from hub 1 port 31 to hub 3 port 39" "" -- \
	at "$d" "$ctl" reach
mtree short ""
sed -i '$d' "$d/isr/links"
check "reach: a link missing from isr/links, exit 1" 1 "isr/links: 50 links, topology 3x2 has 51" "" -- \
	at "$d" "$ctl" reach --json
mtree twice ""
sed -n 3p "$d/isr/links" >> "$d/isr/links"
check "reach: a link listed twice, exit 1" 1 "isr/links:53: link 1 listed twice" "" -- \
	at "$d" "$ctl" reach
mtree bad ""
sed -i 's/^2 LL 4 5 0 0 up/2 LL 4 5 0 0 sideways/' "$d/isr/links"
check "reach: a malformed isr/links, exit 1" 1 "isr/links:4: state 'sideways' is not up or down" "" -- \
	at "$d" "$ctl" reach
mtree nospec ""
sed -i '/^spec /d' "$d/isr/topology"
check "reach: isr/topology without a spec, exit 1" 1 "isr/topology: no 'spec' line" "" -- \
	at "$d" "$ctl" reach
mtree badspec ""
sed -i 's/^spec .*/spec 9x/' "$d/isr/topology"
check "reach: a spec the model refuses, exit 1" 1 \
	"isr/topology: spec '9x': topology spec: .* (percs-ctl's firmware model does not match the module's)" "" -- \
	at "$d" "$ctl" reach
mtree nolinks ""
rm "$d/isr/links"
check "reach: isr/links missing, exit 1" 1 "$d/isr/links: No such file or directory" "" -- \
	at "$d" "$ctl" reach
check "reach without the module or debugfs, exit 1" 1 \
	"percs module not loaded or debugfs not mounted: $tmp/nodbg missing" "" -- nosys "$ctl" reach 3
if [ -n "$unpriv_skip" ]; then
	skip "reach as a user: root only" "$unpriv_skip"
else
	check "reach as a user: root only" 1 \
		"isr/topology: Permission denied (the ISR's debugfs files are root only)" "" -- \
		unpriv "$ctl" reach
fi
echo "# $((n - failed)) passed, $failed failed"
[ "$n" -eq "$NTESTS" ] || echo "# ran $n tests, planned $NTESTS"
[ "$failed" -eq 0 ] && [ "$n" -eq "$NTESTS" ]
