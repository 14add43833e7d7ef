#!/usr/bin/env bash
# Blame across processes for process-shared mutexes, rwlocks, condition
# variables and barriers: prefork_shared's four forked workers contend on
# one such object in shared memory, worker 0 holding long at a known site (the
# workload's header says each mode's rule). Each site's blame must be
# within 5% of the truth the workers log themselves (the small site's to
# 5% of all the waiting; each also widened by the hand-off lockblame
# measured and by the waiting the workers' logs cannot place, which a
# busy machine makes large), the truth's culprit on top where the truth
# tells the sites apart (check_prefork.py's rule), the waits measured
# within 5% of the workers' own, less the time the workers were preempted
# in their logged spans (off_cpu.h), and the tree's rows
# must conserve: blame + hand-off + unattributed = the waits measured, to
# 1e-6 relative plus 20 ns per wait (a waiter's clock read may come a few
# ns before the time the accrual already reached, on another core), also
# for what the tree still owes at its end (waiters woken by the last
# signal on their way out, settled as unattributed by its last process).
# With each process keeping
# its own accrual, a mutex's or cond's waits were per process: no
# process-shared mutex was monitored at all, and a cond's or barrier's
# blame landed on the waiters' own process or nowhere.
# In mode mutex, the counts too: each process's row counts its own
# acquisitions (as the workers count them) and contended ones, and the
# release-site rows' Count and Blamed match the workers' releases and the
# holds they waited during (a process-shared mutex's acquisitions were
# only in the per-kind aggregate rows, its object rows said 0); Blamed
# lies between the holds the workers' logs and the lock word prove a
# waiter during and those the real calls can have had one during: a
# logged wait that merely overlaps a logged hold proves nothing, the
# waiter may be preempted between its clock read and its lock call until
# the hold is over (the workload's proven_waited). Both bounds are proofs,
# so Blamed is held to them exactly: a lockblame that blamed no release,
# or every one, fails where a hold was proven waited for, or proven free.
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
truth, acquired, released = {}, {}, {}
for line in open(truth_path):
    f = line.split()
    if f[0] == "truth":
        truth[f[1]] = float(f[2])
    elif f[0] == "waited":
        waited = float(f[1])
    elif f[0] == "unplaced":
        unplaced = float(f[1])
    elif f[0] == "off_cpu":
        off_cpu = float(f[1])
    elif f[0] == "acquired":
        acquired[int(f[1])] = int(f[2])
    elif f[0] == "released":
        released[f[1]] = (int(f[2]), int(f[3]), int(f[4]))
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
# Each wait lockblame times lies within the span its worker logs; the
# span's excess is the code around the call and, on a busy machine, the
# worker preempted there (off_cpu: a few ms at a time), which lockblame
# rightly does not count. (A barrier's last arrival logs a span of its
# own that is no wait.)
print("%s: the waits' time off CPU, where preempted: %.4f s" % (mode, off_cpu))
if kind != "barrier" and not (waited - 0.05 * waited - off_cpu <= w <= waited + 0.05 * waited):
    errors.append("waits measured %.4f s, the workers' own %.4f s (%.4f s of it off CPU)"
                  % (w, waited, off_cpu))
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
    # The workers log a release just before the real call, and do not know
    # when the waiter it lets in runs: a releaser preempted before its call,
    # or a woken waiter left waiting for a CPU, moves waiting between a hold
    # and the hand-off that lockblame measures apart (docs/DESIGN.md): each
    # site's tolerance adds the hand-off the rows measured.
    print("hand-off %.4f s widens each site's tolerance" % h)
    # And so does the waiting the workers' logs cannot place (the workload's
    # "unplaced"): a mutex's, less the hand-off it holds, is waiting during
    # no logged hold, a holder descheduled between its clock reads and the
    # calls; a cond's lies between a broadcast's log and its return.
    # The waits' time off CPU that lockblame does not see is in the
    # truth, on whichever hold or signal it fell during: it widens each
    # site's tolerance too.
    extra = (max(0.0, unplaced - h) if mode == "mutex" else unplaced) + off_cpu
    print("unplaced %.4f s, %.4f s of it beyond the hand-off, and off CPU %.4f s widen"
          " each site's tolerance" % (unplaced, extra - off_cpu, off_cpu))
    def tolerance_of(site):
        return 0.05 * (truth[site] if site == big else waited) + h + extra
    for site in truth:
        tolerance = tolerance_of(site)
        g = got.get(site, 0)
        print("%s: blamed %.4f s, truth %.4f s (%+.1f%%)" % (site, g, truth[site],
              100 * (g / truth[site] - 1) if truth[site] else 0))
        if abs(g - truth[site]) > tolerance:
            errors.append("%s off its truth by more than %.4f s" % (site, tolerance))
    # The culprit is judged where the truth tells the sites apart: the
    # largest truth exceeds the next by more than both their tolerances
    # (in rwlock mode, readers that keep the writer out can make the two
    # sites' truths nearly equal, and then either may rank first).
    second = max((t for s, t in truth.items() if s != big), default=0)
    others = [s for s in truth if s != big and truth[s] == second]
    if others and truth[big] - second <= tolerance_of(big) + tolerance_of(others[0]):
        print("culprit: not judged, %s and %s are within their tolerances of each other"
              % (big, others[0]))
    elif not rows or rows[0]["function"] != big:
        errors.append("top row is %s, the truth's culprit %s" % (rows[0]["function"] if rows else None, big))
    if "outside:" in open(text_path).read():
        errors.append("an outside: line with every process profiled")
if mode == "mutex":
    # Counts as for a private mutex: each process's row of the object
    # counts all its acquisitions (the workers' own count per pid) and its
    # contended ones (those its lock sites counted), none left in the
    # kind's aggregate row; each release site counts its releases (Count)
    # and those that carried blame (Blamed: at least the holds the workers
    # prove a waiter during, at most those a logged wait can have been
    # during; both proofs, no slack).
    per_run = db.execute("SELECT r.pid, s.acquisitions, s.contended, s.run_id FROM sync_object s"
                         " JOIN run r ON r.id = s.run_id"
                         " WHERE s.object = 'mutex' AND s.address IS NOT NULL").fetchall()
    loose = db.execute("SELECT TOTAL(acquisitions) FROM sync_object"
                       " WHERE object = 'mutex' AND address IS NULL").fetchone()[0]
    print("mutex: rows (pid, acquisitions, contended):", [r[:3] for r in per_run],
          "workers' own:", acquired, "aggregate rows:", loose)
    got = {pid: a for pid, a, c, run in per_run}
    if got != acquired:
        errors.append("acquisitions per process %s, the workers' own %s" % (got, acquired))
    if loose:
        errors.append("%d acquisitions left in the aggregate row" % loose)
    for pid, a, c, run in per_run:
        at_sites = db.execute("SELECT TOTAL(acquisitions) FROM site s JOIN thread t"
                              " ON t.id = s.thread_id AND t.run_id = ? WHERE s.object = 'mutex'",
                              (run,)).fetchone()[0]
        if c is None or c > a or c != at_sites:
            errors.append("pid %d: %s contended of %s acquisitions, %d at its lock sites"
                          % (pid, c, a, at_sites))
    if sum(c for pid, a, c, run in per_run) == 0 and waited > 0.01:
        errors.append("no contended acquisition counted for %.3f s of waiting" % waited)
    for site, (count, waited_for, at_most) in released.items():
        row = [r for r in rows if r["function"] == site]
        c = sum(r["count"] for r in row)
        b = sum(r["blamed_count"] for r in row)
        print("%s: Count %d Blamed %d; the workers' own: %d releases, holds waited during: "
              "%d proven, %d at most"
              % (site, c, b, count, waited_for, at_most))
        if c != count or not waited_for <= b <= at_most:
            errors.append("%s: Count %d Blamed %d, the workers' own %d and %d-%d"
                          % (site, c, b, count, waited_for, at_most))
for e in errors:
    print("FAILED:", mode, e)
sys.exit(1 if errors else 0)
PY
        fail "$mode: blame across processes"
done
echo PASS
