#!/usr/bin/env bash
# Semaphore acquisitions counted in each thread's own table
# (src/locks/acq_counts.h) all reach the profile: tests/workloads_user/
# sem_counts.c waits on a semaphore shared by a thread that exits early
# and one alive at exit, and on ten semaphores from one thread (more than
# its table's 8 slots), half of them destroyed before exit. The sem rows'
# acquisitions add up to the sem_waits it made, and its output is the
# same as natively.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/sem_counts
need "$LOCKBLAME_LIB" "$W"

native=$("$W" 20000) || fail "native run exited $?"
LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" 20000 >"$tmp/out" || fail "workload exited $?"
[ "$(cat "$tmp/out")" = "$native" ] || fail "output '$(cat "$tmp/out")', natively '$native'"
want=${native#sem_waits }
got=$(rows "$tmp/out.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'sem'")
echo "sem_waits $want; the profile's sem acquisitions $got"
[ "$got" = "$want" ] || fail "the profile counts $got sem acquisitions, the workload made $want"
echo "PASS"
