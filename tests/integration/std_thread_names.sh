#!/usr/bin/env bash
# std::threads started in a shared library (tests/workloads_user/
# std_threads.cc and lib/std_threads_lib.cc), which only sleep, so that no
# sample or wait of theirs tells what they ran: --by-thread names each by
# the function it was given (std_threads_lib::flush_worker) or, for a
# lambda, by the state that runs it, whose name holds the lambda's
# enclosing function (start_workers), never by libstdc++'s thread start
# (execute_native_thread_routine, an offset in a stripped libstdc++:
# db_bench's threads all read libstdc++.so.6.0.30+0xd4490).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/std_threads
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$W"
LOCKBLAME_OUTPUT=$tmp/std.db LD_PRELOAD=$LOCKBLAME_LIB "$W" 2>"$tmp/err" ||
    fail "workload exited $?: $(cat "$tmp/err")"
"$LOCKBLAME_CLI" report --by-thread --format json "$tmp/std.db" >"$tmp/threads.json" ||
    fail "report exited $?"
python3 - "$tmp/threads.json" <<'PY' || fail "std::threads not named by what they ran"
import json, sys
names = [r["start_routine"] for r in json.load(open(sys.argv[1]))]
print("start routines:", names)
ok = any(n.startswith("std_threads_lib::flush_worker") for n in names) and \
     any("start_workers()::{lambda" in n for n in names) and \
     not any("libstdc++" in n or "execute_native_thread_routine" in n for n in names)
sys.exit(0 if ok else 1)
PY
echo PASS
