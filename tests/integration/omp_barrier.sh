#!/usr/bin/env bash
# OpenMP, an explicit `omp barrier` (GOMP_barrier) by the barrier rule
# (docs/DESIGN.md rule 3): an episode's idleness goes to the barrier call of the
# last thread to arrive. tests/workloads_user/omp_barrier.c logs each
# call and return; late_arrival's barrier must take the blame within 5% of
# the total wait, on top of the report, with conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/omp_barrier"

ground_truth_blame 0.05 "$WORKLOADS_USER/omp_barrier"
top_site_is late_arrival
