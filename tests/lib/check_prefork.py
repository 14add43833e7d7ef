#!/usr/bin/env python3
"""Compare lockblame's blame for a pre-forked server's semaphore with the
truth its workers log (tests/workloads_user/prefork_truth.h).

Usage: check_prefork.py TRUTH SITES.json DB [--culprit]

TRUTH holds "truth SITE SECONDS" lines, and one "waited SECONDS",
"unplaced SECONDS" and "off_cpu SECONDS" line (the workload's stdout); SITES.json is `lockblame report --by-release-site
--format json DB`. Checks:
  1. per site, the sem blame of the rows of its function within 5% of its
     truth (fast_release's, a small figure, within 5% of all the waiting),
     plus the hand-off latency the tree's sem rows measured: the time from
     a post to the return of the waiter it let in, which the rule keeps
     apart from blame (docs/DESIGN.md) while the workers' logs, not knowing
     which waiter a post let in, give it to the next post's site (a busy
     machine that leaves woken waiters waiting for a CPU makes it large),
     and plus the waiting the workers' logs cannot place (prefork_truth.h:
     TRUTH's "unplaced", the waiting within the posts' spans, and its
     "off_cpu", the time runnable but off CPU of the waits whose waiter
     was preempted: between its clock read and the call, perhaps);
  2. conservation over the tree's sem rows: blame + hand-off +
     unattributed within 2% of the waits they measured;
  3. with --culprit, the top row is the site with the most true blame,
     where the truth tells the sites apart: the largest truth exceeds the
     next by more than both their tolerances (two sites of nearly equal
     truth may rank either way within them).
Prints every measured number. Exits 1 on failure.
"""
import json
import sqlite3
import sys

truth, waited, unplaced, off_cpu = {}, 0.0, 0.0, 0.0
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "truth":
        truth[f[1]] = float(f[2])
    elif f[0] == "waited":
        waited = float(f[1])
    elif f[0] == "unplaced":
        unplaced = float(f[1])
    elif f[0] == "off_cpu":
        off_cpu = float(f[1])
rows = json.load(open(sys.argv[2]))
got = {}
for r in rows:
    if r["object"] == "sem":
        got[r["function"]] = got.get(r["function"], 0) + r["blame_s"]
errors = []
db = sqlite3.connect(sys.argv[3])
w, b, h, u = db.execute("SELECT SUM(wait_s), SUM(blame_s), SUM(handoff_s), SUM(unattributed_s) "
                        "FROM sync_object WHERE object = 'sem'").fetchone()


# the time off CPU of the waits whose waiter was preempted (between its
# clock read and the call, or after it)
unplaced += off_cpu


def tolerance_of(site):
    return 0.05 * (waited if site == "fast_release" else truth[site]) + h + unplaced


print("hand-off %.4f s and %.4f s the workers' logs cannot place widen each site's tolerance"
      % (h, unplaced))
for site in truth:
    tolerance = tolerance_of(site)
    g = got.get(site, 0)
    print("%s: blamed %.4f s, truth %.4f s (%+.1f%%)" %
          (site, g, truth[site], 100 * (g / truth[site] - 1) if truth[site] else 0))
    if abs(g - truth[site]) > tolerance:
        errors.append("%s off its truth by more than %.4f s" % (site, tolerance))
ranked = sorted(truth, key=truth.get, reverse=True)
if "--culprit" in sys.argv and len(ranked) > 1 and \
        truth[ranked[0]] - truth[ranked[1]] <= tolerance_of(ranked[0]) + tolerance_of(ranked[1]):
    print("culprit: not judged, %s and %s are within their tolerances of each other" %
          (ranked[0], ranked[1]))
elif "--culprit" in sys.argv:
    culprit = ranked[0]
    if not rows or rows[0]["function"] != culprit:
        errors.append("top row is %s, the truth's culprit %s" %
                      (rows[0]["function"] if rows else None, culprit))
print("sem rows: waits %.4f s = blame %.4f + hand-off %.4f + unattributed %.4f" % (w, b, h, u))
if abs((b + h + u) - w) > 0.02 * w:
    errors.append("conservation: %.4f vs %.4f" % (b + h + u, w))
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
