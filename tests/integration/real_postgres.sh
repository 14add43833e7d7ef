#!/usr/bin/env bash
# PostgreSQL under `lockblame run`: a real pre-forked server whose
# backends wait for LWLocks on per-backend POSIX semaphores in shared
# memory, posted by the backend that releases the lock (blame across
# processes, docs/DESIGN.md rule 3). initdb in a temporary directory, the
# server started under run, pgbench -i then a short pgbench run with 4
# clients, and a fast stop by SIGINT sent to run (which passes it on).
# Checks: the top release site is a semaphore post in PostgreSQL's lock
# release (PGSemaphoreUnlock called from LWLockRelease), never "no blame";
# the tree's rows conserve (blame + hand-off + unattributed = the waits
# measured); every backend that ran transactions wrote its profile; no
# wait is said to be ended from outside the tree.
# Needs Debian's postgresql package and root (the server runs as user
# postgres); skipped otherwise. Then an immediate stop (below).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] && [ -x "$pgbin/postgres" ] && command -v pgbench >/dev/null ||
    { echo "SKIP: needs PostgreSQL's server and pgbench (package postgresql)"; exit 77; }
[ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && command -v runuser >/dev/null ||
    { echo "SKIP: needs root and the postgres user to run the server"; exit 77; }

# The server cannot read a build tree under a private home: copy the CLI
# and the library (run preloads the one beside it) where it can.
dir=$tmp/pg
mkdir -p "$dir"
cp "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$dir/"
chown -R postgres "$dir"
chmod 755 "$tmp"
as_pg() { runuser -u postgres -- env -i PATH=/usr/bin:/bin HOME="$dir" "$@"; }
port=$((20000 + RANDOM % 20000))

as_pg "$pgbin/initdb" -D "$dir/data" -A trust >"$tmp/initdb.log" 2>&1 ||
    fail "initdb: $(tail -5 "$tmp/initdb.log")"
printf "port = %d\nunix_socket_directories = '%s'\nlisten_addresses = ''\n" "$port" "$dir" \
    >>"$dir/data/postgresql.conf"
as_pg "$dir/lockblame" run -o "$dir/pg.db" -- "$pgbin/postgres" -D "$dir/data" \
    >"$tmp/server.log" 2>&1 &
job=$!
# The signal goes to lockblame run itself (the job is runuser's shell).
run_pid() { pgrep -u postgres -f "^$dir/lockblame run" | head -n 1; }
stop_server() {
    kill -INT "$(run_pid)" 2>/dev/null
    wait $job 2>/dev/null
}
ready=0
for i in $(seq 1 300); do # a hang guard, not a timing assertion
    as_pg "$pgbin/pg_isready" -h "$dir" -p "$port" >/dev/null 2>&1 && { ready=1; break; }
    sleep 0.2
done
[ $ready = 1 ] || { stop_server; fail "the server did not start: $(tail -5 "$tmp/server.log")"; }
as_pg pgbench -h "$dir" -p "$port" -i -s 2 postgres >"$tmp/bench.log" 2>&1 ||
    { stop_server; fail "pgbench -i: $(tail -5 "$tmp/bench.log")"; }
as_pg pgbench -h "$dir" -p "$port" -c 4 -j 2 -T 5 postgres >>"$tmp/bench.log" 2>&1 ||
    { stop_server; fail "pgbench: $(tail -5 "$tmp/bench.log")"; }
grep 'tps' "$tmp/bench.log" | tail -1
pid=$(run_pid)
[ -n "$pid" ] || fail "lockblame run is gone"
kill -INT "$pid"
rc=0
wait $job || rc=$?
[ $rc = 0 ] || fail "lockblame run exited $rc: $(tail -5 "$tmp/server.log")"
grep -q 'received fast shutdown request' "$tmp/server.log" || fail "the server was not told to stop"
grep -q '^lockblame: .*processes profiled' "$tmp/server.log" || fail "no summary from run"

"$LOCKBLAME_CLI" report --by-release-site --format json "$dir/pg.db" >"$tmp/sites.json" ||
    fail "report failed"
python3 - "$tmp/sites.json" "$dir/pg.db" <<'PY'
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
errors = []
if not rows:
    errors.append("no release site at all")
else:
    top = rows[0]
    print("top: %s (%s) %.3f s, %.0f%%, callers %s" % (top["function"], top["object"], top["blame_s"],
          100 * top["share"], [c.split(" (")[0] for c in top.get("callers", [])][:3]))
    callers = [c.split(" (")[0] for c in top.get("callers", [])]
    if top["function"] != "PGSemaphoreUnlock" or top["object"] != "sem" or "LWLockRelease" not in callers[:2]:
        errors.append("top row is not PostgreSQL's LWLock release posting a waiter's semaphore")
db = sqlite3.connect(sys.argv[2])
w, b, h, u = db.execute("SELECT SUM(wait_s), SUM(blame_s), SUM(handoff_s), SUM(unattributed_s) "
                        "FROM sync_object").fetchone()
print("waits %.3f s = blame %.3f + hand-off %.3f + unattributed %.3f" % (w, b, h, u))
if w <= 0 or abs(b + h + u - w) > 0.02 * w:
    errors.append("the tree's rows do not conserve")
posting = db.execute("SELECT COUNT(DISTINCT o.run_id) FROM sync_object o WHERE o.object = 'sem' AND o.blame_s > 0").fetchone()[0]
waiting = db.execute("SELECT COUNT(DISTINCT o.run_id) FROM sync_object o WHERE o.object = 'sem' AND o.wait_s > 0").fetchone()[0]
print("processes that posted with blame: %d, that waited: %d" % (posting, waiting))
if waiting < 4:
    errors.append("fewer than the 4 client backends waited on their semaphores in the database")
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
# Every backend is profiled: no wait is said to be ended from outside the
# tree (a post counts itself before its real call, and a wait may begin
# in between).
"$LOCKBLAME_CLI" report "$dir/pg.db" >"$tmp/report.txt" || fail "report failed"
! grep '^outside:' "$tmp/report.txt" || fail "waits said ended from outside the tree"

# An immediate stop (pg_ctl -m immediate: SIGQUIT to every process, whose
# handler leaves with _exit, then SIGKILL after a grace period) right after
# pgbench: each process that had time writes its profile, and those that
# could not are counted (unwritten:). The 8 clients' backends and pgbench
# -i's, which ran transactions, are each in the database (a process with a
# calling context below PostgresMain) or counted. (An auxiliary process that recorded nothing has
# nothing to write.)
as_pg "$dir/lockblame" run -o "$dir/pg2.db" -- "$pgbin/postgres" -D "$dir/data" \
    >"$tmp/server2.log" 2>&1 &
job=$!
ready=0
for i in $(seq 1 300); do # a hang guard, not a timing assertion
    as_pg "$pgbin/pg_isready" -h "$dir" -p "$port" >/dev/null 2>&1 && { ready=1; break; }
    sleep 0.2
done
[ $ready = 1 ] || { stop_server; fail "the server did not start again: $(tail -5 "$tmp/server2.log")"; }
as_pg pgbench -h "$dir" -p "$port" -i -s 1 postgres >"$tmp/bench2.log" 2>&1 &&
    as_pg pgbench -h "$dir" -p "$port" -c 8 -j 2 -T 3 postgres >>"$tmp/bench2.log" 2>&1 ||
    { stop_server; fail "pgbench: $(tail -5 "$tmp/bench2.log")"; }
as_pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >>"$tmp/bench2.log" 2>&1 ||
    fail "pg_ctl -m immediate stop failed: $(tail -3 "$tmp/bench2.log")"
rc=0
wait $job || rc=$?
grep '^lockblame:' "$tmp/server2.log"
# a backend: a process with a context below PostgresMain (its sample count
# depends on the CPU the machine gave it, not on whether it wrote)
written=$(rows "$dir/pg2.db" "WITH RECURSIVE up(id, run, frame, parent) AS (
    SELECT n.id, t.run_id, n.frame_id, n.parent_id FROM metric m
    JOIN thread t ON t.id = m.thread_id JOIN node n ON n.id = m.node_id
    UNION SELECT p.id, up.run, p.frame_id, p.parent_id FROM up JOIN node p ON p.id = up.parent)
    SELECT COUNT(DISTINCT up.run) FROM up JOIN frame f ON f.id = up.frame
    WHERE f.function = 'PostgresMain'")
unwritten=$(rows "$dir/pg2.db" "SELECT COALESCE((SELECT value FROM meta WHERE key = 'processes_unwritten'), 0)")
echo "immediate stop: $written backends wrote, $unwritten counted as ended without writing"
[ $((written + unwritten)) -ge 9 ] ||
    fail "immediate stop: $written wrote and $unwritten were counted, of the 9 backends"
[ "$unwritten" = 0 ] || grep -q 'ended without writing' "$tmp/server2.log" ||
    fail "immediate stop: processes lost and the summary does not say so"
[ ! -e "$dir/pg2.db-procs" ] || fail "the ledger was left beside the database"
echo PASS
