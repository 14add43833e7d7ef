#!/usr/bin/env bash
# Barrier blame (DESIGN.md rule 3): an episode's idleness (each waiter's time
# from its arrival until the last arrival) goes to the barrier-wait call of the
# last thread to arrive, whatever thread glibc makes the serial one; the
# wake-up after the last arrival is hand-off latency.
# tests/workloads/gt_barrier.c logs its own arrival and return times per
# episode; per arrival site (straggler_arrives, prompt_arrives) the report's
# barrier rows must match that ground truth within 10% of the total barrier
# wait, and so must the barrier's sync_object row (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_barrier"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json \
    preloaded "$WORKLOADS/gt_barrier" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
    || fail "lockblame report --format json exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
