#!/usr/bin/env bash
# Work in a periodic timer's handler is sampled in its share. The default
# sampler without a PMU (the CPU-time timer) fires at the kernel tick; a
# SIGALRM every 4 ms keeps a fixed phase against it, and the handler's
# work came out at 7% of its truth. Once the program arms a periodic
# timer, lockblame samples with task-clock at random periods instead, and
# says so. periodic_alarm measures its handler's CPU time itself; in each
# of five runs the work sampled under on_alarm must lie between LOW and
# HIGH times that truth: 0.4 and 2.5 here, which holds on a loaded VM,
# where task-clock itself loses samples around preemptions (-39% seen
# beside two busy loops); tests/slow/periodic_timer_accuracy.sh asks for
# 15% on a quiet machine. An explicit LOCKBLAME_EVENT=timer is left alone.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/periodic_alarm"
LOW=${PERIODIC_LOW:-0.4}
HIGH=${PERIODIC_HIGH:-2.5}
read -r -a ARGS <<<"${PERIODIC_ARGS:-}" # the workload's CPU seconds and handler work
"$LOCKBLAME_CLI" events >"$tmp/events" 2>&1 || true
grep -q '^\* task-clock' "$tmp/events" || { echo "SKIP: needs perf_event's task-clock"; exit 77; }

handler_share() { # DB: work sampled under on_alarm, in seconds
    "$LOCKBLAME_CLI" report --format folded --metric work "$1" |
        awk '/(^|;)on_alarm(;|$)/ { s += $NF } END { printf "%.6f\n", s / 1e6 }'
}

for run in 1 2 3 4 5; do
    db=$tmp/run$run.db
    LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/periodic_alarm" "${ARGS[@]}" \
        >"$tmp/out" 2>"$tmp/err" || fail "run $run: workload failed: $(cat "$tmp/err")"
    grep -q '^lockblame: the program arms a periodic timer (setitimer(ITIMER_REAL), every 4 ms)' \
        "$tmp/err" || fail "run $run: no line about the switch: $(cat "$tmp/err")"
    truth=$(awk '{ print $2 }' "$tmp/out")
    sampled=$(handler_share "$db")
    "$LOCKBLAME_CLI" report "$db" >"$tmp/report" || fail "run $run: report failed"
    grep -q '^sampling: perf_event (switched from the CPU-time timer' "$tmp/report" ||
        fail "run $run: the header does not say sampling switched"
    python3 -c "import sys; t, s, lo, hi = map(float, sys.argv[1:3] + sys.argv[4:6]); print('run %s: on_alarm sampled %.3f s, truth %.3f s (%+.0f%%)' % (sys.argv[3], s, t, 100 * (s / t - 1))); sys.exit(0 if t > 0 and lo * t <= s <= hi * t else 1)" \
        "$truth" "$sampled" "$run" "$LOW" "$HIGH" || fail "run $run: handler work off its truth (want $LOW to $HIGH times)"
done

# An event the user chose stays.
LOCKBLAME_EVENT=timer LOCKBLAME_OUTPUT=$tmp/timer.db LD_PRELOAD=$LOCKBLAME_LIB \
    "$WORKLOADS_USER/periodic_alarm" >"$tmp/out" 2>"$tmp/err" || fail "timer run failed"
grep -q 'periodic timer' "$tmp/err" && fail "switched an event the user requested: $(cat "$tmp/err")"
"$LOCKBLAME_CLI" report "$tmp/timer.db" >"$tmp/report" || fail "timer report failed"
grep -q '^sampling: timer (requested)' "$tmp/report" ||
    fail "LOCKBLAME_EVENT=timer: header: $(grep '^sampling' "$tmp/report")"
echo PASS
