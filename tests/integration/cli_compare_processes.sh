#!/usr/bin/env bash
# lockblame compare --pid / --comm on process-tree runs. Two runs of
# `sh -c "taskqueue N; gt_cond"` (1 and 2 workers) each hold both programs;
# compare --comm keeps one program's processes in every run: its rows carry
# none of the other program's frames (which the unselected comparison does
# show), its run totals are `report --comm`'s, and the table header names
# the selection with each run's count (from the databases themselves).
# --pid: a pid present in both databases selects it; a pid missing from
# one, a command nothing matches, and bad values exit 2 with one line.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"
BUILD=${BUILD:-$ROOT/build}
WORKLOADS=${WORKLOADS:-$BUILD/tests/workloads}
DEMO=$BUILD/demo/taskqueue
COND=$WORKLOADS/gt_cond
for f in "$DEMO" "$COND" "${LOCKBLAME_LIB:-$BUILD/liblockblame.so}"; do
    [ -x "$f" ] || [ -f "$f" ] || fail "$f is not built (make check builds it)"
done
q() { sqlite3 "$1" "$2" 2>/dev/null || echo "?"; }

A=$T/w1.db B=$T/w2.db
for w in 1 2; do
    "$L" run -o "$T/w$w.db" -- sh -c "\"$DEMO\" $w; \"$COND\"" > "$T/run$w.out" 2> "$T/run$w.err" ||
        { cat "$T/run$w.err"; fail "the process tree with $w workers failed"; }
done
# What the databases hold: every process, and each program's.
nA=$(q "$A" "SELECT COUNT(*) FROM run"); nB=$(q "$B" "SELECT COUNT(*) FROM run")
tqA=$(q "$A" "SELECT COUNT(*) FROM run WHERE executable LIKE '%/taskqueue'")
tqB=$(q "$B" "SELECT COUNT(*) FROM run WHERE executable LIKE '%/taskqueue'")
gcB=$(q "$B" "SELECT COUNT(*) FROM run WHERE executable LIKE '%/gt_cond'")
echo "processes: A $nA ($tqA taskqueue), B $nB ($tqB taskqueue, $gcB gt_cond)"
[ "$tqA" -ge 1 ] && [ "$tqB" -ge 1 ] && [ "$gcB" -ge 1 ] && [ "$nA" -gt "$tqA" ] ||
    fail "each run should hold both programs: A $nA ($tqA taskqueue), B $nB ($tqB taskqueue)"

# Both programs' frames in the unselected comparison: the checks below can fail.
check "compare, all processes" "$L" compare --format json "$A" "$B"
json_check "unselected rows hold both programs' frames" "$T/out" \
  'any(r["module"] == "taskqueue" for r in rows) and any(r["module"] == "gt_cond" for r in rows)'
check "compare table, all processes" env COLUMNS=120 "$L" compare "$A" "$B"
grep -qx "processes: all (A: $nA, B: $nB)" "$T/out" || { head -3 "$T/out"; fail "header: all processes, each run's count"; }

check "compare --comm taskqueue json" "$L" compare --comm taskqueue --format json "$A" "$B"
json_check "--comm taskqueue: taskqueue's frames, none of gt_cond's" "$T/out" \
  'any((r["file"] or "").endswith("taskqueue.c") for r in rows) and not any(r["module"] == "gt_cond" or (r["file"] or "").endswith("gt_cond.c") for r in rows)'
check "compare --comm taskqueue table" env COLUMNS=120 "$L" compare --comm taskqueue "$A" "$B"
cp "$T/out" "$T/tq.txt"
head -4 "$T/tq.txt"
grep -qx "processes: comm=taskqueue (A: $tqA of $nA, B: $tqB of $nB)" "$T/tq.txt" ||
    fail "header does not name the selection and the counts"
grep -q 'gt_cond' "$T/tq.txt" && fail "--comm taskqueue table names gt_cond"
# Run A's effort in the scaling table is report --comm's for the same processes.
check "report --comm taskqueue" "$L" report --comm taskqueue "$A"
want=$(sed -n 's/^effort: *\([0-9.]*\) s = .*/\1/p' "$T/out")
got=$(awk '$1 == "A" { print $7 }' "$T/tq.txt")
echo "run A effort: compare --comm $got s, report --comm $want s"
[ -n "$want" ] && [ "$got" = "$want" ] || fail "compare --comm effort of A '$got', report --comm says '$want'"
check "compare --comm taskqueue three runs" "$L" compare --comm taskqueue --format json "$A" "$B" "$A"
json_check "three runs: no gt_cond frame" "$T/out" \
  'len(rows) > 0 and not any(r["module"] == "gt_cond" for r in rows)'

check "compare --comm gt_cond --by-function csv" "$L" compare --comm gt_cond --by-function --format csv "$A" "$B"
python3 - "$T/out" <<'PY' || fail "--comm gt_cond --by-function csv: rows of the other program"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mods = {r["module"] for r in rows}
print("modules:", sorted(mods))
sys.exit(0 if "gt_cond" in mods and "taskqueue" not in mods else 1)
PY
echo "ok: --comm gt_cond --by-function csv: gt_cond's functions, none of taskqueue's"

# --pid: taskqueue's pid in A selects it in A and in A again.
pid=$(q "$A" "SELECT pid FROM run WHERE executable LIKE '%/taskqueue' LIMIT 1")
npid=$(q "$A" "SELECT COUNT(*) FROM run WHERE pid = '$pid'")
check "compare --pid" env COLUMNS=120 "$L" compare --pid "$pid" "$A" "$A"
grep -qx "processes: pid=$pid (A: $npid of $nA, B: $npid of $nA)" "$T/out" ||
    { head -3 "$T/out"; fail "--pid header"; }
check "compare --pid json" "$L" compare --pid "$pid" --format json "$A" "$A"
json_check "--pid of taskqueue: no gt_cond frame" "$T/out" \
  'any(r["module"] == "taskqueue" for r in rows) and not any(r["module"] == "gt_cond" for r in rows)'
if [ "$(q "$B" "SELECT COUNT(*) FROM run WHERE pid = '$pid'")" = 0 ]; then
    usage_error "--pid missing from B" "$L" compare --pid "$pid" "$A" "$B"
    grep -q "w2.db: no process with pid $pid" "$T/err" || fail "the line does not name B's database and the pid"
else
    echo "(pid $pid is in both databases: the missing-pid case is skipped)"
fi
usage_error "--comm matching nothing" "$L" compare --comm no_such_program "$A" "$B"
grep -q "w1.db: no process matches --comm no_such_program" "$T/err" || fail "the line does not name A's database"
usage_error "--pid not a number" "$L" compare --pid abc "$A" "$B"
usage_error "--pid 0" "$L" compare --pid 0 "$A" "$B"
usage_error "--pid without a value" "$L" compare "$A" "$B" --pid
usage_error "--comm empty" "$L" compare --comm '' "$A" "$B"
echo "PASS: $NCHECKS checks"
