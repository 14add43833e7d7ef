#!/usr/bin/env bash
# A hot mutex's lock and unlock skip its lb_mon while nothing needs it (the
# quiet bit, src/blame/mutex_quiet.h), and take it again when something
# does; its waits that take the lock at the first exchange are counted
# without a clock read (lb_mutex_sampled_took_at_once).
# tests/workloads_user/mutex_quiet_timed.c: two threads trade one mutex
# (LOCKBLAME_MUTEX=sampled: its waits blamed by holder samples), then main
# holds it while one thread waits in pthread_mutex_timedlock, an exact
# wait, and releases it at long_release_site.
#  - premise: the mutex was quiet before the timed wait (its stash, read
#    by the workload); a run where it was not (a sample's debt left
#    uncollected by the hot phase's last release) is repeated, up to RUNS;
#  - the timed wait clears the bit, so main's release is accounted: the
#    blame at long_release_site is most of the waiter's own wall time (at
#    least half of it, and no more than all of it: the rest is the
#    waiter's entry and its wake-up after the release, which a loaded
#    machine can stretch by milliseconds); with the bit left set, the
#    release skipped its accounting and the blame was 0;
#  - every contended acquisition is counted at its lock site: the sites'
#    contended counts add up to the mutex's, sampled waits included (most
#    of them took the lock at the first exchange);
#  - the program's output is the native run's but for quiet_before.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/mutex_quiet_timed
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

RUNS=3

"$W" >"$tmp/native.out" || fail "native run exited $?"
grep -qx 'quiet_before 0' "$tmp/native.out" || fail "natively the stash is not 0: $(cat "$tmp/native.out")"

for run in $(seq "$RUNS"); do
    rm -f "$tmp/run.db"
    LOCKBLAME_MUTEX=sampled LOCKBLAME_OUTPUT=$tmp/run.db preloaded "$W" >"$tmp/run.out" \
        || fail "preloaded run exited $?"
    diff <(grep -v '^quiet_before\|^timed_wait_s' "$tmp/native.out") \
        <(grep -v '^quiet_before\|^timed_wait_s' "$tmp/run.out") >/dev/null \
        || fail "the preloaded run printed other lines: $(cat "$tmp/run.out")"
    if ! grep -qx 'quiet_before 1' "$tmp/run.out"; then
        echo "run $run: the mutex was not quiet before the timed wait; again"
        continue
    fi
    "$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/run.db" >"$tmp/run.json" \
        || fail "lockblame report exited $?"
    python3 - "$tmp/run.db" "$tmp/run.json" "$tmp/run.out" <<'PY' || fail "see above"
import json, sqlite3, sys
db, report, out = sys.argv[1], sys.argv[2], sys.argv[3]
truth = {k: float(v) for k, v in (line.split() for line in open(out))}
ok = True
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
objs = con.execute("SELECT contended, sampled_waits FROM sync_object WHERE object = 'mutex'").fetchall()
if len(objs) != 1:
    sys.exit(f"FAILED: {len(objs)} mutexes in sync_object, want 1")
contended, sampled = objs[0]
at_sites = con.execute("SELECT COALESCE(SUM(contended), 0) FROM site WHERE object = 'mutex'").fetchone()[0]
print(f"mutex: {contended} contended acquisitions ({sampled} sampled), {at_sites} at its lock sites")
if sampled == 0 or sampled >= contended:
    print("FAILED: want sampled waits, and the timed wait exact")
    ok = False
if at_sites != contended:
    print("FAILED: the lock sites' contended counts do not add up to the mutex's")
    ok = False
blame = sum(float(r["blame_s"]) for r in json.load(open(report))
            if r["object"] == "mutex" and r["function"].split(".")[0] == "long_release_site")
waited = truth["timed_wait_s"]
print(f"long_release_site: blame {blame:.6f} s, the timed wait {waited:.6f} s")
if not 0.5 * waited <= blame <= waited + 0.001:
    print("FAILED: want at least half the timed wait and no more than it")
    ok = False
sys.exit(0 if ok else 1)
PY
    exit 0
done
fail "the mutex was never quiet before the timed wait in $RUNS runs"
