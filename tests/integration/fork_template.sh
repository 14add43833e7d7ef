#!/usr/bin/env bash
# Fork children start their exit write from the profile database their
# parent prepared at its second fork (report/writer/profile_db.h), and
# grandchildren from the copy their parent inherited. fork_template's
# parent forks six children one after another, the third of which forks
# three grandchildren; every process creates its own threads and prints
# "proc PID PPID THREADS START". Each process must be in the database
# once, with its parent, its start time as /proc gives it (which a fork
# child takes from its fork where that lay in one clock tick: util/proc_numbers.h),
# its own thread count (the run row's and its thread rows),
# its threads started in worker(), and no process may fail to write: run
# once plainly, once with time windows (a window thread writing in the
# parent while it forks), once under `lockblame run`, and plainly with
# the spool on (the default): where the children's profiles wait in the
# spool the template holds no database, and the parent must not have
# loaded SQLite for its children (every child would run its destructors
# at exit). With LOCKBLAME_SPOOL=0 every child commits and the template
# holds a database, which shows the check can tell.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/fork_template"

check() { # check NAME DB OUT ERR EXTRA (lockblame's own threads a process may have)
    local name=$1 db=$2 out=$3 extra=$5 pid ppid threads start
    local said; said=$(grep -c '^proc ' "$out" || true)
    local n; n=$(rows "$db" "SELECT COUNT(*) FROM run")
    echo "  $name: $said processes said what they did; $n run rows"
    [ "$said" = 10 ] || bad "$name: expected 10 processes to print, $said did"
    [ "$n" = "$said" ] || bad "$name: $n run rows for $said processes"
    while read -r _ pid ppid threads start; do
        local got rows_all
        got=$(rows "$db" "SELECT COUNT(*) || ' ' || MAX(ppid) || ' ' || MAX(exec_gen) || ' '
            || MAX(proc_start) FROM run WHERE pid = $pid")
        [ "$got" = "1 $ppid 0 $start" ] ||
            bad "$name: pid $pid: run rows, ppid, exec_gen, proc_start '$got', the process said '1 $ppid 0 $start'"
        got=$(rows "$db" "SELECT (SELECT COUNT(*) FROM thread t JOIN frame f
                ON f.id = t.start_frame_id WHERE t.run_id = r.id AND f.function = 'worker')
            || ' ' || (SELECT COUNT(*) FROM thread t WHERE t.run_id = r.id AND t.tid = r.pid)
            FROM run r WHERE r.pid = $pid")
        [ "$got" = "$((threads - 1)) 1" ] ||
            bad "$name: pid $pid: threads started in worker() and main threads '$got', the process ran '$((threads - 1)) 1'"
        rows_all=$(rows "$db" "SELECT COUNT(*) || ' ' || MAX(r.threads) FROM thread t
            JOIN run r ON r.id = t.run_id WHERE r.pid = $pid")
        [ "${rows_all% *}" = "${rows_all#* }" ] && [ "${rows_all% *}" -ge "$threads" ] &&
            [ "${rows_all% *}" -le $((threads + extra)) ] ||
            bad "$name: pid $pid: thread rows and run.threads '$rows_all', the process ran $threads (and $extra of lockblame's)"
    done < <(grep '^proc ' "$out")
    local meta
    meta=$(rows "$db" "SELECT COUNT(*) FROM meta WHERE key = 'schema_version'")
    [ "$meta" = 1 ] || bad "$name: $meta schema_version rows in meta"
    local lines; lines=$(grep -c '^lockblame: cannot' "$4" || true)
    [ "$lines" = 0 ] || bad "$name: $lines processes could not write: $(grep -m1 '^lockblame: cannot' "$4")"
}

echo "== fork_template, plain"
LOCKBLAME_OUTPUT=$tmp/plain.db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/fork_template" \
    >"$tmp/plain.out" 2>"$tmp/plain.err" || fail "fork_template failed: $(cat "$tmp/plain.err")"
check plain "$tmp/plain.db" "$tmp/plain.out" "$tmp/plain.err" 0
grep -qx 'sqlite_mapped 0' "$tmp/plain.out" ||
    bad "plain: the parent loaded SQLite for its children: $(grep sqlite_mapped "$tmp/plain.out")"

echo "== fork_template, spool off"
LOCKBLAME_SPOOL=0 LOCKBLAME_OUTPUT=$tmp/nospool.db LD_PRELOAD=$LOCKBLAME_LIB \
    "$WORKLOADS_USER/fork_template" >"$tmp/nospool.out" 2>"$tmp/nospool.err" ||
    fail "fork_template with the spool off failed: $(cat "$tmp/nospool.err")"
check "spool off" "$tmp/nospool.db" "$tmp/nospool.out" "$tmp/nospool.err" 0
grep -qx 'sqlite_mapped 1' "$tmp/nospool.out" ||
    bad "spool off: the parent's template did not load SQLite: $(grep sqlite_mapped "$tmp/nospool.out")"

echo "== fork_template, time windows every 10 ms"
LOCKBLAME_INTERVAL=10ms LOCKBLAME_OUTPUT=$tmp/win.db LD_PRELOAD=$LOCKBLAME_LIB \
    "$WORKLOADS_USER/fork_template" >"$tmp/win.out" 2>"$tmp/win.err" ||
    fail "fork_template with windows failed: $(cat "$tmp/win.err")"
check windows "$tmp/win.db" "$tmp/win.out" "$tmp/win.err" 1 # and the window thread
w=$(rows "$tmp/win.db" "SELECT COUNT(DISTINCT pid) FROM time_window")
echo "  windows: of $w processes"
[ "${w:-0}" -ge 1 ] || bad "windows: no process wrote a time window"
echo "== fork_template, under lockblame run"
"$LOCKBLAME_CLI" run -o "$tmp/run.db" -- "$WORKLOADS_USER/fork_template" >"$tmp/run.out" \
    2>"$tmp/run.err" || fail "fork_template under run failed: $(cat "$tmp/run.err")"
check run "$tmp/run.db" "$tmp/run.out" "$tmp/run.err" 0
grep -qx 'sqlite_mapped 0' "$tmp/run.out" ||
    bad "run: the parent loaded SQLite for its children: $(grep sqlite_mapped "$tmp/run.out")"
finish
