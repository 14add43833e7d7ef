#!/usr/bin/env bash
# A thread that blocks and unblocks the sampling signal again and again
# (docs/DESIGN.md "The program's signals"): sig_mask_flips (-O2) computes
# in first_work, then six times blocks every signal, computes in
# blocked_work, asks for a pending signal with a zero timeout, unblocks
# and computes in free_work; in the third round the main thread takes
# SIGRTMIN+5, lockblame's default sampling signal, and the last three
# rounds compute in moved_work on the signal sampling moved to. With the
# timer, a perf event where one opens, and the default event:
#   - the output reads as natively (each zero-timeout wait finds nothing:
#     no sampling signal is queued while the thread blocks it, nor after
#     the move), the exit status too, one line saying where sampling moved;
#   - the CPU time of the blocked stretches is credited as unsampled
#     (meta unsampled_blocked_cpu_s, 90-110% of what the thread measured);
#   - sampling resumes after each unblock: the work on free_work's and on
#     moved_work's calling paths is at least half the CPU time each
#     measured (a thread whose event stayed paused would show none).
. "$(dirname "$0")/../lib/common.sh"
W=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
need "$LOCKBLAME_LIB" "$W/sig_mask_flips"
command -v sqlite3 >/dev/null 2>&1 || skip sqlite3

# truth FILE NAME: the CPU seconds the workload printed for NAME
truth() { awk -v n="$2" '$1 == "cpu_s" && $2 == n { print $3 }' "$1"; }
# on_path DB FUNCTION: work on the calling paths through FUNCTION
on_path() {
    rows "$1" "WITH RECURSIVE under(id) AS (
                 SELECT n.id FROM node n JOIN frame f ON f.id = n.frame_id WHERE f.function = '$2'
                 UNION SELECT c.id FROM node c JOIN under u ON c.parent_id = u.id)
               SELECT coalesce(sum(m.work_s), 0) FROM metric m WHERE m.node_id IN (SELECT id FROM under)"
}
# within LO HI VALUE TRUTH: VALUE / TRUTH in [LO, HI]
within() { awk -v lo="$1" -v hi="$2" -v v="$3" -v t="$4" 'BEGIN { exit !(t > 0 && v >= lo * t && v <= hi * t) }'; }

rc_nat=0
"$W/sig_mask_flips" >"$tmp/nat" || rc_nat=$?
sed 's/^/  native: /' "$tmp/nat"
[ "$rc_nat" = 0 ] || bad "native run exited $rc_nat"

for ev in timer task-clock default; do
    echo "== LOCKBLAME_EVENT=$ev"
    under_event "$ev" "$W/sig_mask_flips" || continue
    [ "$event_rc" = "$rc_nat" ] || bad "$ev: exit $event_rc, native $rc_nat"
    diff <(grep -v '^cpu_s ' "$tmp/nat") <(grep -v '^cpu_s ' "$tmp/$ev.out") || bad "$ev: output differs from the native run"
    grep -v '^lockblame:' "$tmp/$ev.err" && bad "$ev: stderr other than lockblame: lines"
    n=$(grep -c '^lockblame: .*sampling moved to signal' "$tmp/$ev.err" || true)
    [ "$n" = 1 ] || bad "$ev: expected one line saying where sampling moved, got $n"
    db=$tmp/$ev.db
    [ -s "$db" ] || { bad "$ev: no profile"; continue; }
    echo "  $(rows "$db" "SELECT group_concat(key || ' ' || value, ', ') FROM meta
                          WHERE key IN ('sampling_mechanism', 'samples_taken', 'unsampled_blocked_cpu_s')")"
    blocked=$(truth "$tmp/$ev.out" blocked_stretches)
    credited=$(rows "$db" "SELECT value FROM meta WHERE key = 'unsampled_blocked_cpu_s'")
    echo "  blocked stretches: CPU $blocked s (the thread's clock), credited unsampled $credited s"
    within 0.9 1.1 "$credited" "$blocked" || bad "$ev: $credited s credited unsampled for $blocked s of blocked CPU time"
    for f in free_work moved_work; do
        cpu=$(truth "$tmp/$ev.out" $f)
        work=$(on_path "$db" $f)
        echo "  $f: CPU $cpu s, work on its paths $work s"
        within 0.5 1.1 "$work" "$cpu" || bad "$ev: $f: work $work s for $cpu s of CPU time: not sampled after unblocking"
    done
done

echo "$errors problem(s)"
finish
