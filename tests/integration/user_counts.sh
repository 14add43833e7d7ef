#!/usr/bin/env bash
# Counts where they happen (docs/DESIGN.md "Metrics"), with
# tests/workloads_user/gt_counts.c, which counts its own operations:
#  - --by-lock: the rwlock's acquisitions equal the workload's count, some
#    but not all of them contended; the semaphore's acquisitions equal its
#    sem_wait count, and at most the slow waits are contended (Cont% is not
#    100% when most sem_waits found a post);
#  - --metric wait: the rows at the lock/wait call sites carry a count and
#    the object kind (acquisitions are stored under the lock site).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_counts
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json preloaded "$W" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json"
"$LOCKBLAME_CLI" report --by-lock "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --metric wait "$tmp/out.db" || echo "(table report failed: $?)"
"$LOCKBLAME_CLI" report --by-lock --format json "$tmp/out.db" >"$tmp/locks.json" || fail "by-lock exited $?"
"$LOCKBLAME_CLI" report --metric wait --format json "$tmp/out.db" >"$tmp/wait.json" || fail "wait exited $?"
python3 - "$tmp/gt.json" "$tmp/locks.json" "$tmp/wait.json" <<'PY' || fail "counts"
import json, sys
truth = json.load(open(sys.argv[1]))
locks = json.load(open(sys.argv[2]))
waits = json.load(open(sys.argv[3]))
bad = []
def obj(kind, addr):
    for r in locks:
        if r["object"] == kind and int(r["address"], 16) == addr:
            return r
    bad.append(f"no {kind} row at 0x{addr:x}")
    return None
rw = obj("rwlock", truth["rwlock_address"])
if rw:
    print(f"rwlock: acquisitions {rw['acquisitions']} (truth {truth['rw_acquisitions']}),"
          f" contended {rw['contended']}, Cont% {rw['contended_share']:.1%}")
    if rw["acquisitions"] != truth["rw_acquisitions"]:
        bad.append("rwlock acquisitions differ from the workload's count")
    if not 0 < rw["contended"] < rw["acquisitions"]:
        bad.append("rwlock contended not in (0, acquisitions)")
sem = obj("sem", truth["sem_address"])
if sem:
    print(f"sem: acquisitions {sem['acquisitions']} (truth {truth['sem_acquisitions']}),"
          f" contended {sem['contended']} (at most {truth['sem_slow_waits']}),"
          f" Cont% {sem['contended_share']:.1%}")
    if sem["acquisitions"] != truth["sem_acquisitions"]:
        bad.append("sem acquisitions differ from the workload's count")
    if not 0 < sem["contended"] <= truth["sem_slow_waits"]:
        bad.append("sem contended not in (0, slow waits]")
for site, kind in (("reader_lock_site", "rwlock"), ("writer_lock_site", "rwlock"),
                   ("sem_wait_site", "sem")):
    rows = [r for r in waits if r["function"].split(".")[0] == site]
    print(site, [(r["object"], r["count"], round(r["value_s"], 6)) for r in rows])
    if not any(r["object"] == kind and r["count"] > 0 for r in rows):
        if site != "writer_lock_site" or rows:
            bad.append(f"{site}: no {kind} row with a count in --metric wait")
for b in bad:
    print("FAILED:", b)
sys.exit(1 if bad else 0)
PY
