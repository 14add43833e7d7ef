#!/usr/bin/env bash
# Blame for a mutex with one slow and several fast holders must match the
# workload's own ground truth (tests/workloads/handoff.h) within 10% of the
# total wait, per release site and for conservation.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/handoff_mutex"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json \
    preloaded "$WORKLOADS/handoff_mutex" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
    || fail "lockblame report --format json exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
