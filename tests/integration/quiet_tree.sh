#!/usr/bin/env bash
# A process tree under plain LD_PRELOAD prints one summary, from the process
# that started it, when it ends: a shell (which records nothing itself)
# running prefork_sem twice, each a parent and four forked workers, writes
# ten profiles and prints one summary naming all of them. With
# LOCKBLAME_QUIET=0 every process that wrote prints its own; a bad value
# says so in one line and keeps the default.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/prefork_sem"
printf '#!/bin/sh\n"%s" >/dev/null\n"%s" >/dev/null\n' "$WORKLOADS_USER/prefork_sem" \
    "$WORKLOADS_USER/prefork_sem" >"$tmp/two.sh"
chmod +x "$tmp/two.sh"

db=$tmp/quiet.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$tmp/two.sh" 2>"$tmp/err" || fail "two.sh failed"
n=$(rows "$db" "SELECT COUNT(*) FROM run")
[ "$n" -ge 8 ] || fail "expected the tree's processes in the database, found $n"
summaries=$(grep -c 'profile .*quiet.db' "$tmp/err" || true)
[ "$summaries" = 1 ] || fail "$summaries summaries for one tree: $(cat "$tmp/err")"
grep -q "^lockblame: $n processes profiled; effort" "$tmp/err" ||
    fail "the summary does not cover the $n processes: $(cat "$tmp/err")"
[ "$(grep -c '^lockblame:' "$tmp/err")" -le 5 ] || fail "more than 5 lines: $(cat "$tmp/err")"
echo "ok: one summary for $n processes"

db=$tmp/each.db
LOCKBLAME_QUIET=0 LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$tmp/two.sh" 2>"$tmp/err" ||
    fail "two.sh failed"
n=$(rows "$db" "SELECT COUNT(*) FROM run")
summaries=$(grep -c 'profile .*each.db' "$tmp/err" || true)
[ "$summaries" = "$n" ] || fail "LOCKBLAME_QUIET=0: $summaries summaries for $n processes"
echo "ok: LOCKBLAME_QUIET=0: one summary per process ($n)"

LOCKBLAME_QUIET=maybe LOCKBLAME_OUTPUT=$tmp/bad.db LD_PRELOAD=$LOCKBLAME_LIB "$tmp/two.sh" \
    2>"$tmp/err" || fail "two.sh failed"
[ "$(grep -c 'LOCKBLAME_QUIET' "$tmp/err")" = 1 ] || fail "bad value: $(cat "$tmp/err")"
[ "$(grep -c 'profile .*bad.db' "$tmp/err")" = 1 ] || fail "bad value: not the default"
echo "ok: a bad LOCKBLAME_QUIET is said once"
# a process's own lines at exit (CPU time that went unsampled) are left to
# the tree too: two programs whose thread blocks every signal while it
# works say nothing under a shell, each its own with LOCKBLAME_QUIET=0
W=$WORKLOADS_USER/sig_blocked_work
need "$W"
for quiet in 1 0; do
    LOCKBLAME_QUIET=$quiet LOCKBLAME_OUTPUT=$tmp/blk$quiet.db LD_PRELOAD=$LOCKBLAME_LIB \
        sh -c "\"$W\" >/dev/null; \"$W\" >/dev/null" 2>"$tmp/err" || fail "sig_blocked_work failed"
    n=$(grep -c 'went unsampled' "$tmp/err" || true)
    want=$([ $quiet = 1 ] && echo 0 || echo 2)
    [ "$n" = "$want" ] || fail "LOCKBLAME_QUIET=$quiet: $n 'went unsampled' lines, want $want: $(cat "$tmp/err")"
done
echo "ok: the programs' unsampled time is left to the tree's lines"
echo PASS
