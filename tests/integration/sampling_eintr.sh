#!/usr/bin/env bash
# Sampling interrupts no system call of the program (docs/DESIGN.md "Never change
# the program's behaviour"): eintr_pingpong (-O2) hands a token between two
# threads through sem_wait and through poll on pipes and counts the EINTRs
# it sees; natively 0. Preloaded with the default mechanism, the timer and
# task-clock (where perf_event opens): the same output. Counting kernel
# time with a perf event made poll return EINTR; the timer samples kernel
# time through task work on the way back to user mode.
. "$(dirname "$0")/../lib/common.sh"
W=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
need "$LOCKBLAME_LIB" "$W/eintr_pingpong"

"$W/eintr_pingpong" >"$tmp/nat" || fail "native run exited $?"
echo "  native: $(cat "$tmp/nat")"
for ev in default timer task-clock; do
    envs=(LOCKBLAME_OUTPUT="$tmp/$ev.db")
    [ "$ev" = default ] || envs+=(LOCKBLAME_EVENT="$ev")
    rc=0
    env "${envs[@]}" LD_PRELOAD="$LOCKBLAME_LIB" "$W/eintr_pingpong" >"$tmp/$ev" 2>"$tmp/$ev.err" || rc=$?
    if [ "$ev" = task-clock ] && grep -q 'cannot sample task-clock' "$tmp/$ev.err"; then
        skip_part "perf_event for task-clock"
        continue
    fi
    echo "  $ev: $(cat "$tmp/$ev")"
    [ "$rc" = 0 ] || bad "$ev: exited $rc"
    cmp -s "$tmp/nat" "$tmp/$ev" || bad "$ev: $(cat "$tmp/$ev") (native: $(cat "$tmp/nat"))"
done
echo "$errors problem(s)"
finish
