#!/usr/bin/env bash
# Every thread: a thread started by a raw clone(CLONE_VM | CLONE_THREAD |
# ...) without a thread pointer of its own runs with its creator's
# thread-local storage, lockblame's record of its creator included
# (tests/workloads_user/clone_thread.c: main and such a thread contend for
# one pthread mutex). Under the preload the program must behave as it does
# without it (exit status 0, the same output shape and counts), the
# database must show the clone as a thread of its own (a thread row with
# its tid, its own samples and CPU time: at least half the thread CPU
# time its rounds took, as it measures it), and the blame per release site
# must match the workload's own truth within 10% of all the waiting
# (tests/lib/check_blame.py). A few short runs with many rounds check that
# no run crashes or hangs. Before, the clone acted on main's record: runs
# aborted or hung in lockblame's blame code, and the database had one
# merged thread.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/clone_thread
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$W"
command -v timeout >/dev/null || { echo "SKIP: needs timeout"; exit 77; }

timeout 120 "$W" >"$tmp/native.json" || fail "workload alone exited $?"
db=$tmp/clone.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB timeout 120 "$W" >"$tmp/gt.json" 2>"$tmp/err" ||
    fail "workload preloaded exited $? (124: hung): $(tail -3 "$tmp/err")"
"$LOCKBLAME_CLI" report --by-release-site "$db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-release-site --format json "$db" >"$tmp/report.json" ||
    fail "report exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$db" ||
    fail "blame of the clone and main against the workload's truth"
python3 - "$tmp/native.json" "$tmp/gt.json" "$db" <<'PY' || fail "the clone as a thread of its own"
import json, sqlite3, sys
native, mine = (json.load(open(p)) for p in sys.argv[1:3])
db = sqlite3.connect(sys.argv[3])
errors = []
if sorted(native) != sorted(mine):
    errors.append("output keys differ: %s vs %s" % (sorted(native), sorted(mine)))
for key in ("rounds", "holds", "threads"):
    if native[key] != mine[key]:
        errors.append("%s: %s alone, %s preloaded" % (key, native[key], mine[key]))
# The workload's process image only: timeout's fork child, the same pid
# before its exec, may write a row of its own for that tid (a sample
# between fork and exec on a busy machine).
rows = db.execute("SELECT t.tid, t.samples, t.cpu_s FROM thread t JOIN run r ON r.id = t.run_id"
                  " WHERE r.executable LIKE '%clone_thread'").fetchall()
print("threads (tid, samples, cpu_s):", rows, "clone's tid", mine["clone_tid"])
clone = [r for r in rows if r[0] == mine["clone_tid"]]
cpu = mine["cpu_s"]["clone"]
if len(clone) != 1:
    errors.append("%d thread rows for the clone's tid %d" % (len(clone), mine["clone_tid"]))
elif clone[0][1] == 0 or clone[0][2] < 0.5 * cpu:
    errors.append("the clone: %d samples, %.3f s of CPU time for the %.3f s its rounds took"
                  % (clone[0][1], clone[0][2], cpu))
if len({r[0] for r in rows}) != len(rows):
    errors.append("two thread rows of the workload share a tid")
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
for i in 1 2 3 4 5; do
    LOCKBLAME_OUTPUT=$tmp/short$i.db LD_PRELOAD=$LOCKBLAME_LIB timeout 120 "$W" 20000 10 5 \
        >"$tmp/short.json" 2>"$tmp/err" ||
        fail "short run $i exited $? (124: hung): $(tail -3 "$tmp/err")"
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/short.json" ||
        fail "short run $i: output is not the workload's"
done
echo PASS
