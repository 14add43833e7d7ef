#!/usr/bin/env bash
# Structural waits (docs/DESIGN.md rule 6) beside real contention, -O2 -g:
# tests/workloads_user/gt_pool_o2.c parks a thread pool on a condition
# variable until shutdown while workers contend for one mutex and main
# joins them. Checks:
#  - the mutex's blame per release site matches the workload's ground
#    truth within 10% of its total wait (check_blame.py);
#  - the top row of the default release-site view is the mutex's release
#    site (hot_release), not the join or the shutdown broadcast;
#  - the parked pool's blame is reported apart (structural_wait rows), and
#    its total matches the pool's own measure of its parked time within 10%;
#  - the header states the structural totals;
#  - --kind selects object kinds in the release-site and lock views, and a
#    bad kind is a usage error (exit 2, one line).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/gt_pool_o2
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json preloaded "$W" || fail "workload exited $?"
need "$tmp/out.db" "$tmp/gt.json" "$tmp/gt.json.structural"
"$LOCKBLAME_CLI" report "$tmp/out.db" | tee "$tmp/table.txt" || fail "report exited $?"
"$LOCKBLAME_CLI" report --format json "$tmp/out.db" >"$tmp/report.json" || fail "json report exited $?"
python3 "$TESTLIB/check_blame.py" --tol 0.10 "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"

grep -E '^structural: [0-9.]+ s = joins [0-9.]+ s \+ parked until shutdown [0-9.]+ s' "$tmp/table.txt" \
    || fail "no structural totals in the header"

python3 - "$tmp/report.json" "$tmp/out.db" "$tmp/gt.json.structural" <<'PY' || fail "structural checks"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[3]))
top = rows[0]
print("top row:", top["function"], top["object"], top["blame_s"], "structural", top["structural"])
ok = top["function"] == "hot_release" and top["object"] == "mutex" and not top["structural"]
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
got = con.execute("SELECT TOTAL(blame_s) FROM structural_wait WHERE NOT open").fetchone()[0]
want = truth["structural_parked_s"]
err = abs(got - want) / want
print(f"parked until shutdown: reported {got:.6f} s, pool's own measure {want:.6f} s, error {err:.1%}")
srows = sum(r["blame_s"] for r in rows if r["structural"] and r["object"] == "cond")
print(f"structural cond rows in the report: {srows:.6f} s")
ok = ok and err <= 0.10 and abs(srows - got) <= 0.01 * want
sys.exit(0 if ok else 1)
PY

# A site whose blame is split between the two tables (main's shutdown
# broadcast, when it wakes busy workers as well as parked ones) counts its
# calls once, on the row a user can act on; its structural twin's count is
# null (both rows said 1, summing to 2 calls). Whether a run splits it is
# timing: up to four runs, the first that does is checked.
for try in 1 2 3 4; do
    [ "$try" = 1 ] && db=$tmp/out.db || {
        db=$tmp/split.$try.db
        LOCKBLAME_OUTPUT=$db GROUND_TRUTH=$tmp/split.json preloaded "$W" || fail "workload exited $?"
    }
    "$LOCKBLAME_CLI" report --format json "$db" >"$tmp/split.json.report" || fail "json report exited $?"
    rc=0
    python3 - "$tmp/split.json.report" <<'PY' || rc=$?
import collections, json, sys
rows = json.load(open(sys.argv[1]))
split = collections.defaultdict(list)
for r in rows:
    split[(r["function"], r["file"], r["line"], r["object"])].append(r)
twins = [v for v in split.values() if len(v) == 2]
print("split sites:", [(v[0]["function"], v[0]["line"], [(r["structural"], r["count"]) for r in v]) for v in twins])
if not twins:
    sys.exit(3)
ok = all(sum(r["count"] is not None for r in v) == 1 and
         next(r for r in v if r["count"] is not None)["structural"] is False for v in twins)
# Its structural twin's Blamed counts the release that carried its blame
# (the broadcast: 1), as every row with blame does (it said 0 beside
# seconds of blame).
unblamed = [(r["function"], r["line"], r["blame_s"]) for r in rows
            if r["blame_s"] > 0 and r["blamed_count"] < 1]
print("rows with blame and Blamed 0:", unblamed)
ok = ok and not unblamed
sys.exit(0 if ok else 1)
PY
    [ "$rc" = 1 ] && fail "a split site counts its calls on both rows, or a row with blame has Blamed 0"
    [ "$rc" = 0 ] && break
done
"$LOCKBLAME_CLI" report --kind cond --format json "$tmp/out.db" >"$tmp/cond.json" || fail "--kind cond exited $?"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
kinds = sorted({r["object"] for r in rows})
print("--kind cond rows:", kinds)
sys.exit(0 if kinds == ["cond"] else 1)' "$tmp/cond.json" || fail "--kind cond shows other kinds"
"$LOCKBLAME_CLI" report --by-lock --kind mutex,join --format json "$tmp/out.db" >"$tmp/locks.json" \
    || fail "--by-lock --kind exited $?"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
kinds = sorted({r["object"] for r in rows})
print("--by-lock --kind mutex,join objects:", kinds)
sys.exit(0 if kinds == ["join", "mutex"] else 1)' "$tmp/locks.json" || fail "--by-lock --kind"
for v in --by-thread --top-down --bottom-up --flat; do
    "$LOCKBLAME_CLI" report $v --kind mutex "$tmp/out.db" >/dev/null || fail "$v --kind exited $?"
done
set +e
"$LOCKBLAME_CLI" report --kind spinlock "$tmp/out.db" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--kind spinlock (no such kind): exit $rc, stderr $(cat "$tmp/err")"

# Two shapes of a parked pool that a server's background threads have,
# each checked like the plain one: the top row stays the mutex's release
# site, and the pool's parked time is reported apart.
#  - handshake: once woken for shutdown, each pool thread waits once more,
#    on another cond (GT_POOL_HANDSHAKE=1): the parked wait is no longer
#    its last (found as its longest);
#  - timed: the pool threads wait with a 20 ms timeout, again and again
#    (GT_POOL_TIMED=1): each parked span is a run of timed waits whose
#    idleness the shutdown broadcast collects (found as a run);
#  - after: the pool's cond is signalled once more after the shutdown
#    broadcast, for a pool thread that waited on it again (GT_POOL_AFTER=1):
#    the signal that ended the parked waits is not the cond's last (found
#    as the one that collected the most);
#  - late: main signals the pool's cond again 3 ms after the shutdown
#    broadcast, holding the mutex the woken pool threads need to return
#    (GT_POOL_LATE=1), as a busy machine that keeps them off a CPU does:
#    both signals came during the parked waits, and the one that
#    collected the most, not the last, holds their waiting.
for shape in HANDSHAKE TIMED AFTER LATE; do
    export "GT_POOL_$shape=1"
    LOCKBLAME_OUTPUT=$tmp/$shape.db GROUND_TRUTH=$tmp/$shape.json preloaded "$W" \
        || fail "$shape: workload exited $?"
    unset "GT_POOL_$shape"
    "$LOCKBLAME_CLI" report --format json "$tmp/$shape.db" >"$tmp/$shape.report.json" \
        || fail "$shape: report exited $?"
    python3 - "$tmp/$shape.report.json" "$tmp/$shape.db" "$tmp/$shape.json.structural" "$shape" <<'PY' \
        || fail "$shape: structural checks"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[3]))["structural_parked_s"]
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
got = con.execute("SELECT TOTAL(blame_s) FROM structural_wait WHERE NOT open").fetchone()[0]
top = rows[0]
print(f"{sys.argv[4]}: top row {top['function']} {top['object']}; parked until shutdown: "
      f"reported {got:.6f} s, pool's own measure {want:.6f} s")
sys.exit(0 if top["function"] == "hot_release" and abs(got - want) <= 0.10 * want else 1)
PY
done

# A coordinator is not parked: the initial thread waiting for its workers'
# results with timed waits (xz's main thread), woken by the last result
# and exiting at once (tests/workloads_user/coordinator_timed.c). Its
# waiting stays blame on the workers' signal (0.30 s); runs of timed
# waits and longest waits are for helper threads (the run rule made
# 0.15 s of it structural).
CT=$WORKLOADS_USER/coordinator_timed
need "$CT"
LOCKBLAME_OUTPUT=$tmp/ct.db preloaded "$CT" >"$tmp/ct.out" || fail "coordinator_timed exited $?"
read -r structural <<<"$(sqlite3 "$tmp/ct.db" "SELECT TOTAL(blame_s) FROM structural_wait WHERE NOT open")"
"$LOCKBLAME_CLI" report --format json "$tmp/ct.db" >"$tmp/ct.json" || fail "coordinator report exited $?"
python3 - "$tmp/ct.json" "$structural" "$tmp/ct.out" <<'PY' || fail "coordinator: its waiting reported as parked"
import json, sys
rows = json.load(open(sys.argv[1]))
waited = float(open(sys.argv[3]).read().split()[1])
blame = sum(r["blame_s"] for r in rows if r["function"] == "result_ready" and not r["structural"])
print(f"coordinator: main waited {waited:.3f} s; result_ready blame {blame:.3f} s, structural {float(sys.argv[2]):.3f} s")
sys.exit(0 if blame >= 0.8 * waited and float(sys.argv[2]) <= 0.05 * waited else 1)
PY

# compare leaves structural waits out as report does: between a short and
# a long run, the mutex's release site changes by what the workload's own
# truth says it did (the runs' contention, whatever the machine's load
# made of it), and main's rows (its shutdown broadcast and its joins, which
# grow with the run) by a small part of what its structural waits grew:
# what is left of them is the wake-ups' edges.
LOCKBLAME_OUTPUT=$tmp/short.db GROUND_TRUTH=$tmp/short.json preloaded "$W" 3 300 || fail "short run exited $?"
LOCKBLAME_OUTPUT=$tmp/long.db GROUND_TRUTH=$tmp/long.json preloaded "$W" 3 1200 || fail "long run exited $?"
"$LOCKBLAME_CLI" compare --format json "$tmp/short.db" "$tmp/long.db" >"$tmp/cmp.json" \
    || fail "compare exited $?"
python3 - "$tmp/cmp.json" "$tmp/short.db" "$tmp/long.db" "$tmp/short.json" "$tmp/long.json" <<'PY' ||
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
def structural(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    return con.execute("SELECT TOTAL(blame_s) FROM structural_wait").fetchone()[0]
grew = structural(sys.argv[3]) - structural(sys.argv[2])
short, long = (json.load(open(f)) for f in sys.argv[4:6])
truth = long["sites"]["hot_release"] - short["sites"]["hot_release"]
tol = 0.10 * max(long["total_wait_s"], short["total_wait_s"])
got = sum(r["excess_idleness_s"] for r in rows if r["function"] == "hot_release")
main_idle = sum(r["excess_idleness_s"] for r in rows if r["function"] == "main")
print(f"compare: hot_release {got:+.3f} s, its truth {truth:+.3f} s (tolerance {tol:.3f} s); "
      f"main's {main_idle:+.3f} s; its structural waits grew {grew:+.3f} s")
sys.exit(0 if abs(got - truth) <= tol and grew > 1.0 and abs(main_idle) < 0.05 * grew else 1)
PY
    fail "compare: structural waits ranked with contention, or the mutex's change is not its truth's"
echo PASS
