#!/usr/bin/env bash
# `report --format pprof` read by the real reader, `go tool pprof`: on the
# demo's profile, -top and -traces must name queue_push with the blame that
# `report --format json` gives its release sites, and the totals of the
# wait, work and contentions sample types must equal the database's own
# sums (sqlite3). Labels object/thread/process must be there. Inlined calls:
# on tests/workloads_user/cxx_queue.cc built -O2 -g (std::thread's lambda is
# inlined), every code address the database holds several frames for is
# one pprof location with that many lines, innermost first.
# Skipped (exit 77) when go is not installed.
source "$(dirname "$0")/../lib/common.sh"
DEMO=$BUILD/demo/taskqueue
need "$DEMO" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
command -v go >/dev/null 2>&1 || skip "go (Debian: golang-go)"
# go tool pprof writes under $HOME/pprof and may look for a network symbolizer:
# keep both local.
export HOME=$tmp/home PPROF_TMPDIR=$tmp/home GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$HOME"
LOCKBLAME_OUTPUT=$tmp/demo.db preloaded "$DEMO" 4 >/dev/null 2>&1
"$LOCKBLAME_CLI" report --format pprof -o "$tmp/demo.pb.gz" "$tmp/demo.db"
gzip -t "$tmp/demo.pb.gz" || fail "the export is not gzip"
# Redirected stdout works too; a terminal is refused (not testable here).
"$LOCKBLAME_CLI" report --format pprof "$tmp/demo.db" >"$tmp/stdout.pb.gz"
cmp -s "$tmp/demo.pb.gz" "$tmp/stdout.pb.gz" || fail "-o FILE and stdout differ"
"$LOCKBLAME_CLI" report --format json "$tmp/demo.db" >"$tmp/sites.json"
for t in blame wait work contentions; do
    go tool pprof -top -unit=ms -nodecount=1000 -sample_index=$t "$tmp/demo.pb.gz" >"$tmp/top.$t" 2>"$tmp/top.$t.err" ||
        { cat "$tmp/top.$t.err"; fail "go tool pprof -top -sample_index=$t failed"; }
done
go tool pprof -traces -unit=ms -sample_index=blame "$tmp/demo.pb.gz" >"$tmp/traces" 2>"$tmp/traces.err" ||
    { cat "$tmp/traces.err"; fail "go tool pprof -traces failed"; }
go tool pprof -tags "$tmp/demo.pb.gz" >"$tmp/tags" 2>&1 || fail "go tool pprof -tags failed"
sed -n '1,14p' "$tmp/top.blame"
sqlite3 "$tmp/demo.db" "SELECT SUM(wait_s), SUM(work_s), SUM(blamed_count) FROM metric" >"$tmp/sums"
python3 - "$tmp" <<'PY'
import json, re, sys
d = sys.argv[1]
UNIT = {"": 1.0, "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4, "hrs": 3.6e6}
def ms(tok):
    m = re.fullmatch(r"([0-9.]+(?:e[+-]?\d+)?)([a-z]*)", tok)
    if not m:
        raise SystemExit("cannot parse pprof value %r" % tok)
    return float(m.group(1)) * UNIT.get(m.group(2), 1.0)
def top(name):
    rows, total = {}, None
    for line in open("%s/top.%s" % (d, name)):
        m = re.search(r"of ([0-9.]+[a-z]*) total", line)
        if m:
            total = ms(m.group(1))
        f = line.split()
        if len(f) >= 6 and f[1].endswith("%") and f[4].endswith("%"):
            rows[" ".join(f[5:])] = (ms(f[0]), ms(f[3]))
    return rows, total
sites = json.load(open(d + "/sites.json"))
want = 1e3 * sum(r["blame_s"] for r in sites if r["function"] == "queue_push")
blame, total = top("blame")
got = blame.get("queue_push", (0, 0))[0]
print("queue_push blame: report %.3f ms, pprof -top flat %.3f ms" % (want, got))
tol = lambda x: 0.02 + 1e-4 * abs(x)  # display rounding
ok = want > 100 and abs(got - want) <= tol(want)
report_total = 1e3 * sum(r["blame_s"] for r in sites)
print("blame total: report %.3f ms, pprof %.3f ms" % (report_total, total or 0))
ok &= total is not None and abs(total - report_total) <= tol(report_total)
# -traces: every trace whose leaf is queue_push; their sum is the same blame.
tr, cur = 0.0, None
for block in open(d + "/traces").read().split("-----------+")[1:]:
    for line in block.splitlines():
        f = line.split()
        if len(f) == 2 and re.match(r"^[0-9.]", f[0]) and not line.lstrip().endswith(":"):
            if f[1] == "queue_push":
                tr += ms(f[0])
            break
print("queue_push blame in -traces: %.3f ms" % tr)
ok &= abs(tr - want) <= tol(want) + 0.01 * len(sites)
wait, work, cnt = (float(x or 0) for x in open(d + "/sums").read().strip().split("|"))
for name, db in (("wait", 1e3 * wait), ("work", 1e3 * work), ("contentions", cnt)):
    t = top(name)[1]
    print("%s total: database %.3f, pprof %s" % (name, db, t))
    ok &= t is not None and abs(t - db) <= tol(db) + (0.5 if name == "contentions" else 0)
tags = open(d + "/tags").read()
for key in ("object:", "thread:", "process:", "mutex"):
    if key not in tags:
        print("missing label", key); ok = False
sys.exit(0 if ok else 1)
PY

command -v g++ >/dev/null || fail "g++ is not installed"
g++ -O2 -g -pthread -o "$tmp/cxx_queue" "$ROOT/tests/workloads_user/cxx_queue.cc"
LOCKBLAME_OUTPUT=$tmp/cxx.db preloaded "$tmp/cxx_queue" >/dev/null 2>&1
"$LOCKBLAME_CLI" report --format pprof -o "$tmp/cxx.pb.gz" "$tmp/cxx.db"
go tool pprof -raw "$tmp/cxx.pb.gz" >"$tmp/cxx.raw" 2>/dev/null || fail "go tool pprof -raw failed"
sqlite3 -separator '|' "$tmp/cxx.db" "SELECT offset, COUNT(*) FROM frame GROUP BY module_id, offset HAVING COUNT(*) > 1" >"$tmp/inl"
python3 - "$tmp" <<'PY'
import re, sys
d = sys.argv[1]
groups = [tuple(int(x) for x in l.split("|")) for l in open(d + "/inl") if l.strip()]
print("code addresses with inlined frames in the database:", len(groups))
if not groups:
    print("the -O2 C++ workload has no inlined frames: nothing to check"); sys.exit(1)
raw = open(d + "/cxx.raw").read().split("Locations", 1)[1].split("Mappings", 1)[0]
locs, cur = [], None
for line in raw.splitlines():
    m = re.match(r"\s+\d+: 0x([0-9a-f]+) ", line)
    if m:
        cur = [int(m.group(1), 16), 1]
        locs.append(cur)
    elif cur and line.strip():
        cur[1] += 1
by_off = {}  # addresses are module offsets in a 2^36 range per module
for addr, n in locs:
    by_off.setdefault(addr % (1 << 36), []).append(n)
ok, seen = True, 0
for off, n in groups:
    got = by_off.get(off)
    if got is None:
        continue  # an address no sampled path reaches
    seen += 1
    print("offset 0x%x: %d frames in the database, pprof location lines %s" % (off, n, got))
    ok &= all(x == n for x in got)
sys.exit(0 if ok and seen else 1)
PY
go tool pprof -traces "$tmp/cxx.pb.gz" >"$tmp/cxx.traces" 2>/dev/null || fail "go tool pprof -traces failed"
grep -m1 '(inline)' "$tmp/cxx.traces" || fail "-traces shows no inlined frame"
