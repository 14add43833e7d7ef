#!/usr/bin/env bash
# OpenMP, `omp critical` blamed as a mutex (docs/DESIGN.md rule 3):
# idleness accrued while a thread holds is blamed on its release call, in
# the function that holds (slow_holder, quick_holder); the rest is
# hand-off latency. tests/workloads_user/omp_holders.c (critical) logs its waits
# and holds; each site within 5% of the total wait, slow_holder on top,
# conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/omp_holders"

ground_truth_blame 0.05 "$WORKLOADS_USER/omp_holders" critical
top_site_is slow_holder
