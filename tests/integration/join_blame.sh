#!/usr/bin/env bash
# Join blame (DESIGN.md rule 3): main's pthread_join waiting goes to the
# joined thread's exit, in the calling context of its start routine: the
# report row names the start routine (long_worker, short_worker), object
# "join". tests/workloads/gt_join.c measures each join itself; per start
# routine the blame must match within 10% of the total join wait, and so
# must the sum of the two threads' join rows in sync_object (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_join"

ground_truth_blame 0.10 "$WORKLOADS/gt_join"
