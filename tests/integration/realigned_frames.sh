#!/usr/bin/env bash
# A release inside a function that realigns its stack through a dynamic
# realignment pointer (gcc's DRAP; tests/workloads_user/realigned_release.c,
# built -O2 -g): the function's CFI gives the CFA as `DW_OP_breg6 N;
# DW_OP_deref` and rbp as saved at rbp. The walk must go through that frame:
# the release site keeps its callers (row_caller, round_loop), and CPU
# samples taken inside it keep theirs. Before LB_RULE_DEREF the walk stopped
# at the realigned frame and the site had no callers.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/realigned_release
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

# The workload really is built with DRAP (else this test proves nothing).
# (Through a file: grep -q leaves at its first match, and under pipefail
# the pipe's readelf, killed by SIGPIPE if it was still writing, which
# depends on scheduling, failed the check.)
readelf --debug-dump=frames "$W" >"$tmp/frames" 2>/dev/null || fail "readelf exited $?"
grep -q "DW_CFA_def_cfa_expression (DW_OP_breg6 (rbp): -[0-9]*; DW_OP_deref)" "$tmp/frames" ||
    fail "workload has no DRAP frame (compiler changed?)"

LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" >"$tmp/stdout" || fail "workload exited $?"
"$LOCKBLAME_CLI" report --format json "$tmp/out.db" >"$tmp/sites.json" || fail "report exited $?"
"$LOCKBLAME_CLI" report "$tmp/out.db" || true
python3 - "$tmp/sites.json" <<'PY' || fail "release site inside a realigned frame lost its callers"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["object"] == "mutex" and not r.get("structural")]
top = rows[0]
print("top:", top["function"], top["blame_s"], "callers:", top["callers"])
callers = [c.split(" (")[0] for c in top["callers"]]
ok = top["function"] == "release_realigned" and callers[:2] == ["row_caller", "round_loop"]
sys.exit(0 if ok else 1)
PY
# CPU samples inside the realigned frame (its memset) keep their path too:
# no top-down root child is release_realigned itself.
"$LOCKBLAME_CLI" report --top-down --format json -n 20 "$tmp/out.db" >"$tmp/td.json" || fail "--top-down exited $?"
python3 - "$tmp/td.json" <<'PY' || fail "a path starts at the realigned frame"
import json, sys
rows = json.load(open(sys.argv[1]))
bad = [r for r in rows if r.get("depth", 1) == 1 and (r.get("function") or "").startswith("release_realigned")]
print("root-level release_realigned rows:", len(bad))
sys.exit(1 if bad else 0)
PY
echo "ok: release_realigned <- row_caller <- round_loop"
