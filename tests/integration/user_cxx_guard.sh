#!/usr/bin/env bash
# Release sites in C++ built with g++ -O2 -g (docs/DESIGN.md rule 5): record()
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
# Its threads are std::threads, started by libstdc++'s routine: --by-thread
# names each by the program function it ran (worker, parked), not by that
# routine.
"$LOCKBLAME_CLI" report --by-thread --format json "$tmp/out.db" >"$tmp/threads.json" || fail "--by-thread exited $?"
python3 - "$tmp/threads.json" <<'PY' || fail "--by-thread start routines of std::threads"
import json, re, sys
starts = [r["start_routine"] for r in json.load(open(sys.argv[1]))]
print("start routines:", starts)
workers = sum(1 for s in starts if s.startswith("(anonymous namespace)::worker("))
parked = sum(1 for s in starts if s.startswith("(anonymous namespace)::parked("))
# ... by function and file, without the line of the thread's heaviest
# context (the workers were named at different lines of worker()).
lines = [s for s in starts if re.search(r":[0-9]+\)$", s)]
sys.exit(0 if workers >= 2 and parked == 1 and not lines and
         not any("libstdc++" in s for s in starts) else 1)
PY
# Main joins the std::threads; each ended in libstdc++'s start routine,
# a frame with no program code. The join's site is the function the
# thread ran, one row per function (the workers ended on different lines
# of it), never a libstdc++ address.
python3 - "$tmp/report.json" "$tmp/gt.json" <<'PY' || fail "join rows of std::threads"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["object"] == "join"]
nworkers = json.load(open(sys.argv[2]))["threads"]
for r in rows:
    print("join row:", r["function"], r["module"], r["blamed_count"])
workers = [r for r in rows if (r["function"] or "").startswith("(anonymous namespace)::worker(")]
parked = [r for r in rows if (r["function"] or "").startswith("(anonymous namespace)::parked(")]
ok = (len(workers) == 1 and workers[0]["blamed_count"] == nworkers and len(parked) == 1
      and len(rows) == 2 and not any("libstdc++" in (r["module"] or "") for r in rows))
# A join's count is its joined threads' ends (it was 0 beside Blamed N);
# no row counts fewer calls than it blamed (an unknown count is null).
ok = ok and all(r["count"] == r["blamed_count"] for r in rows)
allrows = json.load(open(sys.argv[1]))
low = [r for r in allrows if r["count"] is not None and r["count"] < r["blamed_count"]]
print("rows with count < blamed:", [(r["function"], r["count"], r["blamed_count"]) for r in low])
ok = ok and not low
sys.exit(0 if ok else 1)
PY
# --by-lock names the same holders for the joins.
"$LOCKBLAME_CLI" report --by-lock "$tmp/out.db" >"$tmp/locks.txt" || fail "--by-lock exited $?"
sed -n '/^join /,/^[a-z]/p' "$tmp/locks.txt" | grep "holder" >"$tmp/join_holders.txt" || true
cat "$tmp/join_holders.txt"
grep -q "worker" "$tmp/join_holders.txt" || fail "--by-lock: no join holder names worker"
! grep -q "libstdc++" "$tmp/join_holders.txt" || fail "--by-lock: a join holder at a libstdc++ address"
# compare against a run with one worker more: its headline names the
# contexts that changed most by their program frame (record, tally), as
# report does, not by std::lock_guard's inline frames from the headers.
LOCKBLAME_OUTPUT=$tmp/four.db GROUND_TRUTH=$tmp/gt4.json preloaded "$W" 4 600 >/dev/null || fail "second run exited $?"
"$LOCKBLAME_CLI" compare "$tmp/out.db" "$tmp/four.db" >"$tmp/compare.txt" || fail "compare exited $?"
grep "^largest" "$tmp/compare.txt" | tee "$tmp/largest.txt"
[ -s "$tmp/largest.txt" ] || fail "compare: no largest gain/loss line"
! grep -q '\.h:[0-9]' "$tmp/largest.txt" || fail "compare names a system header's frame"
# --top-down: the joins' blame sits under libstdc++'s thread trampoline,
# on a child per function the threads ran (it was all exclusive on the
# unnamed trampoline, with no children).
"$LOCKBLAME_CLI" report --top-down --format json -n 50 "$tmp/out.db" >"$tmp/td.json" || fail "--top-down json exited $?"
python3 - "$tmp/td.json" <<'PY' || fail "--top-down: join blame not under the threads' functions"
import json, sys
rows = json.load(open(sys.argv[1]))
by_id = {r["node_id"]: r for r in rows}
tramp = [r for r in rows if r["depth"] == 1 and "libstdc++" in (r["module"] or "")
         and any(c["parent_id"] == r["node_id"] and (c["function"] or "").startswith("(anonymous namespace)::worker(")
                 for c in rows)]
print("trampolines with a worker child:", [(r["function"] or r["module"], r["exclusive_s"]) for r in tramp])
bare = [r for r in rows if r["depth"] == 1 and "libstdc++" in (r["module"] or "") and r["exclusive_s"] > 0.01]
print("libstdc++ root children with exclusive blame:", [(r["module"], r["exclusive_s"]) for r in bare])
sys.exit(0 if tramp and not bare else 1)
PY
