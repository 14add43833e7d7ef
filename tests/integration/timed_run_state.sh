#!/usr/bin/env bash
# A run of timed waits (docs/DESIGN.md rule 3) goes on only on the same
# object in the same process: tests/workloads/timed_run_state.c lets a
# 200 ms timed wait run out, then waits on a cond that a thread signals 20
# ms later, after a fork (both processes wait; the child inherits the
# waiting thread's note of its run) or on a fresh cond after destroying
# the first (whose lockblame record the fresh one may reuse). After the
# fork the parent's run goes on (the same object, right after), but the
# child's wait is its own: no process's cond blame exceeds its own cond
# waits (the child was blamed its parent's 200 ms). After the reuse no
# signal is blamed the first cond's 200 ms: the cond blame stays within 5
# ms of the signalled wait (which the workload prints). And the cond rows
# conserve (blame + hand-off + unattributed = waits). Exact and with
# LOCKBLAME_COND=sampled.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/timed_run_state
need "$W" "$LOCKBLAME_LIB"
for mode in fork reuse; do
    for cond in exact sampled; do
        db=$tmp/$mode-$cond.db
        rm -f "$db"
        LOCKBLAME_COND=$cond LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" $mode \
            >"$tmp/out" 2>"$tmp/err" || { bad "$mode/$cond: workload failed: $(cat "$tmp/err")"; continue; }
        waited=$(awk '$1 == "waited" { s += $2 } END { printf "%.6f", s }' "$tmp/out")
        n=$(grep -c '^waited' "$tmp/out")
        got=$(rows "$db" "SELECT printf('%.6f', TOTAL(blame_s)), printf('%.6f', TOTAL(wait_s)),
                 printf('%.6f', TOTAL(blame_s) + TOTAL(handoff_s) + TOTAL(unattributed_s))
                 FROM sync_object WHERE object = 'cond'")
        IFS='|' read -r blame wait sum <<<"$got"
        echo "  $mode/$cond: cond blame $blame s, waits $wait s (= $sum), the $n signalled waits $waited s"
        if [ $mode = reuse ]; then
            awk -v b="$blame" -v w="$waited" 'BEGIN { exit !(b <= w + 0.005) }' ||
                bad "$mode/$cond: cond blame $blame s beyond the signalled wait's $waited s (a run went on)"
        else
            over=$(rows "$db" "SELECT COUNT(*) FROM (SELECT run_id FROM sync_object WHERE object = 'cond'
                     GROUP BY run_id HAVING TOTAL(blame_s) > TOTAL(wait_s) + 1e-6)")
            runs=$(rows "$db" "SELECT COUNT(DISTINCT run_id) FROM sync_object WHERE object = 'cond'")
            echo "  $mode/$cond: $runs processes with cond rows, $over blamed beyond their own waits"
            [ "$runs" = 2 ] || bad "$mode/$cond: $runs processes with cond rows, not 2"
            [ "$over" = 0 ] || bad "$mode/$cond: $over process(es) blamed beyond their own waits (a run went on in the child)"
        fi
        awk -v s="$sum" -v w="$wait" 'BEGIN { d = s - w; if (d < 0) d = -d; exit !(d <= 1e-6 * w + 1e-6) }' ||
            bad "$mode/$cond: cond rows do not conserve: $sum vs $wait"
    done
done
echo "$errors problem(s)"
[ $errors -eq 0 ]
