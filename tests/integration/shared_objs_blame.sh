#!/usr/bin/env bash
# Blame across processes for process-shared mutexes, rwlocks, condition
# variables and barriers: prefork_shared's four forked workers contend on
# one such object in shared memory, worker 0 holding long at a known site (the
# workload's header says each mode's rule). Each site's blame must be
# within 5% of the truth the workers log themselves (the small site's to
# 5% of all the waiting), the truth's culprit on top, and the tree's rows
# must conserve: blame + hand-off + unattributed = the waits measured, to
# 1e-6 relative plus 20 ns per wait (a waiter's clock read may come a few
# ns before the time the accrual already reached, on another core), also
# for what the tree still owes at its end (waiters woken by the last
# signal on their way out, settled as unattributed by its last process).
# With each process keeping
# its own accrual, a mutex's or cond's waits were per process: no
# process-shared mutex was monitored at all, and a cond's or barrier's
# blame landed on the waiters' own process or nowhere.
# In mode outside, worker 0 (the signaller) is not profiled: the waits it
# ends are unattributed, no site of the tree takes their blame, and the
# header says why (outside:).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/prefork_shared"
for mode in mutex cond barrier rwlock outside; do
    db=$tmp/$mode.db
    LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/prefork_shared" $mode \
        >"$tmp/$mode.truth" 2>"$tmp/err" || fail "$mode: workload failed: $(cat "$tmp/err")"
    "$LOCKBLAME_CLI" report --by-release-site --format json "$db" >"$tmp/$mode.json" ||
        fail "$mode: report failed"
    "$LOCKBLAME_CLI" report --by-release-site "$db" >"$tmp/$mode.txt" || fail "$mode: report failed"
    python3 - "$mode" "$tmp/$mode.truth" "$tmp/$mode.json" "$db" "$tmp/$mode.txt" <<'PY' ||
import json, sqlite3, sys
mode, truth_path, json_path, db_path, text_path = sys.argv[1:]
kind = {"mutex": "mutex", "cond": "cond", "barrier": "barrier", "rwlock": "rwlock",
        "outside": "cond"}[mode]
truth = {}
for line in open(truth_path):
    f = line.split()
    if f[0] == "truth":
        truth[f[1]] = float(f[2])
    elif f[0] == "waited":
        waited = float(f[1])
rows = [r for r in json.load(open(json_path)) if r["object"] == kind]
got = {}
for r in rows:
    got[r["function"]] = got.get(r["function"], 0) + r["blame_s"]
errors = []
db = sqlite3.connect(db_path)
w, b, h, u, n = db.execute("SELECT SUM(wait_s), SUM(blame_s), SUM(handoff_s), "
                           "SUM(unattributed_s), SUM(contended) FROM sync_object WHERE object = ?",
                           (kind,)).fetchone()
w, b, h, u, n = w or 0, b or 0, h or 0, u or 0, n or 0
slack = 1e-6 * w + 20e-9 * n
print("%s: %s rows: waits %.6f s = blame %.6f + hand-off %.6f + unattributed %.6f "
      "(off by %.3g s, allowed %.3g s for %d waits; workers' own: %.4f)"
      % (mode, kind, w, b, h, u, b + h + u - w, slack, n, waited))
if abs(b + h + u - w) > slack:
    errors.append("conservation: %.6f vs %.6f" % (b + h + u, w))
# (a barrier's last arrival logs a span of its own that is no wait)
if kind != "barrier" and abs(w - waited) > 0.05 * waited:
    errors.append("waits measured %.4f s, the workers' own %.4f s" % (w, waited))
if mode == "outside":
    print("outside: blamed %.4f s in the tree, unattributed %.4f s" % (sum(got.values()), u))
    if sum(got.values()) > 0.05 * waited:
        errors.append("the tree took blame for an outside signaller's waits")
    if u < 0.95 * w:
        errors.append("outside waits not unattributed: %.4f of %.4f" % (u, w))
    if "outside:" not in open(text_path).read():
        errors.append("no outside: line in the header")
else:
    big = max(truth, key=truth.get)
    for site in truth:
        tolerance = 0.05 * (truth[site] if site == big else waited)
        g = got.get(site, 0)
        print("%s: blamed %.4f s, truth %.4f s (%+.1f%%)" % (site, g, truth[site],
              100 * (g / truth[site] - 1) if truth[site] else 0))
        if abs(g - truth[site]) > tolerance:
            errors.append("%s off its truth by more than %.4f s" % (site, tolerance))
    if not rows or rows[0]["function"] != big:
        errors.append("top row is %s, the truth's culprit %s" % (rows[0]["function"] if rows else None, big))
    if "outside:" in open(text_path).read():
        errors.append("an outside: line with every process profiled")
for e in errors:
    print("FAILED:", mode, e)
sys.exit(1 if errors else 0)
PY
        fail "$mode: blame across processes"
done
echo PASS
