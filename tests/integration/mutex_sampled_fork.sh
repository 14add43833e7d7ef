#!/usr/bin/env bash
# A hot mutex blamed by holder samples in a parent and in its fork child
# (tests/workloads_user/fork_hot.c, LOCKBLAME_MUTEX=sampled): the child's
# samples owe blame as the parent's do. The cap on what a slot's samples
# owe (src/blame/mutex_sampled.h) counts against the waits recorded; a
# fork child drains the parent's waits, and must forget its charges too:
# without that, the child's blame was 0.04-0.06 s of 0.4 s of waits.
# The traders run until they have used 0.4 s of CPU in each process. One
# always waits while the other holds, and the samples see a holder only
# while it runs: what they can owe is the holders' CPU time (on a quiet
# machine about the wait; beside busy processes, which keep preempted
# holders off the CPU, a fraction of it: that part is hand-off).
#  - each process: a wait of more than 0.1 s; blame >= half the smaller of
#    its wait and its threads' CPU time (the samples see ~80-90% of it,
#    quiet or loaded), and <= its wait.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/fork_hot
need "$LOCKBLAME_LIB" "$W"

LOCKBLAME_MUTEX=sampled LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" 0.4 >"$tmp/out" 2>"$tmp/err" \
    || { cat "$tmp/err"; fail "the workload exited $?"; }
for who in parent child; do
    pid=$(awk -v k="${who}_pid" '$1 == k { print $2 }' "$tmp/out")
    [ -n "$pid" ] || fail "no $who pid in: $(cat "$tmp/out")"
    read -r wait blame cpu <<<"$(rows "$tmp/out.db" "SELECT wait_s, blame_s,
            (SELECT SUM(cpu_s) FROM thread WHERE thread.run_id = sync_object.run_id) FROM sync_object
        WHERE object = 'mutex' AND run_id = (SELECT id FROM run WHERE pid = $pid)" | tr '|' ' ')"
    echo "$who (pid $pid): wait ${wait:-none} s, blame ${blame:-none} s, threads' CPU ${cpu:-none} s"
    [ -n "$wait" ] || fail "$who: no mutex record"
    awk -v w="$wait" -v b="$blame" -v c="$cpu" \
        'BEGIN { m = w < c ? w : c; exit !(w > 0.1 && b >= 0.5 * m && b <= w * 1.01 + 1e-6) }' ||
        fail "$who: blame $blame s for a wait of $wait s, CPU $cpu s (want half the smaller or more, and no more than the wait)"
done
echo "PASS"
