#!/usr/bin/env bash
# Blame across processes: prefork_sem's four forked workers take turns on a
# process-shared semaphore in shared memory; worker 0 holds long and posts
# in slow_release, the others post in fast_release. A post's blame is the
# idleness accrued since the previous post over the waiters of every
# process (docs/DESIGN.md rule 3). Each site's blame must be within 5% of
# the truth the workers log themselves (fast_release's, a small figure, to
# 5% of all the waiting), the truth's culprit on top (slow_release, but
# for a run whose scheduling kept the waiters away), and the tree's rows must
# conserve: blame + hand-off + unattributed = the waits measured. With the
# waits and posts kept per process, the waiters' own fast posts took the
# blame and slow_release almost none.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/prefork_sem"
db=$tmp/prefork.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/prefork_sem" \
    >"$tmp/truth" 2>"$tmp/err" || fail "workload failed: $(cat "$tmp/err")"
"$LOCKBLAME_CLI" report --by-release-site --format json "$db" >"$tmp/sites.json" ||
    fail "report failed"
[ "$(rows "$db" "SELECT COUNT(*) FROM run")" = 5 ] || [ "$(rows "$db" "SELECT COUNT(*) FROM run")" = 4 ] ||
    fail "expected the workers' processes in the database: $(rows "$db" "SELECT COUNT(*) FROM run")"
python3 - "$tmp/truth" "$tmp/sites.json" "$db" <<'PY'
import json, sqlite3, sys
truth = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "truth":
        truth[f[1]] = float(f[2])
    elif f[0] == "waited":
        waited = float(f[1])
rows = json.load(open(sys.argv[2]))
got = {}
for r in rows:
    if r["object"] == "sem":
        got[r["function"]] = got.get(r["function"], 0) + r["blame_s"]
errors = []
for site, tolerance in (("slow_release", 0.05 * truth["slow_release"]), ("fast_release", 0.05 * waited)):
    g = got.get(site, 0)
    print("%s: blamed %.4f s, truth %.4f s (%+.1f%%)" % (site, g, truth[site], 100 * (g / truth[site] - 1) if truth[site] else 0))
    if abs(g - truth[site]) > tolerance:
        errors.append("%s off its truth by more than %.4f s" % (site, tolerance))
culprit = max(truth, key=truth.get) # slow_release, unless the scheduler kept waiters away from it
if not rows or rows[0]["function"] != culprit:
    errors.append("top row is %s, the truth's culprit %s" % (rows[0]["function"] if rows else None, culprit))
db = sqlite3.connect(sys.argv[3])
w, b, h, u = db.execute("SELECT SUM(wait_s), SUM(blame_s), SUM(handoff_s), SUM(unattributed_s) "
                        "FROM sync_object WHERE object = 'sem'").fetchone()
print("sem rows: waits %.4f s = blame %.4f + hand-off %.4f + unattributed %.4f" % (w, b, h, u))
if abs((b + h + u) - w) > 0.02 * w:
    errors.append("conservation: %.4f vs %.4f" % (b + h + u, w))
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
echo PASS
