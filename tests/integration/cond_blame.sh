#!/usr/bin/env bash
# Condition-variable blame (docs/DESIGN.md rule 3): the idleness accrued since the
# previous signal/broadcast goes to the next signal/broadcast call site.
# tests/workloads/gt_cond.c logs its own cond-wait intervals and signal times;
# per signal site (quick_signal_site, late_signal_site, shutdown_broadcast_site)
# the report's cond rows must match that ground truth within 10% of the total
# cond wait, and so must the cond's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_cond"

ground_truth_blame 0.10 "$WORKLOADS/gt_cond"
