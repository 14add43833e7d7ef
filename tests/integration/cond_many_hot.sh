#!/usr/bin/env bash
# More hot conds than slots for sharded waits (src/blame/signal_waits.h:
# 64), destroyed and re-initialized between rounds
# (tests/workloads_user/hot_conds.c, gcc -O2 -g: 80 conds x 3 rounds, 40
# waits on each).
# Under LOCKBLAME_COND=sampled every cond turns sampled at its first
# signal with a waiter: 64 take a slot and 16 keep the meta path, and each
# round's destroys free the slots for the next round. Against the
# workload's own count and timing of its waits, in each mode:
#  - every cond that had a wait has its record (one per cond and round:
#    the workload counts the conds it waited on, 240 on an idle machine,
#    fewer beside busy processes, where the waiter often finds its flag
#    already raised);
#  - every cond wait is counted once (sync_object.contended summed over
#    the conds = the workload's waits), and under sampled all of them as
#    sampled waits;
#  - the waits' time is the workload's (85-102%: the workload's clock
#    reads are outside the wrapper);
#  - no cond is blamed more than it accrued (blame + hand-off <= wait).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/hot_conds
need "$LOCKBLAME_LIB" "$W"

for mode in sampled exact auto; do
    echo "== LOCKBLAME_COND=$mode"
    LOCKBLAME_COND=$mode LOCKBLAME_OUTPUT=$tmp/$mode.db LD_PRELOAD=$LOCKBLAME_LIB \
        "$W" 80 3 40 >"$tmp/$mode.out" 2>"$tmp/$mode.err" || bad "$mode: workload exited $?"
    waits=$(awk '$1 == "waits" { print $2 }' "$tmp/$mode.out")
    wait_ns=$(awk '$1 == "wait_ns" { print $2 }' "$tmp/$mode.out")
    conds_waited=$(awk '$1 == "conds_waited" { print $2 }' "$tmp/$mode.out")
    read -r objects contended sampled wait_s over <<<"$(rows "$tmp/$mode.db" \
        "SELECT COUNT(*), SUM(contended), SUM(sampled_waits), SUM(wait_s),
                SUM(blame_s + handoff_s > wait_s * 1.0001 + 1e-9)
         FROM sync_object WHERE object = 'cond'" | tr '|' ' ')"
    echo "  workload: $waits waits on $conds_waited conds, $wait_ns ns; profile: $objects conds," \
        "$contended waits ($sampled sampled), $wait_s s; over-blamed conds: $over"
    [ -n "$conds_waited" ] && [ "$objects" = "$conds_waited" ] ||
        bad "$mode: $objects cond records, want the $conds_waited conds waited on (of 80 conds x 3 rounds)"
    [ -n "$waits" ] && [ "$contended" = "$waits" ] || bad "$mode: $contended waits counted, the workload made $waits"
    case $mode in
        sampled) [ "$sampled" = "$contended" ] || bad "sampled: $sampled of $contended waits sampled" ;;
        exact) [ "$sampled" = 0 ] || bad "exact: $sampled waits sampled" ;;
    esac
    awk -v w="$wait_s" -v t="$wait_ns" 'BEGIN { r = w * 1e9 / t; printf "  wait time %.1f%% of the workload'\''s\n", r * 100
        exit !(r >= 0.85 && r <= 1.02) }' || bad "$mode: wait time $wait_s s against the workload's $wait_ns ns"
    [ "$over" = 0 ] || bad "$mode: $over conds blamed more than they accrued"
done

echo "$errors problem(s)"
[ $errors -eq 0 ]
