#!/usr/bin/env bash
# command: is the root program of the tree the user ran: a shell that
# records nothing itself runs two profiled programs; the header's command
# is the shell's command line ("the tree's root"), under plain LD_PRELOAD
# (the root notes it, meta root_command) and under lockblame run (run
# notes PROG's). With --pid selecting one process, it is that process's.
# Before, it was the first process that wrote (thread_bypass here; a
# helper such as pg_ctl elsewhere).
. "$(dirname "$0")/../lib/common.sh"
A=$WORKLOADS_USER/thread_bypass
B=$WORKLOADS_USER/std_threads
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$A" "$B"
script="$A >/dev/null; $B; true"
LOCKBLAME_OUTPUT=$tmp/preload.db LD_PRELOAD=$LOCKBLAME_LIB sh -c "$script" 2>/dev/null ||
    fail "preloaded shell failed"
"$LOCKBLAME_CLI" run -o "$tmp/run.db" -- sh -c "$script" 2>/dev/null || fail "run failed"
for how in preload run; do
    "$LOCKBLAME_CLI" report "$tmp/$how.db" >"$tmp/$how.txt" || fail "$how: report exited $?"
    head -3 "$tmp/$how.txt"
    grep -qxF "command:  sh -c $script" "$tmp/$how.txt" || fail "$how: command: is not the root's"
    grep -q "^processes: 2 (command above: the tree's root" "$tmp/$how.txt" ||
        fail "$how: the processes line does not say the command is the root's"
    pid=$(rows "$tmp/$how.db" "SELECT pid FROM run WHERE command LIKE '%thread_bypass%'")
    "$LOCKBLAME_CLI" report --pid "$pid" "$tmp/$how.db" >"$tmp/$how.pid.txt" ||
        fail "$how: --pid report exited $?"
    grep -q "^command:  .*thread_bypass$" "$tmp/$how.pid.txt" ||
        fail "$how: --pid $pid does not show its own command"
done
echo PASS
