#!/usr/bin/env bash
# --by-thread names threads that share a start routine of the program (a
# trampoline calling each thread's task through a pointer, as lbzip2's
# pool does) by the task each ran: "trampoline -> compress_task (...)"
# for two threads, "trampoline -> write_task (...)" for the third
# (tests/workloads_user/trampoline_pool.c); a start routine that tells
# threads apart by itself keeps its plain name (bench/taskq: worker,
# producer). The release-site table's "waiters:" line names the writer,
# a helper waiting for signals; with main doing the writing itself
# ("coordinator"), the line says the initial thread waits as a
# coordinator; taskq, whose waiting threads also work, gets no line (or,
# where a busy machine left one of them busy less than 10% of its life,
# a line naming such a thread).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/trampoline_pool
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W" "$BUILD/bench/taskq"

LOCKBLAME_OUTPUT=$tmp/pool.db preloaded "$W" || fail "workload exited $?"
LOCKBLAME_OUTPUT=$tmp/taskq.db preloaded "$BUILD/bench/taskq" 2 20000 >/dev/null || fail "taskq exited $?"
LOCKBLAME_OUTPUT=$tmp/coord.db preloaded "$W" coordinator || fail "coordinator run exited $?"
"$LOCKBLAME_CLI" report "$tmp/pool.db" | grep -E '^waiters: .* waiting for signals.*\(the most: trampoline -> write_task \(' ||
    fail "pool: no waiters: line naming the writer"
"$LOCKBLAME_CLI" report "$tmp/coord.db" | grep -E '^waiters: .* the initial thread \(main\) waiting for signals.*coordinator' ||
    fail "coordinator: no waiters: line about the initial thread"
"$LOCKBLAME_CLI" report "$tmp/taskq.db" >"$tmp/taskq.txt" || fail "taskq: report exited $?"
for db in pool taskq; do
    "$LOCKBLAME_CLI" report --by-thread --format json "$tmp/$db.db" >"$tmp/$db.json" || fail "$db: --by-thread exited $?"
done
# taskq's threads all work: with the CPUs to themselves each is busy more
# than 10% of its life, no helper, and no waiters: line. Beside busy
# processes one of them (workers starved of tasks, or the producer of
# room) can fall below 10% of its life: a line is then right only if the
# thread it names is such a one (by the database's CPU times and lives).
python3 - "$tmp/taskq.db" "$tmp/taskq.json" "$tmp/taskq.txt" <<'PY' || fail "taskq: its workers were called helpers"
import json, re, sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
pid = con.execute("SELECT pid FROM run").fetchone()[0]
life = {tid: (cpu, end - start) for tid, start, end, cpu in
        con.execute("SELECT tid, start_s, end_s, cpu_s FROM thread")}
names = {r["tid"]: r["start_routine"] for r in json.load(open(sys.argv[2]))}
idle = {names.get(t, "?") for t, (cpu, l) in life.items() if t != pid and cpu < 0.1 * l}
for t, (cpu, l) in sorted(life.items()):
    print(f"taskq thread {t} ({names.get(t, '?')}): CPU {cpu:.3f} s of a {l:.3f} s life")
line = [l for l in open(sys.argv[3]) if l.startswith("waiters:")]
if not line:
    sys.exit(0)
print(line[0].rstrip())
most = re.search(r"\(the most: ([^)]*?)\)?: helpers", line[0])
named = most.group(1) if most else None
print(f"named: {named}; busy less than 10% of their lives: {sorted(idle)}")
sys.exit(0 if named in idle else 1)
PY
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

# An idle helper of the pool ("idle": it waits in the trampoline itself,
# with next to no CPU) is the trampoline, not "trampoline ->
# lockblame_unsampled_cpu" (lockblame's placeholder for a thread's
# unsampled CPU is not the program's), also with the library preloaded
# under another file name (a copy, an install), which named it so.
cp "$LOCKBLAME_LIB" "$tmp/profiler-copy.so"
LOCKBLAME_OUTPUT=$tmp/idle.db LD_PRELOAD=$tmp/profiler-copy.so "$W" idle || fail "idle run exited $?"
"$LOCKBLAME_CLI" report --by-thread --format json "$tmp/idle.db" >"$tmp/idle.json" || fail "idle report exited $?"
python3 - "$tmp/idle.json" <<'PY' || fail "idle helper's name"
import json, sys
names = sorted(r["start_routine"] for r in json.load(open(sys.argv[1])))
print("idle:", names)
sys.exit(0 if "trampoline" in names and not any("lockblame_" in n for n in names) else 1)
PY
echo PASS
