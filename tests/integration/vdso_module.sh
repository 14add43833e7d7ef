#!/usr/bin/env bash
# The vDSO is one module, "[vdso]", in every process and every run: libdwfl
# names it "[vdso: PID]", and with the pid in the name the same vDSO
# function of two runs was two rows of `compare --by-function` (one gone,
# one new) and two procedures in a process tree's --flat report.
# tests/workloads/vdso_clock spends most of its time in
# __vdso_clock_gettime. Run A is one process of it, run B a process tree
# of two with half the time each (two pids in one database, the same
# total time). Checked:
#   - the writer stores "[vdso]", never "[vdso: PID]";
#   - compare --by-function A B: one row per vDSO function, with time in
#     both runs, module "[vdso]";
#   - report --flat of B: one row per vDSO function over both processes,
#     shown as "[vdso]" (no pid, not "[[vdso]]");
#   - an older database that still has "[vdso: PID]" (B rewritten, one pid
#     per process) reads the same: compare, --flat, pprof's mapping names.
source "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/vdso_clock
L=$LOCKBLAME_CLI
need "$W" "$LOCKBLAME_LIB" "$L"

"$L" run -o "$tmp/a.db" -- "$W" 0.4 >"$tmp/a.out" 2>"$tmp/a.err" || { cat "$tmp/a.err"; fail "run A exited $?"; }
"$L" run -o "$tmp/b.db" -- sh -c "\"$W\" 0.2; \"$W\" 0.2" >"$tmp/b.out" 2>"$tmp/b.err" ||
    { cat "$tmp/b.err"; fail "run B exited $?"; }
nb=$(rows "$tmp/b.db" "SELECT COUNT(DISTINCT pid) FROM run WHERE executable LIKE '%/vdso_clock'")
[ "$nb" = 2 ] || fail "run B should hold two vdso_clock processes, holds $nb"

for db in a b; do
    mods=$(rows "$tmp/$db.db" "SELECT group_concat(path, ' | ') FROM module WHERE path LIKE '[vdso%'")
    echo "run ${db^^} vDSO modules: $mods"
    case " $mods |" in
        *'[vdso:'*) bad "run ${db^^}: the writer stored the pid in the vDSO's name" ;;
        *' [vdso] |'*) ;;
        *) bad "run ${db^^}: no module named [vdso]" ;;
    esac
done

# vdso_rows JSON WHAT: the JSON rows (compare or report --flat) whose
# module is the vDSO: at least one names clock_gettime, each function once,
# module "[vdso]" exactly; for compare, each has time in both runs.
vdso_rows() {
    python3 - "$1" "$2" <<'PY' || bad "$2"
import collections, json, sys
rows = [r for r in json.load(open(sys.argv[1])) if (r.get("module") or "").startswith("[vdso")]
for r in rows:
    print("  %s  module %s  %s" % (r["function"], r["module"],
          " ".join("%s=%s" % (k, r[k]) for k in ("a_s", "b_s", "excess_s", "exclusive_s") if k in r)))
per_function = collections.Counter(r["function"] for r in rows)
ok = (any("clock_gettime" in f for f in per_function)
      and all(n == 1 for n in per_function.values())
      and all(r["module"] == "[vdso]" for r in rows)
      and all(r["a_s"] > 0 and r["b_s"] > 0 for r in rows if "a_s" in r and "clock_gettime" in r["function"]))
sys.exit(0 if ok else 1)
PY
}

# check_db B_DB LABEL: compare A with B_DB and report --flat B_DB.
check_db() {
    local b=$1 label=$2
    "$L" compare --by-function --format json "$tmp/a.db" "$b" >"$tmp/cmp.json" || fail "$label: compare exited $?"
    echo "compare --by-function A $label:"
    vdso_rows "$tmp/cmp.json" "$label: compare --by-function should give one [vdso] row per function, in both runs"
    "$L" report --flat --metric work --format json "$b" >"$tmp/flat.json" || fail "$label: report --flat exited $?"
    echo "report --flat $label:"
    vdso_rows "$tmp/flat.json" "$label: report --flat should give one [vdso] row per function over both processes"
    "$L" report --flat --metric work "$b" >"$tmp/flat.txt" || fail "$label: report --flat table exited $?"
    grep -q 'clock_gettime \[vdso\]$' "$tmp/flat.txt" || { cat "$tmp/flat.txt"; bad "$label: the --flat table does not show [vdso]"; }
    ! grep -q 'vdso:\|\[\[vdso' "$tmp/flat.txt" || { grep vdso "$tmp/flat.txt"; bad "$label: the --flat table shows the pid or [[vdso]]"; }
    "$L" report --format pprof -o "$tmp/b.pb.gz" "$b" || fail "$label: report --format pprof exited $?"
    gzip -dc "$tmp/b.pb.gz" | grep -aq '\[vdso\]' || bad "$label: pprof has no mapping named [vdso]"
    ! gzip -dc "$tmp/b.pb.gz" | grep -aq 'vdso:' || bad "$label: pprof names the vDSO with a pid"
}

check_db "$tmp/b.db" "run B"
# A database written before the fix: each process's vDSO named with its pid.
cp "$tmp/b.db" "$tmp/old.db"
sqlite3 "$tmp/old.db" "UPDATE module SET path = '[vdso: ' || (40000 + id) || ']' WHERE path LIKE '[vdso%'"
[ "$(rows "$tmp/old.db" "SELECT COUNT(DISTINCT path) FROM module WHERE path LIKE '[vdso: %]'")" = 2 ] ||
    fail "could not make an old-style database with two [vdso: PID] modules"
check_db "$tmp/old.db" "old-style B"
[ "$errors" -eq 0 ] || fail "$errors check(s) failed"
echo "PASS: vdso_module"
