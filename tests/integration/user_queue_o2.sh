#!/usr/bin/env bash
# Release sites in a task queue built with gcc -O2 -g (docs/DESIGN.md rule 5):
# queue_push and queue_pop end in a tail-jumped unlock, queue_flush
# releases through an inlined helper (queue_unlock), and gcc clones the
# three (.constprop.0). Blame per site must match the workload's own
# ground truth (tests/workloads_user/gt_queue_o2.c) within 10% of the total
# wait, each site named by its source function with file:line, and the
# frame table must keep the raw clone symbols.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_queue_o2
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

ground_truth_blame 0.10 "$W"
clones=$(nm "$W" | awk '$3 ~ /^queue_[a-z]+\.(constprop|isra|part)/ { print $3 }')
echo "clones in the binary: ${clones:-none}"
# shellcheck disable=SC2086
python3 "$TESTLIB/check_sites.py" "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db" --clones $clones
# Its workers compute as well as wait (~40% busy): no "waiters:" line
# calls them helpers waiting for work.
"$LOCKBLAME_CLI" report "$tmp/out.db" >"$tmp/table.txt" || fail "report exited $?"
if grep '^waiters:' "$tmp/table.txt"; then fail "computing workers were called helpers"; fi
