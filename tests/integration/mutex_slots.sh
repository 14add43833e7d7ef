#!/usr/bin/env bash
# Mutexes blamed by holder samples take one of 64 slots (src/blame/
# mutex_sampled.h); a hot mutex that finds none stays exact, and the report
# header says how many did (meta sampled_mutex_no_slot).
# tests/workloads_user/many_contended.c contends N = 80 mutexes once each,
# every wait made while the other thread holds the lock.
#  - LOCKBLAME_MUTEX=sampled: every contention asks for a slot, so 64
#    mutexes have their one wait sampled and 16 stay exact (sampled_waits
#    0, contended 1); meta sampled_mutex_no_slot is 16 and the header has
#    the note with that number.
#  - The default (auto): no mutex turns hot, no slot is missed, no note.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/many_contended
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"
N=80
SLOTS=64

for mode in sampled auto; do
    rm -f "$tmp/$mode.db"
    LOCKBLAME_MUTEX=$mode LOCKBLAME_OUTPUT="$tmp/$mode.db" preloaded "$W" $N >"$tmp/$mode.out" \
        || fail "$mode: workload exited $?"
    [ "$(cat "$tmp/$mode.out")" = "contended $N" ] || fail "$mode: output $(cat "$tmp/$mode.out")"
    missed=$(rows "$tmp/$mode.db" "SELECT value FROM meta WHERE key = 'sampled_mutex_no_slot'")
    read -r mutexes sampled exact <<<"$(rows "$tmp/$mode.db" "SELECT COUNT(*), SUM(sampled_waits > 0),
        SUM(sampled_waits = 0 AND contended = 1) FROM sync_object WHERE object = 'mutex'" | tr '|' ' ')"
    note=$("$LOCKBLAME_CLI" report -n 1 "$tmp/$mode.db" | grep '^note: .*hot mutex' || true)
    echo "$mode: $mutexes contended mutexes, $sampled sampled, $exact exact; slots missed: $missed"
    echo "  ${note:-(no note)}"
    [ "$mutexes" -eq $N ] || fail "$mode: $mutexes mutexes in sync_object, want $N"
    if [ $mode = sampled ]; then
        want=$((N - SLOTS))
        [ "$missed" = "$want" ] || fail "sampled: meta sampled_mutex_no_slot $missed, want $want"
        [ "$sampled" -eq $SLOTS ] && [ "$exact" -eq "$want" ] \
            || fail "sampled: $sampled sampled and $exact exact mutexes, want $SLOTS and $want"
        grep -q "^note: *$want hot mutex(es) stayed exact: all $SLOTS slots" <<<"$note" \
            || fail "sampled: the header has no note on the $want mutexes without a slot"
    else
        [ "$missed" = 0 ] || fail "auto: meta sampled_mutex_no_slot $missed, want 0"
        [ "$sampled" -eq 0 ] || fail "auto: $sampled sampled mutexes, want 0 (none is hot)"
        [ -z "$note" ] || fail "auto: a note on missed slots, with none missed"
    fi
done
echo "PASS"
