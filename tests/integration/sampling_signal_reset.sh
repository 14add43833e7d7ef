#!/usr/bin/env bash
# A fork child that resets every signal to its default before exec (git's
# start_command): the sampling signal's default is the program's view
# already, so sampling stays put and no lockblame: line says it moved
# (it moved back and forth between two signals, one line each, before).
# tests/workloads_user/sig_reset_child.c checks every real-time signal
# reads back as SIG_DFL in the child.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/sig_reset_child
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" 2>"$tmp/err" || { cat "$tmp/err"; fail "workload exited $?"; }
cat "$tmp/err"
if grep -q 'sampling moved' "$tmp/err"; then fail "resetting signals to their default moved sampling"; fi
n=$(sqlite3 "$tmp/out.db" "SELECT SUM(samples) FROM thread") || fail "no thread rows"
echo "samples: $n"
[ "${n:-0}" -gt 0 ] || fail "the parent was not sampled"
