#!/usr/bin/env bash
# rwlock blame shared by readers (docs/DESIGN.md rule 3): while k readers hold
# together and a writer waits, each reader's release site is blamed 1/k of
# what accrues. tests/workloads/gt_rwlock_readers.c runs three readers with
# overlapping holds (two taken before the writer waits, one while it waits)
# and logs its own wait and hold intervals; per release site
# (reader_a_release, reader_b_release, reader_c_release, writer_release_site)
# the report's rwlock rows must match that ground truth within 10% of the
# total rwlock wait, and so must the rwlock's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_rwlock_readers"

ground_truth_blame 0.10 "$WORKLOADS/gt_rwlock_readers"
