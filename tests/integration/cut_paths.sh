#!/usr/bin/env bash
# Call paths through code without unwind information (hand-written
# assembly without .cfi directives). nocfi_trampoline's two workers take
# turns on one mutex, each through an assembly trampoline:
#   asm_trampoline_fp keeps a frame pointer: the walk takes one
#     frame-pointer step and goes on to worker_fp;
#   asm_trampoline_nofp keeps none: the walk must not guess, and ends in
#     an "[unknown: no unwind info in nocfi_trampoline]" frame.
# Never a wrong caller, in the release sites' paths and in the samples';
# the header counts the work and blame on cut paths.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/nocfi_trampoline"
db=$tmp/nocfi.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/nocfi_trampoline" >"$tmp/out" 2>"$tmp/err" ||
    fail "workload failed: $(cat "$tmp/err")"
"$LOCKBLAME_CLI" report --by-release-site --format json "$db" >"$tmp/sites.json" || fail "report json"
"$LOCKBLAME_CLI" report --format folded --metric work "$db" >"$tmp/work.folded" || fail "report folded"
"$LOCKBLAME_CLI" report "$db" >"$tmp/table" || fail "report table"

python3 - "$tmp/sites.json" "$tmp/work.folded" <<'PY' || fail "paths through code without CFI"
import json, sys
rows = json.load(open(sys.argv[1]))
cut = "[unknown: no unwind info in nocfi_trampoline]"
errors = []
def site(name):
    r = [r for r in rows if r["function"] == name]
    if not r or r[0]["blame_s"] <= 0:
        errors.append("%s: no blame (%s)" % (name, r))
        return None
    return r[0]
fp = site("release_fp_path")
if fp:
    callers = [c.split(" (")[0] for c in fp["callers"]]
    print("release_fp_path callers:", callers)
    if callers[:1] != ["asm_trampoline_fp"] or "worker_fp" not in callers or cut in callers:
        errors.append("release_fp_path: the frame-pointer step did not reach worker_fp: %s" % callers)
nofp = site("release_nofp_path")
if nofp:
    callers = [c.split(" (")[0] for c in nofp["callers"]]
    print("release_nofp_path callers:", callers)
    ok = callers[:1] == ["asm_trampoline_nofp"] and (callers[1:] == [cut] or "worker_nofp" in callers[1:])
    if not ok:
        errors.append("release_nofp_path: neither cut nor correct: %s" % callers)
# samples: a trampoline's callers are its own worker, or the cut marker
for line in open(sys.argv[2]):
    stack = line.rpartition(" ")[0].split(";")
    for tramp, worker in (("asm_trampoline_fp", "worker_fp"), ("asm_trampoline_nofp", "worker_nofp")):
        if tramp in stack:
            above = stack[:stack.index(tramp)]
            if above != [cut] and worker not in above:
                errors.append("sampled path: %s" % ";".join(stack))
for e in errors:
    print("FAILED:", e)
sys.exit(1 if errors else 0)
PY
grep -q '^cut paths: .* of blame' "$tmp/table" || fail "no 'cut paths:' line in the header"
echo PASS
