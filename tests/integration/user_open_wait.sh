#!/usr/bin/env bash
# A wait still open at exit (docs/DESIGN.md rule 4, conservation): in
# tests/workloads_user/gt_open_wait.c a helper waits on a condition
# variable nobody signals while main computes and returns. The profile is
# taken at exit; the open wait must be closed then and counted both in the
# accrual (blame + hand-off + unattributed) and in the waiters' measure
# (wait_s): they agree within 2%, and wait_s is at least the helper's wait
# as the workload measured it up to main's return (and at most 0.5 s more:
# the exit path). The header reports it as still parked at exit, and the
# wait view puts its time in the helper's cond wait context.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_open_wait
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json preloaded "$W" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report "$tmp/out.db" | tee "$tmp/table.txt" || fail "report exited $?"
python3 - "$tmp/gt.json" "$tmp/out.db" <<'PY' || fail "open wait not conserved"
import json, sqlite3, sys
truth = json.load(open(sys.argv[1]))
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
row = con.execute("SELECT wait_s, blame_s + handoff_s + unattributed_s FROM sync_object"
                  " WHERE object = 'cond' AND address = ?", (truth["object_address"],)).fetchone()
if row is None:
    print("no sync_object row for the cond"); sys.exit(1)
wait, accrued = row
low = truth["open_wait_min_s"]
print(f"cond: waiters' measure {wait:.6f} s, accrual {accrued:.6f} s, open wait >= {low:.6f} s")
ok = low <= wait <= low + 0.5 and abs(wait - accrued) <= 0.02 * low
tot = con.execute("SELECT TOTAL(wait_s), TOTAL(blame_s + handoff_s + unattributed_s)"
                  " FROM sync_object").fetchone()
print(f"all objects: wait {tot[0]:.6f} s, accrual {tot[1]:.6f} s")
ok = ok and abs(tot[0] - tot[1]) <= 0.02 * low
sys.exit(0 if ok else 1)
PY
grep -E 'still parked at exit 0\.[0-9]*[1-9]' "$tmp/table.txt" || fail "header does not report the open wait"
# The open wait's time is where the helper waits (its cond wait's calling
# context), not the thread's root; and its lock is first contended there.
"$LOCKBLAME_CLI" report --metric wait -n 1 "$tmp/out.db" >"$tmp/wait.txt" || fail "report --metric wait exited $?"
grep -A1 '^Wait s' "$tmp/wait.txt" | tail -1 | grep -q ' helper (' || { cat "$tmp/wait.txt"; fail "the open wait is not in helper's context"; }
grep '^cond' <("$LOCKBLAME_CLI" report --by-lock "$tmp/out.db") | grep -q ' helper (' || fail "the cond is not first contended in helper"
# The helper did all the waiting and no work: the release-site table says
# so in its "waiters:" line, naming its start routine.
"$LOCKBLAME_CLI" report "$tmp/out.db" | grep -E '^waiters: +100% of the wait \(joins aside\) is 1 thread\(s\) waiting for signals.*\(the most: helper' ||
    fail "no waiters: line for the helper"
"$LOCKBLAME_CLI" report --format html "$tmp/out.db" >"$tmp/page.html" || fail "report --format html exited $?"
grep -q '<th>waiters</th>' "$tmp/page.html" || fail "the HTML page has no waiters row"
