#!/usr/bin/env bash
# Sampled spin waits are counted in the waiting thread's own record and
# reach the lock's record when the thread waits on another lock, exits, or
# at the final write (src/blame/spin_sampled.h). tests/workloads_user/
# spin_counts.c forces K contended waits on each of 3 spin locks: one
# thread switches from lock 0 to lock 1 and exits, another waits on lock 2
# and is still alive (blocked in a cond wait) when the process exits.
#  - LOCKBLAME_SPIN=sampled: each lock's sync_object row has contended = K
#    and sampled_waits = K, and the spin lock sites' contended counts (kept
#    apart, in the per-thread site tables) add up to the same 3K.
#  - LOCKBLAME_SPIN=exact: contended = K on each lock, none sampled (the
#    workload's premise, checked without samples).
# A waiter kept off its CPU for the 2 ms the lock is held may not wait at
# all: a run whose counts are all consistent but short of K is the
# workload missing its premise, and is run again (up to 3 runs).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/spin_counts
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"
K=20

# run MODE: one run; prints "locks contended sampled sites" per lock set.
run() {
    local mode=$1 db=$tmp/$1.db
    rm -f "$db"
    LOCKBLAME_SPIN=$mode LOCKBLAME_OUTPUT="$db" preloaded "$W" $K >"$tmp/$mode.out" \
        || fail "$mode: workload exited $?"
    [ "$(cat "$tmp/$mode.out")" = "waits $K per lock, 3 locks" ] || fail "$mode: output $(cat "$tmp/$mode.out")"
    per_lock=$(rows "$db" "SELECT contended || ' ' || sampled_waits FROM sync_object
                           WHERE object = 'spin' AND address IS NOT NULL ORDER BY address")
    sites=$(rows "$db" "SELECT COALESCE(SUM(contended), 0) FROM site WHERE object = 'spin'")
    echo "$mode: per lock (contended sampled): $(tr '\n' ',' <<<"$per_lock") sites' contended $sites"
}

for mode in sampled exact; do
    for attempt in 1 2 3; do
        run $mode
        [ "$(wc -l <<<"$per_lock")" -eq 3 ] || fail "$mode: $(wc -l <<<"$per_lock") contended spin locks, want 3"
        total=0 sampled_total=0 short=0
        while read -r contended sampled; do
            total=$((total + contended)) sampled_total=$((sampled_total + sampled))
            if [ $mode = sampled ]; then
                [ "$sampled" -eq "$contended" ] || fail "sampled: $sampled sampled of $contended contended waits on one lock"
            else
                [ "$sampled" -eq 0 ] || fail "exact: $sampled sampled waits"
            fi
            [ "$contended" -le $K ] || fail "$mode: $contended contended waits on one lock, more than the $K made"
            [ "$contended" -eq $K ] || short=1
        done <<<"$per_lock"
        [ "$sites" -eq "$total" ] || fail "$mode: the sites count $sites contended spin waits, the locks $total"
        [ $short = 0 ] && break
        [ $attempt -lt 3 ] || fail "$mode: fewer than $K waits on a lock in 3 runs"
        echo "  a waiter did not wait every time (descheduled?): once more"
    done
done
echo "PASS"
