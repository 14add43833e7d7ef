#!/usr/bin/env bash
# Release sites in a task queue built with gcc -O2 -g (DESIGN.md rule 5):
# queue_push and queue_pop end in a tail-jumped unlock, queue_flush
# releases through an inlined helper (queue_unlock), and gcc clones the
# three (.constprop.0). Blame per site must match the workload's own
# ground truth (tests/workloads_user/gt_queue_o2.c) within 10% of the total
# wait, each site named by its source function with file:line, and the
# frame table must keep the raw clone symbols.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_queue_o2
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json preloaded "$W" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
    || fail "lockblame report --format json exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
clones=$(nm "$W" | awk '$3 ~ /^queue_[a-z]+\.(constprop|isra|part)/ { print $3 }')
echo "clones in the binary: ${clones:-none}"
# shellcheck disable=SC2086
python3 "$TESTLIB/check_sites.py" "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db" --clones $clones
