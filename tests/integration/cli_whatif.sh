#!/usr/bin/env bash
# lockblame whatif, its functions (no time is judged): on whatif_gt's task
# queue it profiles, picks queue_push (a tail-called release), runs one
# round of a baseline and three speedups, writes the whatif table with
# that site's three rows and run counts, prints the table, and --show
# --format json and the HTML report carry it. The delay machinery is
# checked against the workload's own log of the same runs: the library
# counts exactly the workload's 3000 holds at the site, and the delay it
# inserted at speedup p is p times the holds' summed length as the
# workload timed them (from that to five times it: the library's holds
# also hold the signal to the consumers). Bad flags exit 2 with one
# line. -n 1 picks the top site (offpath's helper_update). The wrapped calls' return values and errno are the same while an
# experiment runs (errno_returns). On a C++ queue the site is app::Queue::push(int), whose holds
# (all 2000) are matched through std::mutex's inline frames.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/whatif_gt
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"
L=$LOCKBLAME_CLI
cd "$tmp"

echo "== bad flags: exit 2, one line"
for args in "-n 0 -- $W queue" "-r 99 -- $W queue" "--format xml -- $W queue" "--bogus" "" \
    "--show"; do
    rc=0
    # shellcheck disable=SC2086
    "$L" whatif $args > out 2> err || rc=$?
    [ "$rc" -eq 2 ] || bad "whatif $args: exit $rc, want 2"
    [ "$(wc -l < err)" -eq 1 ] && grep -q '^lockblame: ' err || bad "whatif $args: stderr '$(cat err)'"
done

echo "== whatif on the task queue"
rc=0
GT_LOG=$tmp/gt.log "$L" whatif -o q.db --site queue_push -r 1 -- "$W" queue > table 2> err || rc=$?
cat table err
[ "$rc" -eq 0 ] || fail "whatif exited $rc"
cell='[-+][0-9]+\.[0-9]% \[[-+][0-9.]+, [-+][0-9.]+\]'
grep -qE "^queue_push +[0-9.]+ s +[0-9.]+% +$cell +$cell +$cell" table ||
    bad "no queue_push row in the table"
[ "$(grep -cE "$cell" table)" -eq 1 ] || bad "want exactly one site row (--site)"
[ "$(rows q.db "SELECT group_concat(speedup || ':' || runs, ' ') FROM
      (SELECT * FROM whatif WHERE site = 'queue_push' ORDER BY speedup)")" = "0.25:1 0.5:1 1.0:1" ] ||
    bad "whatif table: $(rows q.db 'SELECT site, speedup, runs FROM whatif')"
[ "$(rows q.db "SELECT count(*) FROM whatif")" = 3 ] || bad "rows other than queue_push's"
schema=$(awk '/define LB_SCHEMA_VERSION/ { print $3 }' "$ROOT/src/common/schema.h")
[ "$(rows q.db "SELECT value FROM meta WHERE key = 'schema_version'")" = "$schema" ] || bad "schema version"

echo "== the delay inserted against the workload's own log"
# gt.log: the profile run, then the round: baseline, 25%, 50%, 100%.
[ "$(wc -l < gt.log)" -eq 5 ] || bad "want 5 runs logged, got $(wc -l < gt.log)"
python3 - q.db gt.log <<'PY' || bad "delay accounting"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
log = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[2])]
ok = True
for line, p in ((2, 0.25), (3, 0.5), (4, 1.0)):
    holds, delay, hold = db.execute(
        "SELECT holds, delay_s, hold_s FROM whatif WHERE site='queue_push' AND speedup=?",
        (p,)).fetchone()
    gt_holds, gt_hold = int(log[line]["holds"]), int(log[line]["hold_ns"]) * 1e-9
    want = p * gt_hold
    print(f"speedup {p}: library {holds:.0f} holds, {hold:.3f} s held, {delay:.3f} s delay; "
          f"workload {gt_holds} holds, {gt_hold:.3f} s held: p x that = {want:.3f} s")
    if holds != gt_holds or gt_holds != 3000:
        print("FAILED: the library's holds at the site differ from the workload's"); ok = False
    # The library's hold runs from the lock's return to the unlock call: the
    # workload's timed work and the signal in it, where a woken consumer
    # may preempt the producer on a loaded machine. So: at least the
    # workload's, and a few times it at most.
    if not (0.7 * want <= delay <= 5 * want):
        print("FAILED: delay not p x the holds' length"); ok = False
    if abs(delay - p * hold) > 0.01 * p * hold + 1e-6:
        print("FAILED: delay is not p x the library's own hold total"); ok = False
sys.exit(0 if ok else 1)
PY

echo "== from the existing profile: its site, its command rerun"
rc=0
GT_LOG=$tmp/gt2.log "$L" whatif --site queue_push -r 1 q.db > table2 2> err || rc=$?
[ "$rc" -eq 0 ] || bad "whatif q.db exited $rc: $(cat err)"
[ "$(wc -l < gt2.log)" -eq 4 ] || bad "want 4 reruns of the profile's command, got $(wc -l < gt2.log)"
grep -q "^queue_push " table2 || bad "no queue_push row from the existing profile"

echo "== -n 1: the top site (offpath: two helpers take turns on one lock)"
rc=0
"$L" whatif -o o.db -n 1 -r 1 --format json -- "$W" offpath > o.json 2> err || rc=$?
[ "$rc" -eq 0 ] || bad "whatif offpath exited $rc: $(cat err)"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert [x["site"] for x in r] == ["helper_update"] * 3, r' \
    o.json || bad "-n 1 did not pick helper_update alone"

echo "== C++: the site is the program's member function, not std::mutex's inline unlock"
if [ -x "$WORKLOADS_USER/cxx_queue" ]; then
    "$L" whatif -o c.db -n 1 -r 1 --format json -- "$WORKLOADS_USER/cxx_queue" > c.json 2> err ||
        bad "whatif cxx_queue exited $?: $(cat err)"
    python3 - c.json <<'PY' || bad "C++ site"
import json, sys
rows = json.load(open(sys.argv[1]))
got = [(r["site"], r["holds"]) for r in rows]
# two threads push 1000 times each
assert got == [("app::Queue::push(int)", 2000)] * 3, got
print("ok:", got[0])
PY
fi

echo "== an unknown site: exit 2, one line"
rc=0
"$L" whatif --site no_such_site -r 1 q.db > out 2> err || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] || bad "--site no_such_site: exit $rc, '$(cat err)'"

echo "== an experiment keeps return values and errno of every wrapped call"
if [ -x "$WORKLOADS/errno_returns" ]; then
    LOCKBLAME_OUTPUT=$tmp/e.db LOCKBLAME_WHATIF_SITE="0:1:1:$WORKLOADS/errno_returns" \
        LOCKBLAME_WHATIF_SPEEDUP=1 LOCKBLAME_WHATIF_OUT=$tmp/e.txt \
        preloaded "$WORKLOADS/errno_returns" > /dev/null || bad "errno_returns under an experiment exited $?"
    grep -q '^pid=[0-9]* elapsed_ns=[0-9]* delay_ns=0 ' e.txt || bad "no results line: $(cat e.txt)"
fi

echo "== --show, JSON and HTML"
"$L" whatif --show --format json q.db > j.json || bad "--show --format json"
python3 - j.json <<'PY' || bad "JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [(r["site"], r["speedup"], r["runs"]) for r in rows] == \
    [("queue_push", 0.25, 1), ("queue_push", 0.5, 1), ("queue_push", 1, 1)], rows
for r in rows:
    assert r["change_lo"] <= r["change"] <= r["change_hi"], r
    assert abs(r["predicted_s"] - (r["measured_s"] - r["delay_s"])) < 1e-6 or r["runs"] > 1, r
print("ok: JSON rows", len(rows))
PY
"$L" whatif --show q.db | grep -q '^queue_push ' || bad "--show table"
"$L" report --format html q.db > page.html || bad "report --format html"
grep -q '<section id="whatif">' page.html && grep -q '<td>queue_push</td>' page.html ||
    bad "no whatif section in the HTML page"
finish
