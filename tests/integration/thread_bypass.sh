#!/usr/bin/env bash
# Every thread: a thread started through libc's own pthread_create, found
# with dlsym (tests/workloads_user/thread_bypass.c; jemalloc starts its
# background threads so, through dlsym(RTLD_NEXT, "pthread_create")), is
# registered at its first monitored call: it is in the thread table, named
# by the function it ran (bypassed_worker), sampled, and its releases of
# the mutex main waits for take their blame (bypass_release: 0.8-0.9 of
# main's own measure of its waiting on a quiet machine, the rest
# hand-off; at least a tenth asked, as a loaded machine's wake-ups stretch
# the hand-off). Without
# it the database had one thread, no samples of the worker, and main's
# waiting was all unattributed.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/thread_bypass
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$W"
db=$tmp/bypass.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" >"$tmp/out" 2>"$tmp/err" ||
    fail "workload exited $?: $(cat "$tmp/err")"
"$LOCKBLAME_CLI" report --format json "$db" >"$tmp/sites.json" || fail "report exited $?"
python3 - "$tmp/out" "$tmp/sites.json" "$db" <<'PY' || fail "the bypassed thread"
import json, sqlite3, sys
waited = float(open(sys.argv[1]).read().split()[1])
rows = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
threads = db.execute("SELECT t.samples, f.function FROM thread t LEFT JOIN frame f"
                     " ON f.id = t.start_frame_id").fetchall()
print("threads (samples, start routine):", threads)
blame = sum(r["blame_s"] for r in rows if r["function"] == "bypass_release" and r["object"] == "mutex")
print("bypass_release: %.4f s of blame; main waited %.4f s by its own measure" % (blame, waited))
errors = []
if not any(f == "bypassed_worker" and n > 0 for n, f in threads):
    errors.append("no sampled thread named bypassed_worker")
if blame < 0.1 * waited:
    errors.append("bypass_release took %.4f s, under a tenth of main's %.4f s" % (blame, waited))
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
echo PASS
