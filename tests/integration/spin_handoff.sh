#!/usr/bin/env bash
# Blame for a spin lock with one slow and two fast holders must match the
# workload's own ground truth (tests/workloads/handoff.h) within 15% of the
# total wait (spin waits may be measured by sampling), per release site and
# for conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/handoff_spin"

ground_truth_blame 0.15 "$WORKLOADS/handoff_spin"
