#!/usr/bin/env bash
# OpenMP, the implicit barrier ending a parallel region (docs/DESIGN.md rule 3):
# an imbalanced `omp parallel for` (gcc -fopenmp -O2 -g) whose slow
# iteration is slow_iteration. Each thread's time from the end of its
# share to the region's end must be blamed on where the straggler ran
# meanwhile: slow_iteration, within 5% of the total the workload measures
# itself, on top of the release-site report, with conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/omp_imbalance"

ground_truth_blame 0.05 "$WORKLOADS_USER/omp_imbalance"
top_site_is slow_iteration
