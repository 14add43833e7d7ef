#!/usr/bin/env bash
# --by-thread names threads that share a start routine of the program (a
# trampoline calling each thread's task through a pointer, as lbzip2's
# pool does) by the task each ran: "trampoline -> compress_task (...)"
# for two threads, "trampoline -> write_task (...)" for the third
# (tests/workloads_user/trampoline_pool.c); a start routine that tells
# threads apart by itself keeps its plain name (bench/taskq: worker,
# producer).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/trampoline_pool
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W" "$BUILD/bench/taskq"

LOCKBLAME_OUTPUT=$tmp/pool.db preloaded "$W" || fail "workload exited $?"
LOCKBLAME_OUTPUT=$tmp/taskq.db preloaded "$BUILD/bench/taskq" 2 20000 >/dev/null || fail "taskq exited $?"
for db in pool taskq; do
    "$LOCKBLAME_CLI" report --by-thread --format json "$tmp/$db.db" >"$tmp/$db.json" || fail "$db: --by-thread exited $?"
done
python3 - "$tmp/pool.json" "$tmp/taskq.json" <<'PY' || fail "thread names"
import json, sys
pool = sorted(r["start_routine"] for r in json.load(open(sys.argv[1])))
taskq = sorted(r["start_routine"] for r in json.load(open(sys.argv[2])))
print("pool:", pool)
print("taskq:", taskq)
compress = sum(1 for s in pool if s.startswith("trampoline -> compress_task ("))
write = sum(1 for s in pool if s.startswith("trampoline -> write_task ("))
ok = compress == 2 and write == 1 and "main" in pool
ok = ok and taskq == ["main", "producer", "worker", "worker"]
sys.exit(0 if ok else 1)
PY
