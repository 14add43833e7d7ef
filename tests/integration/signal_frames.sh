#!/usr/bin/env bash
# A sample taken in a signal handler keeps the path the signal
# interrupted: the unwinder walks through the kernel's signal frame
# (glibc's __restore_rt) and leaves a frame named for the signal between
# the handler and the interrupted code. sig_handler_work's worker computes
# in compute_loop -> compute while it takes SIGUSR1s, whose handler
# on_sigusr1 computes in handler_work. Every sampled path through the
# handler must read ...compute_loop[;compute];[signal SIGUSR1];on_sigusr1...,
# with both the default CPU-time timer and task-clock (the perf backend).
# Each handler run spends 12 ms of CPU time (the workload measures it and
# prints the least): where that is more than a sampling period plus a
# scheduler tick (10 ms at HZ 100; a CPU-time timer is checked at ticks),
# every run spans a sample, and the handler must have samples.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/sig_handler_work"

check_event() {
    local event=$1 db=$tmp/$1.db
    if [ "$event" = default ]; then
        LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/sig_handler_work" \
            >"$tmp/out" 2>"$tmp/err" || fail "$event: workload failed: $(cat "$tmp/err")"
    else
        LOCKBLAME_EVENT=$event LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB \
            "$WORKLOADS_USER/sig_handler_work" >"$tmp/out" 2>"$tmp/err" ||
            fail "$event: workload failed: $(cat "$tmp/err")"
    fi
    cat "$tmp/out"
    least=$(sed -n 's/.* the least for \([0-9]*\) us of CPU.*/\1/p' "$tmp/out")
    [ -n "$least" ] && [ "$least" -ge 12000 ] ||
        fail "$event: a handler run spent less than 12 ms of CPU: $(cat "$tmp/out")"
    ns_per_sample=$(rows "$db" "SELECT CAST(ns_per_sample AS INTEGER) FROM run")
    [[ $ns_per_sample =~ ^[0-9]+$ ]] || fail "$event: no sampling period in the run table"
    need_samples=0
    [ "$ns_per_sample" -le $((least * 1000 - 10000000)) ] && need_samples=1
    "$LOCKBLAME_CLI" report --format folded --metric work "$db" >"$tmp/folded" ||
        fail "$event: report failed"
    python3 - "$tmp/folded" "$event" "$need_samples" <<'PY' || fail "$event: paths through the handler"
import re, sys
path, event, need_samples = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
good = bad = 0
for line in open(path):
    stack, _, value = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if "on_sigusr1" not in frames:
        continue
    i = frames.index("on_sigusr1")
    below = frames[:i]
    ok = (i >= 2 and below[-1] == "[signal SIGUSR1]" and "compute_loop" in below
          and not any(f.startswith("libc.so") for f in frames))
    if ok:
        good += int(value)
    else:
        bad += int(value)
        print("cut or wrong path: %s (%s)" % (stack, value))
print("%s: %d through the handler with the interrupted path below, %d without" % (event, good, bad))
if not need_samples:
    print("%s: a sampling period too long for the handler's runs to span one: samples not required" % event)
sys.exit(0 if (good > 0 or not need_samples) and bad == 0 else 1)
PY
}

check_event default
check_event task-clock
echo PASS
