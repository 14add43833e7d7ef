#!/usr/bin/env bash
# Every shutdown: a tree stopped as `pg_ctl -m immediate` stops PostgreSQL
# (tests/workloads_user/prefork_killed.c: three workers leave at once with
# _exit from their SIGQUIT handler, one is killed with SIGKILL) loses no
# process that had time to write, and says how many ended without writing
# and why: in the one summary of the tree's root (under plain LD_PRELOAD
# and under lockblame run) and in the report's header (unwritten:), from
# the ledger the tree's processes keep beside the database
# (common/ledger.h), which is removed at the end. Without the ledger the
# killed worker was simply missing, and nothing said so.
# `masked`: the workers block every signal but SIGQUIT, so no sample ever
# reaches them; their CPU time still makes them write (a worker whose
# CPU-time timer no scheduler tick checked, beside busy loops, had no
# sample either, and was lost without a word, counted nowhere). A process
# whose write fails is counted as well.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/prefork_killed
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$W"
said='1 process of the tree ended without writing its profile: killed before writing it'
for how in preload masked run; do
    db=$tmp/$how.db
    if [ $how != run ]; then
        LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" ${how#preload} >"$tmp/out" 2>"$tmp/err" ||
            fail "$how: workload exited $?: $(cat "$tmp/err")"
    else
        "$LOCKBLAME_CLI" run -o "$db" -- "$W" >"$tmp/out" 2>"$tmp/err" ||
            fail "$how: run exited $?: $(cat "$tmp/err")"
    fi
    cat "$tmp/err"
    grep -q "^lockblame: $said" "$tmp/err" || fail "$how: the summary does not say a process was lost"
    [ "$(grep -c 'ended without writing' "$tmp/err")" = 1 ] || fail "$how: said more than once"
    workers=$(rows "$db" "SELECT COUNT(*) FROM run WHERE exit_reason = '_exit'")
    [ "$workers" = 3 ] || fail "$how: $workers of the 3 workers that left by _exit wrote, not 3"
    # each wrote the CPU time it says it computed, sampled or not (at least
    # half of it: samples estimate it; a lost profile holds none)
    begun_s=$(awk '/^begun_ms/ { print $2 / 2000 }' "$tmp/out")
    [ -n "$begun_s" ] || fail "$how: the workload did not say how long its workers computed"
    short=$(rows "$db" "SELECT COUNT(*) FROM run r WHERE exit_reason = '_exit' AND
        (SELECT COALESCE(SUM(m.work_s), 0) FROM metric m JOIN thread t ON t.id = m.thread_id
         WHERE t.run_id = r.id) < $begun_s")
    [ "$short" = 0 ] || fail "$how: $short workers' profiles hold less than their $begun_s s of work"
    [ "$(rows "$db" "SELECT value FROM meta WHERE key = 'processes_unwritten'")" = 1 ] ||
        fail "$how: meta processes_unwritten is not 1"
    "$LOCKBLAME_CLI" report "$db" >"$tmp/report.txt" || fail "$how: report exited $?"
    grep -q "^unwritten: $said" "$tmp/report.txt" || fail "$how: no unwritten: line in the header"
    [ ! -e "$db-procs" ] || fail "$how: the ledger was left beside the database"
done
# A write that fails (here: the file size limit, below the database's
# first pages and above the ledger's size) is counted too, never silently
# done. In a tree whose summary its root or lockblame run prints, the
# failed processes leave their line to it: the summary counts them with
# the killed worker and says why once, and the first of them says its own
# (every process said its own line, and a full disk gave one per
# process: hundreds). With LOCKBLAME_QUIET=0
# each process says its own line again, and the summary says so.
for how in preload each run; do
    db=$tmp/full-$how.db
    case $how in
    preload | each)
        quiet=1
        [ $how = each ] && quiet=0
        (ulimit -f 100 && trap '' XFSZ &&
            LOCKBLAME_QUIET=$quiet LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" \
                >"$tmp/out" 2>"$tmp/err") ||
            fail "full, $how: workload exited $?: $(cat "$tmp/err")"
        ;;
    run)
        (ulimit -f 100 && trap '' XFSZ &&
            "$LOCKBLAME_CLI" run -o "$db" -- "$W" >"$tmp/out" 2>"$tmp/err") ||
            fail "full, $how: run exited $?: $(cat "$tmp/err")"
        grep -q '^lockblame: no profile was written: the processes that recorded something could not write it' "$tmp/err" ||
            fail "full, $how: run does not say why no profile was written"
        ;;
    esac
    cat "$tmp/err"
    said=$(grep -c "^lockblame: cannot write profile $db" "$tmp/err" || true)
    summary=$(grep "^lockblame: [0-9]* processes of the tree ended without writing their profile: 1 killed before writing it" "$tmp/err")
    [ -n "$summary" ] || fail "full, $how: no summary counts the killed worker"
    failed=$(echo "$summary" | sed -n 's/.*; \([0-9]*\) whose write failed.*/\1/p')
    total=$(echo "$summary" | sed -n 's/^lockblame: \([0-9]*\) processes.*/\1/p')
    # (a worker's write may still fit under the limit: at least one fails)
    [ -n "$failed" ] && [ "$failed" -ge 1 ] && [ "$total" = $((failed + 1)) ] ||
        fail "full, $how: the summary does not count the failed writes and the killed worker: $summary"
    if [ $how = each ]; then
        [ "$said" = "$failed" ] || fail "full, $how: $said processes said they could not write, the summary counts $failed"
        echo "$summary" | grep -q "whose write failed (each said why in a lockblame: line)" ||
            fail "full, $how: the summary does not say each said why"
    else
        # the first failed process's line and the root's own at most
        # (lockblame run's root writes nothing)
        most=2
        [ $how = run ] && most=1
        [ "$said" -le $most ] && [ "$said" -ge 1 ] ||
            fail "full, $how: $said processes said they could not write, not the first and the root"
        echo "$summary" | grep -qE "whose write failed \((disk I/O error|database or disk is full)(, the first of them)?\)" ||
            fail "full, $how: the summary does not say why the writes failed"
    fi
    [ ! -e "$db-procs" ] || fail "full, $how: the ledger was left beside the database"
done
# A tree whose processes all wrote says nothing of the kind.
LOCKBLAME_OUTPUT=$tmp/all.db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/prefork_shared" mutex \
    >/dev/null 2>"$tmp/err" || fail "prefork_shared failed"
! grep 'without writing' "$tmp/err" || fail "a lost process said where none was"
"$LOCKBLAME_CLI" report "$tmp/all.db" >"$tmp/report.txt" || fail "report exited $?"
! grep '^unwritten:' "$tmp/report.txt" || fail "an unwritten: line where all wrote"
echo PASS
