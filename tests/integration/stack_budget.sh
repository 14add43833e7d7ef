#!/usr/bin/env bash
# lockblame's own stack use (its work in a signal handler or a wrapper
# fits in a small, fixed stack budget). A thread
# on a painted 256 KiB stack burns CPU (sampled) or does contended lock,
# cond and semaphore work; the high-water mark below its start routine,
# preloaded minus native, is lockblame's use. Asserted: the sampling
# handler (with the kernel's signal frame) fits in LB_STACK_BUDGET_HANDLER,
# the budget below which the handler drops its sample (src/util/
# stack_bounds.h); and samples did land on that stack. Printed: the
# wrappers' use (the release/wait unwind), for docs/INTERNALS.md.
. "$(dirname "$0")/../lib/common.sh"
W=${WORKLOADS_USER:-$BUILD/tests/workloads_user}/stack_use
need "$W" "$LOCKBLAME_LIB"
budget_kib=$(sed -n 's/^#define LB_STACK_BUDGET_HANDLER (\([0-9]*\)u << 10).*/\1/p' "$ROOT/src/util/stack_bounds.h")
[ -n "$budget_kib" ] || fail "cannot read LB_STACK_BUDGET_HANDLER from src/util/stack_bounds.h"
budget=$((budget_kib * 1024))

used() { sed -n 's/.* \([0-9]*\) bytes used below it.*/\1/p' "$1"; }
"$W" cpu >"$tmp/cpu.native"
LOCKBLAME_OUTPUT=$tmp/cpu.db preloaded "$W" cpu >"$tmp/cpu.pre" 2>"$tmp/cpu.err"
"$W" locks >"$tmp/locks.native"
LOCKBLAME_OUTPUT=$tmp/locks.db preloaded "$W" locks >"$tmp/locks.pre" 2>"$tmp/locks.err"
"$W" signal >"$tmp/signal.native"
cat "$tmp"/*.native "$tmp"/*.pre | sed 's/^/  /'
handler=$(( $(used "$tmp/cpu.pre") - $(used "$tmp/cpu.native") ))
wrappers=$(( $(used "$tmp/locks.pre") - $(used "$tmp/locks.native") ))
frame=$(( $(used "$tmp/signal.native") - $(used "$tmp/cpu.native") ))
echo "sampling handler + signal frame: $handler bytes (budget $budget); wrappers: $wrappers bytes;" \
     "a program's empty handler + frame: about $frame bytes"
[ "$handler" -gt 0 ] || fail "no sample landed on the painted stack (sampling off?)"
[ "$handler" -le "$budget" ] || fail "the sampling handler used $handler bytes, over its budget of $budget"
echo "ok"
