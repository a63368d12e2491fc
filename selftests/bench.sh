#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - percs-bench on the real module: a smoke test of every
# subcommand with --quick and small settings, not a measurement.
#
# Run as root inside the test VM with percs.ko loaded, by run-vm-tests.sh
# on the stock kernel only (the debug kernels' passes are for the module's
# own tests and short of time); its oracles run after it as after a test
# program (live counters zero, kernel log clean, pinned pages released,
# rmmod).  TAP on stdout.
#
# Each JSON run (-q --json) must exit 0 with nothing on stderr and one
# JSON document on stdout: the subcommand's results all there, without
# errors, every result checked and none wrong (atomic, coll), the figures
# positive numbers, the targets present with a result (pass or fail, n/a
# only with the reason); the topology is the one /dev/percs-hfi* shows.
# And the bad cases only a real system can say
# are bad: --hub-a and --hub-b beyond the topology (exit 2, the message),
# coll with more processes than hubs (skipped, with the reason, exit 0).
#
# Environment: PERCS_BUILD (build/tools/percs-bench).  10 to 30 s, with
# the host's load.

set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${PERCS_BUILD:-$(dirname "$here")/build}
bench=$build/tools/percs-bench
plan=12
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failures=0
t0=$EPOCHREALTIME
echo "TAP version 13"
echo "1..$plan"
result() {	# result OK(0/1) DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failures=$((failures + 1))
		echo "not ok $n - $2"
	fi
}
diag() {
	echo "# $*"
}

# The system as the device nodes show it, for the JSON's "topology".
hfis=0
for f in /dev/percs-hfi*; do
	[ -e "$f" ] && hfis=$((hfis + 1))
done
if ! [ -x "$bench" ] || [ "$hfis" = 0 ]; then
	diag "no $bench (make bench) or no /dev/percs-hfi* (module not loaded)"
	for ((i = 1; i <= plan; i++)); do
		result 1 "percs-bench and the module are there"
	done
	exit 1
fi

# json NAME SUBCOMMAND PYTHON -- ARGS...: runs percs-bench -q --json
# SUBCOMMAND ARGS now; check_json then has the checker test that each
# exited 0 with nothing on stderr and printed a document that satisfies
# its PYTHON.
njson=0
json() {
	local name=$1 sub=$2 code=$3 start
	shift 4
	njson=$((njson + 1))
	printf '%s' "$name" > "$tmp/name.$njson"
	printf 'assert d["subcommand"] == "%s", d["subcommand"]\n%s' "$sub" "$code" \
		> "$tmp/code.$njson"
	start=$EPOCHREALTIME
	"$bench" -q --json "$sub" "$@" > "$tmp/out.$njson" 2> "$tmp/err.$njson"
	echo $? > "$tmp/st.$njson"
	diag "percs-bench $sub $*: exit $(<"$tmp/st.$njson"), $(elapsed "$start") s"
}

# The checker, one Python process for every document: a cold start takes
# 3 to 10 s in the VM, so it starts now, while the benchmarks run, and
# waits for "COUNT FIRST-TEST-NUMBER" on its stdin.  In each check: d is
# the document; pos() asserts a positive finite number; targets() returns
# the targets with these ids, each with a result (and its figures unless
# n/a); t is the topology, which must be the one the device nodes show.
read -r -d '' checker <<'EOF_PY'
import json, math, sys
tmp, hfis = sys.argv[1], int(sys.argv[2])
count, n = (int(x) for x in sys.stdin.read().split())
bad = 0

def pos(x, what):
    assert type(x) in (int, float) and math.isfinite(x) and x > 0, \
        "%s: %r is not a positive number" % (what, x)

def check(i):
    st = int(open("%s/st.%d" % (tmp, i)).read())
    err = open("%s/err.%d" % (tmp, i)).read()
    assert st == 0 and not err, "exit %d, stderr: %s" % (st, err[-2000:])
    d = json.load(open("%s/out.%d" % (tmp, i)))

    def targets(ids):
        ts = [x for x in d["targets"] if x["id"] in ids]
        assert sorted(set(x["id"] for x in ts)) == sorted(ids), \
            "targets %s, expected ids %s" % (d["targets"], ids)
        for x in ts:
            assert x["result"] in ("pass", "fail", "n/a"), x
            if x["result"] != "n/a":
                for k in ("value", "bound", "ratio"):
                    pos(x[k], "target %d %s" % (x["id"], k))
        return ts

    t = d["topology"]
    assert d["tool"] == "percs-bench" and d["format"] == 1, d["tool"]
    assert t["hubs"] * t["hfis_per_hub"] == hfis, (t, hfis)
    assert t["supernodes"] * t["hubs_per_supernode"] == t["hubs"], t
    exec(open("%s/code.%d" % (tmp, i)).read(),
         {"d": d, "t": t, "pos": pos, "targets": targets})

for i in range(1, count + 1):
    name = open("%s/name.%d" % (tmp, i)).read()
    try:
        check(i)
        print("ok %d - %s" % (n + i, name))
    except Exception as e:
        # the line of the check (or of check()) that failed
        tb = e.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        where = tb.tb_frame.f_code.co_filename
        print("#   %s line %d: %s: %s" % ("the check" if where == "<string>" else "check()",
                                         tb.tb_lineno, type(e).__name__, str(e)[:1500]))
        print("not ok %d - %s" % (n + i, name))
        bad += 1
sys.exit(min(bad, 100))
EOF_PY
# -I -S: no site packages to look for
coproc CHECKER { exec python3 -I -S -c "$checker" "$tmp" "$hfis" > "$tmp/checker" 2>&1; }
checker_in=${CHECKER[1]}

# check_json: the checker's verdicts on the documents so far.
check_json() {
	local rc
	echo "$njson $n" >&"$checker_in"
	exec {checker_in}>&-
	wait "$CHECKER_PID"
	rc=$?
	cat "$tmp/checker"
	n=$((n + njson))
	failures=$((failures + rc))
}
elapsed() {
	local s=${1/./} e=${EPOCHREALTIME/./}
	printf '%d.%01d' $(((e - s) / 1000000)) $(((e - s) / 100000 % 10))
}

json "limits --json: every limit a positive number" limits '
l = d["limits"]
pos(l["cacheline_half_rtt"]["median_ns"], "cacheline median")
assert l["cacheline_half_rtt"]["iters"] > 0, l
for k in ("getppid_ns", "ioctl_hfi_info_ns", "ioctl_kick_empty_ns",
          "fdatasync_empty_ns", "ioctl_enotty_dev_null_ns", "clock_gettime_ns",
          "memcpy_cache_bytes_per_s", "memcpy_stream_bytes_per_s"):
    pos(l[k], k)
# and any figure added since (rep movsb is x86 only)
for k, v in l.items():
    if (k.endswith("_ns") or k.endswith("_per_s")) and \
       not (k == "movsb_cache_bytes_per_s" and v is None):
        pos(v, k)
assert not d["latency"] and not d["bandwidth"] and d["coll"] is None, d
' -- --quick

# The cases of lat: FIFO 8 and 2016 B, immediate 8 B, all three modes, both pairs.
json "lat --json: 18 cases, each measured without error, system calls counted" lat '
cases = set()
for r in d["latency"]:
    assert r["error"] is None, r
    assert r["iters"] > 0, r
    for k in ("min_ns", "median_ns", "p99_ns", "mean_ns"):
        pos(r[k], "%s %s %s %d B %s" % (r["kind"], r["mode"], r["pair"], r["payload"], k))
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], r
    # Kick mode kicks for every message; poll mode only when asleep.
    assert r["syscalls_per_msg"] >= (0.99 if r["mode"] == "kick" else 0), r
    assert 0 <= r["polled_fraction"] <= 1, r
    assert r["mode"] != "kick" or r["polled_fraction"] == 0, r
    cases.add((r["kind"], r["mode"], r["pair"], r["payload"]))
want = set((k, m, p, s) for k, sizes in (("fifo", (8, 2016)), ("imm", (8,)))
           for m in ("kick", "poll", "auto") for p in ("same-hub", "cross-SN") for s in sizes)
assert cases == want and len(d["latency"]) == len(want), sorted(cases)
' -- --quick --iters 200 --sizes 8,2016

json "bw --json: 18 cases, bytes = packets x payload, rates positive" bw '
cases = set()
for r in d["bandwidth"]:
    assert r["error"] is None, r
    assert r["packets"] > 0 and r["bytes"] == r["packets"] * r["payload"], r
    assert r["payload_mode"] == ("in-place" if r["kind"] == "fifo" else "icswx"), r
    for k in ("seconds", "bytes_per_s", "packets_per_s"):
        pos(r[k], "%s %s %s %d B %s" % (r["kind"], r["mode"], r["pair"], r["payload"], k))
    cases.add((r["kind"], r["mode"], r["pair"], r["payload"]))
want = set((k, m, p, s) for k, sizes in (("fifo", (64, 2016)), ("imm", (96,)))
           for m in ("kick", "poll", "auto") for p in ("same-hub", "cross-SN") for s in sizes)
assert cases == want and len(d["bandwidth"]) == len(want), sorted(cases)
' -- --quick --bw-time 0.1 --sizes 64,96,2016

json "bw --copy --json: one case, the payload copied" bw '
[r] = d["bandwidth"]
assert (r["kind"], r["mode"], r["pair"], r["payload"]) == ("fifo", "kick", "same-hub", 2016), r
assert r["error"] is None and r["payload_mode"] == "copy", r
assert r["packets"] > 0 and r["bytes"] == r["packets"] * 2016, r
pos(r["bytes_per_s"], "bytes_per_s")
' -- --quick --bw-time 0.1 --copy --kind fifo --mode kick --pair near --sizes 2016

json "engine --json: every step of every case a positive number" engine '
assert len(d["engine"]) == 14, len(d["engine"])
for r in d["engine"]:
    assert r["error"] is None, r
    pos(r["kick_ns"], "kick_ns %s" % r)
    pos(r["receive_ns"], "receive_ns %s" % r)
    if r["kind"] == "fifo":
        pos(r["compose_ns"], "compose_ns %s" % r)
    else:
        assert r["compose_ns"] is None, r
' -- --quick

# Every fetch-add and the words added to are checked (verified: true).
json "atomic --json: both pairs verified, no error, targets 4 and 5" atomic '
assert sorted(r["pair"] for r in d["atomic"]) == ["cross-SN", "same-hub"], d["atomic"]
for r in d["atomic"]:
    assert r["mode"] == "kick" and r["error"] is None, r
    assert r["verified"] is True, r
    assert r["fetch_adds"] > 0 and r["adds"] > 0, r
    for k in ("adds_per_s_unpacked", "adds_per_s_packed", "ratio_packed_unpacked",
              "ratio_fetch_add_fifo"):
        pos(r[k], "%s %s" % (r["pair"], k))
    for k in ("fetch_add", "fifo_8b_half_rtt"):
        pos(r[k]["median_ns"], "%s %s" % (r["pair"], k))
ts = targets([4, 5])
assert len(ts) == 4, ts
# the rate target has a verdict whenever the rate was measured
assert all(t["result"] in ("pass", "fail") for t in ts if t["id"] == 5), ts
' -- --quick --iters 200 --bw-time 0.1 --mode kick

# The 8-process targets need 8 hubs; a count over the hubs is skipped.
json "coll --json: every result checked, none wrong, targets 6 and 7" coll '
c = d["coll"]
hubs = t["hubs"]
assert c["verified"] is True and c["wrong"] == 0 and c["failed_runs"] == 0, \
    dict((k, c[k]) for k in ("verified", "wrong", "failed_runs"))
assert c["sizes"] == [8, 1024], c["sizes"]
assert [r["procs"] for r in c["runs"]] == [2, 4, 8, 16], c["runs"]
def methods(row):
    # every method of the row, whatever methods there are
    ms = {k: v for k, v in row.items() if isinstance(v, dict) and "median_ns" in v}
    assert "cau" in ms and len(ms) >= 2, row
    return ms
for r in c["runs"]:
    if r["procs"] > hubs:
        assert r["skipped"] is True and "needs %d hubs" % r["procs"] in r["reason"] \
            and "the system has %d" % hubs in r["reason"], r
        continue
    assert r["skipped"] is False and r["error"] is None and r["first_wrong"] is None, r
    assert r["cau_tree"] is True and len(set(r["hubs"])) == r["procs"], r
    assert r["allreduce_checked"] > 0 and r["barriers_checked"] > 0, r
    rows = r["allreduce"] + [r["barrier"]]
    assert [x["bytes"] for x in r["allreduce"]] == [8, 1024], r["allreduce"]
    for row in rows:
        what = "N=%d %s" % (r["procs"], row.get("bytes", "barrier"))
        assert row["measured"] is True and row["iterations"] == 5, row
        ms = methods(row)
        assert set(ms) <= set(row["wrong"]) and not any(row["wrong"].values()), row
        for m, s in ms.items():
            pos(s["median_ns"], "%s %s median" % (what, m))
            assert s["iters"] == row["iterations"], (what, m, s)
        assert row["best_software"] in ms and row["best_software"] != "cau", row
        pos(row["ratio_best_software_cau"], what + " ratio")
ts = c["targets"]
assert sorted((x["id"], x["procs"]) for x in ts) == [(6, 8), (6, 16), (7, 8), (7, 16)], ts
for x in ts:
    if x["procs"] <= hubs:
        assert x["result"] in ("pass", "fail") and x["reason"] is None, x
        for k in ("cau_ns", "best_software_ns", "ratio"):
            pos(x[k], "target %d N=%d %s" % (x["id"], x["procs"], k))
    else:
        assert x["result"] == "n/a" and x["reason"] == "N=%d skipped" % x["procs"], x
' -- --quick --procs 2,4,8,16 --sizes 8,1024 --iters 5

# rdma: seven sizes, and its target with a verdict either way (exit 0:
# a missed target is reported, not asserted).
json "rdma --json: 4 KiB..16 MiB all positive, the 8-byte write, the target" rdma '
r = d["rdma"]
assert r["error"] is None, r
assert [x["bytes"] for x in r["sizes"]] == [4096 << 2 * i for i in range(7)], r["sizes"]
for x in r["sizes"]:
    for k in ("write_bytes_per_s", "read_bytes_per_s", "memcpy_bytes_per_s",
              "ratio_write_memcpy"):
        pos(x[k], "%d B %s" % (x["bytes"], k))
pos(r["write_8b_latency"]["median_ns"], "write_8b_latency median")
assert r["write_8b_latency"]["iters"] > 0, r["write_8b_latency"]
g = r["target"]
assert g["result"] in ("pass", "fail") and g["bytes"] >= 1 << 20, g
for k in ("value", "bound", "ratio"):
    pos(g[k], "target " + k)
assert (g["ratio"] >= 1) == (g["result"] == "pass"), g
assert not d["latency"] and not d["bandwidth"] and d["coll"] is None, d
' -- --quick

# --hub-b = --hub-a: the "far" pair is two windows of one HFI.
json "lat --hub-b 0 --json: the far pair on hub 0's HFI 0 (same-HFI)" lat '
assert [(p["name"], p["a"]["hub"], p["b"]["hub"], p["b"]["hfi"]) for p in d["pairs"]] == \
    [("same-hub", 0, 0, 1), ("same-HFI", 0, 0, 0)], d["pairs"]
[r] = d["latency"]
assert r["pair"] == "same-HFI" and r["error"] is None and r["iters"] > 0, r
pos(r["median_ns"], "median_ns")
' -- --quick --hub-b 0 --pair far --kind imm --mode kick --sizes 8 --iters 50

check_json

# What only the real system can refuse.
hubs=$((hfis / 2))
# check NAME WANT-STATUS STDERR-STRING STDOUT-STRING -- ARGS...
check() {
	local name=$1 want=$2 epat=$3 opat=$4 st ok=0
	shift 5
	"$bench" "$@" > "$tmp/out" 2> "$tmp/err"
	st=$?
	[ "$st" = "$want" ] || { diag "exit $st, expected $want"; ok=1; }
	if [ -n "$epat" ] && ! grep -q -F -e "$epat" "$tmp/err"; then
		diag "stderr lacks '$epat'"; ok=1
	fi
	if [ -z "$opat" ] && [ -s "$tmp/out" ]; then
		diag "stdout not empty"; ok=1
	elif [ -n "$opat" ] && ! grep -q -F -e "$opat" "$tmp/out"; then
		diag "stdout lacks '$opat'"; ok=1
	fi
	[ $ok = 0 ] || sed 's/^/#   /' "$tmp/out" "$tmp/err" | tail -n 10
	result "$ok" "$name"
}
check "--hub-b $hubs, beyond the last hub: exit 2" 2 \
	"percs-bench: --hub-b $hubs: the system has $hubs hubs" "" -- -q lat --hub-b "$hubs"
check "--hub-a $hubs, beyond the last hub: exit 2" 2 \
	"percs-bench: --hub-a $hubs: no such hub (/dev/percs-hfi$((hubs * 2)) is missing)" "" -- \
	-q atomic --hub-a "$hubs"
if [ "$hubs" -lt 16 ]; then
	check "coll --procs $((hubs + 1)) on $hubs hubs: skipped with the reason, exit 0" 0 "" \
		"skipped: needs $((hubs + 1)) hubs (one process per hub), the system has $hubs" -- \
		-q --quick coll --procs $((hubs + 1)) --sizes 8 --iters 5
else
	echo "ok $((n + 1)) - coll with more processes than hubs # SKIP $hubs hubs"
	n=$((n + 1))
fi

diag "bench.sh: $(elapsed "$t0") s"
[ "$n" = "$plan" ] || diag "ran $n tests, planned $plan"
exit $((failures > 0))
