#!/usr/bin/env bash
# Join blame (docs/DESIGN.md rule 3): main's pthread_join waiting goes to the
# joined thread's exit, in the calling context of its start routine: the
# report row names the start routine (long_worker, short_worker), object
# "join". tests/workloads/gt_join.c measures each join itself; per start
# routine the blame must match within 10% of the total join wait, and so
# must the sum of the two threads' join rows in sync_object (conservation).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/gt_join"

ground_truth_blame 0.10 "$WORKLOADS/gt_join"
# The exit line: nearly all of this run's idleness is main's joins, which
# the report ranks apart, so the line says so beside the top release site
# (a 7-Zip run read "top release site: ..., 0.002 s" while 49% of its
# effort was parked threads).
LOCKBLAME_OUTPUT=$tmp/again.db preloaded "$WORKLOADS/gt_join" >/dev/null 2>"$tmp/err" || fail "workload exited $?"
grep '^lockblame: ' "$tmp/err"
python3 - "$tmp/err" <<'PY' || fail "exit line: no structural share, or a wrong one"
import re, sys
text = open(sys.argv[1]).read()
idle = float(re.search(r"idleness ([0-9.]+) s \(", text).group(1))
m = re.search(r"([0-9.]+)% of the idleness \(([0-9.]+) s\) is structural", text)
ok = m is not None and float(m.group(2)) <= idle + 1e-3 and float(m.group(1)) >= 50
sys.exit(0 if ok else 1)
PY
