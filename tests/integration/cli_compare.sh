#!/usr/bin/env bash
# lockblame compare: contexts matched by frame path across DBs whose ids,
# addresses and module bases all differ; excess/share equal the fixtures'
# known differences (tests/cli/make_fixture.py); 3-run scaling table.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

check "compare json" "$L" compare --format json "$FX/base.db" "$FX/more.db"
cp "$T/out" "$T/cmp.json"
json_check "queue_push:12 excess 0.9 s of 1.2 s positive (share 0.75), all idleness" "$T/cmp.json" \
  'rows[0]["function"] == "queue_push" and rows[0]["line"] == 12 and near(rows[0]["a_s"], 0.6) and near(rows[0]["b_s"], 1.5) and near(rows[0]["excess_s"], 0.9) and near(rows[0]["share"], 0.75) and near(rows[0]["excess_idleness_s"], 0.9) and near(rows[0]["excess_work_s"], 0)'
json_check "steal is new in B: a 0, excess 0.1 (share 1/12)" "$T/cmp.json" \
  'near(row(function="steal")["a_s"], 0) and near(row(function="steal")["excess_s"], 0.1) and near(row(function="steal")["share"], 0.1 / 1.2)'
json_check "compute excess 0.1 is work" "$T/cmp.json" \
  'near(row(function="compute")["excess_work_s"], 0.1) and near(row(function="compute")["excess_idleness_s"], 0)'
json_check "Queue::push(int) got cheaper: -0.03" "$T/cmp.json" \
  'near(row(function="Queue::push(int)")["excess_s"], -0.03)'
json_check "unknown function matched by module+offset despite other base/ids" "$T/cmp.json" \
  'near(row(function="libc.so.6+0x9abc")["a_s"], 0.01) and near(row(function="libc.so.6+0x9abc")["b_s"], 0.01)'
json_check "one row per context; total excess = 4.03 - 2.86" "$T/cmp.json" \
  'len(rows) == 8 and near(sum(r["excess_s"] for r in rows), 4.03 - 2.86) and near(sum(r["share"] for r in rows if r["share"] > 0), 1.0)'

check "compare --by-function" "$L" compare --by-function --format json "$FX/base.db" "$FX/more.db"
json_check "queue_push as a function: 0.7 -> 1.6" "$T/out" \
  'near(row(function="queue_push")["a_s"], 0.7) and near(row(function="queue_push")["b_s"], 1.6)'

check "compare csv" "$L" compare --format csv "$FX/base.db" "$FX/more.db"
head -1 "$T/out" | tr ',' '\n' > "$T/cols"
for c in function a_s b_s excess_s share file line excess_work_s excess_idleness_s; do
    grep -qx "$c" "$T/cols" || fail "compare CSV header lacks $c"
done
echo "ok: compare csv header"

check "compare table" env COLUMNS=120 "$L" compare "$FX/base.db" "$FX/more.db"
grep -q '0.900  *75.0%  *0.600  *1.500.*queue_push (queue_bench.c:12)' "$T/out" || fail "compare table row"

check "compare three runs" env COLUMNS=140 "$L" compare "$FX/base.db" "$FX/more.db" "$FX/most.db"
grep -qE '^A +base.db +3 ' "$T/out" || fail "scaling table: run A"
grep -qE '^C +most.db +9 +0.900 +6.030 ' "$T/out" || fail "scaling table: run C (9 threads, 0.9 s, effort 6.03)"
grep -q 'queue_push (queue_bench.c:14)' "$T/out" && fail "flat context listed as growing"
grep -q '0.900 2.400.*queue_push (queue_bench.c:12)' "$T/out" || grep -q '2.400.*0.900 2.400' "$T/out" || fail "growing excess per run"
check "compare three runs json" "$L" compare --format json "$FX/base.db" "$FX/more.db" "$FX/most.db"
json_check "excess per run and growth flags" "$T/out" \
  'near(rows[0]["excess_s"], 2.4) and [round(x, 6) for x in rows[0]["excess_by_run_s"]] == [0.9, 2.4] and rows[0]["grows"] and not row(function="queue_push", line=14)["grows"]'
echo "PASS: $NCHECKS checks"
