#!/usr/bin/env bash
# Release sites in C++ built with g++ -O2 -g (DESIGN.md rule 5): record()
# and tally() release through std::lock_guard, whose unlock is inline code
# from the runtime's headers (std_mutex.h, gthr-default.h) and a tail jump.
# The site is the program function with its file:line, not
# __gthread_mutex_unlock or the caller; blame per site must match the
# workload's ground truth (tests/workloads_user/gt_cxx_guard.cc) within 10%.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_cxx_guard
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

ground_truth_blame 0.10 "$W"
python3 "$TESTLIB/check_sites.py" "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
# The runtime's inline frames stay in the call path, below the site.
"$LOCKBLAME_CLI" report --top-down -n 12 "$tmp/out.db" >"$tmp/td.txt" || fail "top-down exited $?"
grep -q "lock_guard" "$tmp/td.txt" || fail "std::lock_guard frame missing from the call path"
