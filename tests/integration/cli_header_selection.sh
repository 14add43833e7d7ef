#!/usr/bin/env bash
# The report header of a process tree adds up over the processes it
# covers, line by line: with --pid (or --comm) selecting one process of
# prefork_sem's tree, the sampling: line counts that process's samples
# (the event: line's), and the unsampled: line its threads' CPU time
# credited to lockblame_unsampled_cpu, not the whole database's; without a
# selection both are the tree's.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/prefork_sem"
db=$tmp/tree.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/prefork_sem" >/dev/null 2>"$tmp/err" ||
    fail "workload failed: $(cat "$tmp/err")"
[ "$(rows "$db" "SELECT COUNT(*) FROM run")" -ge 4 ] || fail "not a tree: $(rows "$db" "SELECT COUNT(*) FROM run")"

# check_header REPORT_ARGS... -- RUN_FILTER (SQL on run r)
check_header() {
    local filter=${*: -1}
    "$LOCKBLAME_CLI" report "${@:1:$#-1}" "$db" >"$tmp/report" || fail "report $*"
    local event taken want_samples unsampled want_unsampled
    event=$(sed -n 's/^event: .*, \([0-9]*\) samples (.*/\1/p' "$tmp/report")
    taken=$(sed -n 's/^sampling: .*; \([0-9]*\) taken, .*/\1/p' "$tmp/report")
    want_samples=$(rows "$db" "SELECT SUM(samples) FROM run r WHERE $filter")
    [ "$event" = "$want_samples" ] && [ "$taken" = "$want_samples" ] ||
        fail "$*: event: $event, sampling: $taken taken; the processes' rows: $want_samples"
    unsampled=$(sed -n 's/^unsampled: \([0-9.]*\) s of CPU time in \([0-9]*\) thread.*/\1 \2/p' "$tmp/report")
    want_unsampled=$(rows "$db" "SELECT printf('%.3f', SUM(m.work_s)) || ' ' || COUNT(DISTINCT m.thread_id)
        FROM metric m JOIN node n ON n.id = m.node_id JOIN frame f ON f.id = n.frame_id
        JOIN thread t ON t.id = m.thread_id JOIN run r ON r.id = t.run_id
        WHERE f.function = 'lockblame_unsampled_cpu' AND m.work_s > 0 AND $filter")
    case $want_unsampled in " 0" | "0.000 0" | "") want_unsampled= ;; esac
    [ "$unsampled" = "$want_unsampled" ] ||
        fail "$*: unsampled: '$unsampled', the selected threads' credit: '$want_unsampled'"
    echo "ok: $* -> $taken samples, unsampled '${unsampled:-none}'"
}

pid=$(rows "$db" "SELECT pid FROM run ORDER BY samples DESC LIMIT 1")
check_header --pid "$pid" "r.pid = $pid"
check_header "1"
echo PASS
