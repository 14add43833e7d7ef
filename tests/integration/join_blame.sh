#!/usr/bin/env bash
# Join blame (DESIGN.md rule 3): main's pthread_join waiting goes to the
# joined thread's exit, in the calling context of its start routine: the
# report row names the start routine (long_worker, short_worker), object
# "join". tests/workloads/gt_join.c measures each join itself; per start
# routine the blame must match within 10% of the total join wait, and so
# must the sum of the two threads' join rows in sync_object (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_join"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json \
    preloaded "$WORKLOADS/gt_join" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
    || fail "lockblame report --format json exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
