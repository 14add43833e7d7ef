#!/usr/bin/env bash
# rwlock blame with a slow writer (docs/DESIGN.md rule 3): idleness accrued while
# the writer holds goes to writer_release_site, idleness accrued while
# readers hold goes to reader_release_site (1/k each for k readers), and
# idleness with no holder is hand-off latency. tests/workloads/gt_rwlock_writer.c
# logs its own wait and hold intervals; per release site the report's rwlock
# rows must match that ground truth within 10% of the total rwlock wait, and
# so must the rwlock's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_rwlock_writer"

ground_truth_blame 0.10 "$WORKLOADS/gt_rwlock_writer"
