#!/usr/bin/env bash
# A main thread that leaves by pthread_exit while a worker runs on
# (tests/workloads/main_pthread_exit.c): its thread row ends where main
# called pthread_exit, not at the process's end, and its unseen time is
# not the worker's run after it; the program's output and exit status are
# a native run's. Truth: main's run to its pthread_exit call (main_s) and
# the worker's run after that call (after_s), as the workload measures
# them. Sampled and without sampling (the exit write's quiesce reads
# live threads' clocks either way). The process, whose leader is a zombie
# while the worker runs and writes, is not counted killed
# (common/ledger.c).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/main_pthread_exit
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

native_rc=0
"$W" "$tmp/native.truth" >"$tmp/native.out" || native_rc=$?
[ "$native_rc" = 0 ] || fail "the workload exits $native_rc natively"

for mode in sampled unsampled; do
    settings=()
    [ $mode = unsampled ] && settings=(LOCKBLAME_EVENT=none)
    rc=0
    env "${settings[@]}" LOCKBLAME_OUTPUT="$tmp/$mode.db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$W" "$tmp/$mode.truth" >"$tmp/$mode.out" 2>"$tmp/$mode.err" || rc=$?
    [ "$rc" = "$native_rc" ] || bad "$mode: exit status $rc, natively $native_rc"
    cmp -s "$tmp/native.out" "$tmp/$mode.out" ||
        bad "$mode: output differs from the native run's: $(head -c 400 "$tmp/$mode.out")"
    # The process, its leader a zombie while the worker writes, wrote its
    # profile: it is not counted among those killed before or while writing.
    ! grep -q "without writing" "$tmp/$mode.err" ||
        bad "$mode: the summary counts the process unwritten: $(grep "without writing" "$tmp/$mode.err")"
    [ -s "$tmp/$mode.truth" ] || { bad "$mode: the workload wrote no truth"; continue; }
    # main: the thread without a start routine; the worker: the other one.
    figures=$(rows "$tmp/$mode.db" "SELECT m.start_s, m.end_s, m.unseen_s, w.end_s
        FROM thread m, thread w WHERE m.start_frame_id IS NULL
        AND w.start_frame_id IS NOT NULL")
    echo "$mode: truth (main_s after_s): $(cat "$tmp/$mode.truth"); main start|end|unseen, worker end: $figures"
    python3 - "$mode" "$(cat "$tmp/$mode.truth")" "$figures" <<'PY' || bad "$mode: main's row (above)"
import sys
mode, truth, figures = sys.argv[1], sys.argv[2].split(), sys.argv[3].split("|")
main_s, after_s = float(truth[0]), float(truth[1])
if len(figures) != 4 or "" in figures:
    sys.exit(f"{mode}: no main and worker rows: {figures}")
start, end, unseen, worker_end = (float(x) for x in figures)
ok = True
def check(cond, what):
    global ok
    if not cond:
        print(f"{mode}: {what}")
        ok = False
# main lived at least to its pthread_exit call (its row starts before main())
check(end - start >= main_s - 0.005, f"main's row spans {end - start:.4f} s, main ran {main_s:.4f} s")
# and ended there, not when the worker (and the process) did
check(worker_end - end >= after_s / 2,
      f"main's row ends {worker_end - end:.4f} s before the worker's, which ran {after_s:.4f} s after main's exit")
check(unseen < after_s / 2, f"main's unseen_s {unseen:.4f} s holds the worker's run after it ({after_s:.4f} s)")
sys.exit(0 if ok else 1)
PY
done
finish
