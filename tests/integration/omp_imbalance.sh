#!/usr/bin/env bash
# OpenMP, the implicit barriers of imbalanced loops (docs/DESIGN.md rule 3):
# each thread's time from the end of its share to the end of the last
# share is blamed on where the straggler ran meanwhile: slow_iteration, or
# a fast iteration whose thread a busy machine kept off the CPU until
# after the slow one's end. tests/workloads_user/omp_imbalance.c measures
# it itself, at the end of `omp parallel for` regions (region) and of
# `omp for schedule(dynamic)` loops inside one region (loop); each within
# 5% of the total wait, the site the truth blames most on top of the
# release-site report, with conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/omp_imbalance"

# (late: in one round the fast iterations end last, and take its blame)
for mode in region loop "region late"; do
    echo "== $mode"
    ground_truth_blame 0.05 "$WORKLOADS_USER/omp_imbalance" $mode
    top_site_is "$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(max(t["sites"], key=t["sites"].get))' "$tmp/gt.json")"
done
