#!/usr/bin/env bash
# Barrier blame (docs/DESIGN.md rule 3): an episode's idleness (each waiter's time
# from its arrival until the last arrival) goes to the barrier-wait call of the
# last thread to arrive, whatever thread glibc makes the serial one; the
# wake-up after the last arrival is hand-off latency.
# tests/workloads/gt_barrier.c logs its own arrival and return times per
# episode; per arrival site (straggler_arrives, prompt_arrives) the report's
# barrier rows must match that ground truth within 10% of the total barrier
# wait, and so must the barrier's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_barrier"

ground_truth_blame 0.10 "$WORKLOADS/gt_barrier"
