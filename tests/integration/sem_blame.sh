#!/usr/bin/env bash
# Semaphore blame (docs/DESIGN.md rule 3): the idleness accrued since the
# previous sem_post goes to the next sem_post call site; sem_trywait never waits.
# tests/workloads/gt_sem.c logs its own sem_wait intervals and post times;
# per post site (fast_post_site, slow_post_site, shutdown_post_site)
# the report's sem rows must match that ground truth within 10% of the total
# sem wait, and so must the semaphore's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_sem"

ground_truth_blame 0.10 "$WORKLOADS/gt_sem"
