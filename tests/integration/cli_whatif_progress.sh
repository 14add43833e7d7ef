#!/usr/bin/env bash
# lockblame whatif --progress FUNCTION (no time or rate is judged): on
# whatif_gt's task queue run for a fixed time (rated), whose consumers
# still run at exit (never joined), the library counts the calls of
# progress_point() by a hardware breakpoint per thread (a uprobe where
# breakpoints do not count), and its count is
# exactly the workload's own count in every run of the round (the
# baseline's and each speedup's), stored in the whatif table
# (baseline_calls, calls, progress) and in JSON with metric "rate"; the
# table and the HTML page say the figure is the rate of progress_point
# calls. A function that the program lacks exits 2 with one line; a
# breakpoint that cannot be opened is reported in the library's results
# line (progress_errno). A whatif table of the first form (no progress
# columns) still shows, as the run's time, and takes new rows. Skips where
# neither a hardware breakpoint nor a uprobe can count.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/whatif_gt
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"
L=$LOCKBLAME_CLI
cd "$tmp"

echo "== --progress progress_point on the fixed-time task queue"
rc=0
GT_LOG=$tmp/gt.log "$L" whatif -o r.db --site queue_push -r 1 --progress progress_point \
    -- "$W" rated > table 2> err || rc=$?
cat table err
if [ "$rc" -eq 2 ] && grep -q 'hardware breakpoint' err; then
    skip "a hardware breakpoint (perf_event_open PERF_TYPE_BREAKPOINT)"
fi
[ "$rc" -eq 0 ] || fail "whatif --progress exited $rc"
grep -qE '^queue_push +[0-9.]+ s ' table || bad "no queue_push row in the table"
grep -q "predicted change of the rate of progress_point calls" table ||
    bad "the table does not say its figure is a rate"

echo "== the library's counts against the workload's own"
# gt.log: the profile run, then the round: baseline, 25%, 50%, 100%.
[ "$(wc -l < gt.log)" -eq 5 ] || bad "want 5 runs logged, got $(wc -l < gt.log)"
python3 - r.db gt.log <<'PY' || bad "progress counts"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
log = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[2])]
ok = True
for line, p in ((2, 0.25), (3, 0.5), (4, 1.0)):
    prog, base, calls = db.execute(
        "SELECT progress, baseline_calls, calls FROM whatif WHERE site='queue_push' AND speedup=?",
        (p,)).fetchone()
    want_base, want = int(log[1]["progress"]), int(log[line]["progress"])
    print(f"speedup {p}: library {base:.0f} baseline calls, {calls:.0f} calls; "
          f"workload {want_base}, {want}")
    if prog != "progress_point" or base != want_base or calls != want or want <= 0:
        print("FAILED: the library's count differs from the workload's"); ok = False
sys.exit(0 if ok else 1)
PY
"$L" whatif --show --format json r.db > r.json || bad "--show --format json"
python3 - r.json <<'PY' || bad "JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [(r["metric"], r["progress"]) for r in rows] == [("rate", "progress_point")] * 3, rows
assert all(r["baseline_calls"] > 0 and r["calls"] > 0 for r in rows), rows
print("ok: JSON rows of metric rate", len(rows))
PY

"$L" report --format html r.db > page.html || bad "report --format html"
grep -q 'rate of <code>progress_point</code> calls' page.html || bad "HTML: no rate note"

echo "== what a counted call costs: measured, and said where it matters"
# The library times calls of a function of its own with the same kind of
# counter at setup and reports the cost per call in its results line; the
# CLI says it on stderr when the baseline's calls took 1% of its time or
# more (a fixed cost per call is not sped up with the rest).
off=$(nm "$W" | awk '$3 == "queue_push" { print $1 }')
poff=$(nm "$W" | awk '$3 == "progress_point" { print $1 }')
rc=0
LOCKBLAME_OUTPUT=$tmp/h.db LOCKBLAME_WHATIF_SITE="0:$off:1:$W" LOCKBLAME_WHATIF_SPEEDUP=0 \
    LOCKBLAME_WHATIF_OUT=$tmp/h.txt LOCKBLAME_WHATIF_PROGRESS="$poff:$W" \
    preloaded "$W" rated > out || rc=$?
[ "$rc" -eq 0 ] || bad "whatif_gt rated counted: exit $rc"
python3 - h.txt err <<'PY' || bad "the counting cost"
import re, sys
line = open(sys.argv[1]).read()
m = re.search(r"elapsed_ns=(\d+) .* calls=(\d+) progress_hit_ns=(\d+)", line)
assert m, line
elapsed, calls, hit = (int(x) for x in m.groups())
assert calls > 0 and hit > 0, line
share = calls * hit / elapsed
said = "counting progress_point's calls costs" in open(sys.argv[2]).read()
print(f"{hit / 1000:.1f} us a counted call, {calls} calls, {100 * share:.1f}% of the run;"
      f" the whatif run {'said' if said else 'did not say'} so")
# (the whatif run's baseline is another run: judged only well clear of 1%)
assert said or share < 0.03, "a counting cost of 3% or more not said"
assert not said or share > 0.003, "a counting cost under 0.3% said"
PY

echo "== a function the program lacks: exit 2, one line"
rc=0
"$L" whatif --site queue_push -r 1 --progress no_such_function r.db > out 2> err || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] && grep -q "^lockblame: .*no_such_function" err ||
    bad "--progress no_such_function: exit $rc, '$(cat err)'"

echo "== a breakpoint that cannot be opened (a kernel address): the line says why, the program runs on"
rc=0
LOCKBLAME_OUTPUT=$tmp/e.db LOCKBLAME_WHATIF_SITE="0:$off:1:$W" LOCKBLAME_WHATIF_SPEEDUP=0 \
    LOCKBLAME_WHATIF_OUT=$tmp/e.txt LOCKBLAME_WHATIF_PROGRESS="7fffffffff000000:$W" \
    preloaded "$W" queue > out || rc=$?
[ "$rc" -eq 0 ] && grep -q '^queue: ' out || bad "whatif_gt under a failed breakpoint: exit $rc"
grep -qE '^pid=[0-9]+ .* progress_errno=[1-9][0-9]*$' e.txt || bad "results line: $(cat e.txt)"

echo "== a whatif table of the first form: shown as time, and new rows added"
cp r.db old.db
sqlite3 old.db "DROP TABLE whatif; CREATE TABLE whatif(site TEXT, speedup REAL, runs INTEGER, blame_s REAL,
    blame_share REAL, baseline_s REAL, measured_s REAL, delay_s REAL, predicted_s REAL,
    change REAL, change_lo REAL, change_hi REAL, holds REAL, hold_s REAL, verdict TEXT,
    PRIMARY KEY (site, speedup));
    INSERT INTO whatif VALUES('old_site', 1.0, 1, 1, 0.5, 2, 2, 1, 1, -0.5, -0.5, -0.5, 10, 1, '')"
"$L" whatif --show --format json old.db > old.json || bad "--show of the first form"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert [(x["site"], x["metric"]) for x in r] == [("old_site", "time")], r' \
    old.json || bad "old rows not shown as time"
"$L" whatif --show old.db | grep -q "change of the run's time" || bad "old table's footer"
rc=0
"$L" whatif --site queue_push -r 1 --progress progress_point old.db > out 2> err || rc=$?
[ "$rc" -eq 0 ] || bad "whatif into a table of the first form exited $rc: $(cat err)"
[ "$(rows old.db "SELECT group_concat(site || ':' || ifnull(progress, '-'), ' ') FROM
      (SELECT * FROM whatif ORDER BY site, speedup)")" = \
    "old_site:- queue_push:progress_point queue_push:progress_point queue_push:progress_point" ] ||
    bad "rows after adding to the first form: $(rows old.db 'SELECT site, progress FROM whatif')"
finish
