#!/usr/bin/env bash
# Mutex acquisition counts are exact however a mutex lives (see
# tests/workloads/mutex_counts.c): the process's mutex rows (per-object
# records plus the per-kind row of mutexes without one) sum to every
# acquisition, never-contended mutexes still alive at exit included; a
# contended mutex's record holds all its acquisitions, those before its
# first contention too; a fork child counts only its own.
source "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/mutex_counts
need "$W" "$LOCKBLAME_LIB"

"$W" >"$tmp/native.out" || fail "native run exited $?"
LOCKBLAME_OUTPUT=$tmp/out.db LOCKBLAME_EVENT=none preloaded "$W" >"$tmp/pre.out" 2>"$tmp/pre.err" ||
    { cat "$tmp/pre.err"; fail "preloaded run exited $?"; }
sed 's/^/  /' "$tmp/pre.out"
parent="(SELECT id FROM run WHERE pid = $(awk '$1 == "pid" { print $2 }' "$tmp/pre.out"))"
total=$(awk '$1 == "total" { print $2 }' "$tmp/pre.out")
got=$(rows "$tmp/out.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'mutex' AND run_id = $parent")
echo "  mutex acquisitions recorded: $got (truth $total)"
[ "$got" = "$total" ] || bad "the process's mutex acquisitions are $got, not $total"
while read -r _ addr n; do
    rec=$(rows "$tmp/out.db" "SELECT acquisitions FROM sync_object WHERE object = 'mutex' AND address = $addr AND run_id = $parent")
    echo "  record of $addr: $rec (truth $n)"
    [ "$rec" = "$n" ] || bad "the record of contended mutex $addr has $rec acquisitions, not $n"
done < <(grep '^record ' "$tmp/pre.out")
want=$(awk '$1 == "child" { print $2 }' "$tmp/pre.out")
child=$(rows "$tmp/out.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'mutex' AND run_id <> $parent")
echo "  fork child's mutex acquisitions: $child (truth $want)"
[ "$child" = "$want" ] || bad "the fork child recorded $child mutex acquisitions, not $want"
echo "$errors problem(s)"
[ $errors -eq 0 ]
