#!/usr/bin/env bash
# The other report views on the fixture DB: --by-lock, --by-thread,
# --top-down, --bottom-up, --flat and --format folded, with known values.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"
DB=$FX/base.db

check "--by-lock json" "$L" report --by-lock --format json "$DB"
json_check "two contended objects, mutex first" "$T/out" \
  'len(rows) == 2 and rows[0]["object"] == "mutex" and rows[1]["object"] == "cond"'
json_check "mutex numbers" "$T/out" \
  'rows[0]["acquisitions"] == 1000 and near(rows[0]["contended_share"], 0.1) and near(rows[0]["wait_s"], 0.84) and near(rows[0]["blame_s"], 0.8) and near(rows[0]["handoff_s"], 0.03) and near(rows[0]["unattributed_s"], 0.01)'
json_check "mutex first seen at queue_push:10, holders push then pop" "$T/out" \
  'rows[0]["first_function"] == "queue_push" and rows[0]["first_line"] == 10 and len(rows[0]["holders"]) == 2 and rows[0]["holders"][0].startswith("queue_push (queue_bench.c:12): 0.600 s") and rows[0]["holders"][1].startswith("queue_pop (queue_bench.c:22): 0.200 s")'
check "--by-lock table" env COLUMNS=120 "$L" report --by-lock "$DB"
grep -q 'holder 0.600 s (75.0%)' "$T/out" || fail "by-lock table: holder line"

# A pool: 26 more mutex objects first seen where the queue mutex was (25
# addresses, one of them re-initialised), 0.01 s of waiting each. Grouped
# (the default), the mutexes are one row; --per-address lists each, and a
# table stops at 20 rows and says how many more there are.
cp "$DB" "$T/pool.db"
sqlite3 "$T/pool.db" "WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 25)
  INSERT INTO sync_object (object, address, first_node_id, acquisitions, contended, wait_s, blame_s, handoff_s, unattributed_s)
  SELECT 'mutex', 0x7000 + 64 * MIN(n, 24), (SELECT first_node_id FROM sync_object WHERE object = 'mutex' AND address IS NOT NULL ORDER BY wait_s DESC LIMIT 1), 10, 1, 0.01, 0.01, 0, 0 FROM i"
check "--by-lock grouped json" "$L" report --by-lock --format json "$T/pool.db"
json_check "grouped: 2 rows; the mutex group has 26 addresses, 27 objects, summed waits" "$T/out" \
  'len(rows) == 2 and rows[0]["object"] == "mutex" and rows[0]["instances"] == 26 and rows[0]["objects"] == 27 and len(rows[0]["addresses"]) == 26 and near(rows[0]["wait_s"], 0.84 + 0.26) and rows[0]["acquisitions"] == 1260'
check "--by-lock --per-address json" "$L" report --by-lock --per-address --format json "$T/pool.db"
json_check "per address: every object (28 rows)" "$T/out" 'len(rows) == 28 and all(r["instances"] == 1 for r in rows)'
check "--by-lock --per-address table" env COLUMNS=120 "$L" report --by-lock --per-address "$T/pool.db"
grep -q '^(8 more objects; -n N shows more)' "$T/out" || fail "per-address table: 20 rows, then a note"
check "--by-lock --per-address -n 30" env COLUMNS=120 "$L" report --by-lock --per-address -n 30 "$T/pool.db"
grep -q 'more objects' "$T/out" && fail "-n 30 shows all 28"

check "--by-thread json" "$L" report --by-thread --format json "$DB"
json_check "three threads" "$T/out" 'len(rows) == 3 and [r["id"] for r in rows] == [0, 1, 2]'
json_check "main thread" "$T/out" \
  'rows[0]["start_routine"] == "main" and near(rows[0]["work_s"], 0.1) and near(rows[0]["idleness_s"], 0)'
json_check "worker 1: work 1.05, blamed 0.55, wait 0.61, overhead 0.02" "$T/out" \
  'rows[1]["start_routine"] == "worker" and near(rows[1]["work_s"], 1.05) and near(rows[1]["idleness_s"], 0.55) and near(rows[1]["wait_s"], 0.61) and near(rows[1]["overhead_s"], 0.02) and near(rows[1]["idleness_share"], 0.55 / 1.6) and rows[1]["tid"] == 1001'

check "--top-down json" "$L" report --top-down --format json "$DB"
json_check "root, main, worker inclusive 0.9" "$T/out" \
  '[r["function"] for r in rows[:3]] == ["[root]", "main", "worker"] and all(near(r["inclusive_s"], 0.9) for r in rows[:3])'
json_check "hot path first: queue_push:12 right below worker" "$T/out" \
  'rows[3]["function"] == "queue_push" and rows[3]["line"] == 12 and near(rows[3]["exclusive_s"], 0.6) and rows[3]["depth"] == 3'
json_check "effort share of the root = 0.9 / 2.86" "$T/out" 'near(rows[0]["effort_share"], 0.9 / 2.86)'
check "--top-down -n 1" "$L" report --top-down --format json -n 1 "$DB"
json_check "depth limited" "$T/out" 'max(r["depth"] for r in rows) == 1'
check "--top-down --metric work" "$L" report --top-down --metric work --format json "$DB"
json_check "work: root 1.96, compute incl 1.81 excl 1.8" "$T/out" \
  'near(rows[0]["inclusive_s"], 1.96) and near(row(function="compute")["inclusive_s"], 1.81) and near(row(function="compute")["exclusive_s"], 1.8)'
check "--top-down table" env COLUMNS=100 "$L" report --top-down "$DB"
grep -q '^ *0.600 *66.7% *0.600 *66.7% .*queue_push (queue_bench.c:12)' "$T/out" || fail "top-down table row"

check "--bottom-up json" "$L" report --bottom-up --format json "$DB"
json_check "queue_push 0.7 with callers worker <- main" "$T/out" \
  'near(row(procedure="queue_push", depth=0)["inclusive_s"], 0.7) and near(row(procedure="queue_push", depth=1)["inclusive_s"], 0.7) and row(procedure="queue_push", depth=1)["function"] == "worker" and row(procedure="queue_push", depth=2)["function"] == "main"'

check "--flat json" "$L" report --flat --format json "$DB"
json_check "flat: four procedures, queue_push first (exclusive 0.7)" "$T/out" \
  'len(rows) == 4 and rows[0]["function"] == "queue_push" and near(rows[0]["exclusive_s"], 0.7) and near(row(function="main")["inclusive_s"], 0.9) and rows[0]["module"] == "queue_bench"'
check "--flat -n 2" "$L" report --flat --format json -n 2 "$DB"
json_check "two rows" "$T/out" 'len(rows) == 2'
# a row per procedure, no callers: its title promises none (--bottom-up's does)
check "--flat table" env COLUMNS=120 "$L" report --flat "$DB"
grep -qE '^ *Incl s .* Procedure *$' "$T/out" || fail "flat table: the title is not 'Procedure'"
grep -q 'callers below' "$T/out" && fail "flat table: 'callers below' in a view with no callers"
grep -q '<- ' "$T/out" && fail "flat table: a caller row"
check "--bottom-up table" env COLUMNS=120 "$L" report --bottom-up "$DB"
grep -q 'Procedure (callers below)' "$T/out" || fail "bottom-up table: no 'Procedure (callers below)' title"

check "folded idleness" "$L" report --format folded "$DB"
cat > "$T/want" <<'W'
main;worker;queue_push 700000
main;worker;queue_pop 200000
W
sort "$T/out" | diff - <(sort "$T/want") || fail "folded idleness lines"
check "folded work" "$L" report --format folded --metric work "$DB"
grep -qx 'main;worker;compute 1800000' "$T/out" || fail "folded: compute"
grep -qx 'main;worker;compute;libc.so.6+0x9abc 10000' "$T/out" || fail "folded: module+offset"
grep -qx 'main;worker;Queue::push(int) 50000' "$T/out" || fail "folded: demangled"
grep -qvE '^[^ ]+( [^ ]+)* [0-9]+$' "$T/out" && fail "folded: malformed line"
echo "ok: folded lines"

for v in --by-lock --by-thread --top-down --bottom-up --flat; do
    for f in table csv json; do
        "$L" report $v --format $f "$DB" > "$T/out" 2> "$T/err" || fail "report $v --format $f"
        [ ! -s "$T/err" ] || fail "report $v --format $f wrote to stderr"
        if [ $f = json ]; then python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" || fail "$v json"; fi
    done
done
echo "ok: every view in every format"
echo "PASS: $NCHECKS checks"
