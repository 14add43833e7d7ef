#!/usr/bin/env bash
# Blame for a mutex with one slow and several fast holders must match the
# workload's own ground truth (tests/workloads/handoff.h) within 10% of the
# total wait, per release site and for conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/handoff_mutex"

ground_truth_blame 0.10 "$WORKLOADS/handoff_mutex"
