#!/usr/bin/env bash
# lockblame compare: contexts matched by frame path across DBs whose ids,
# addresses and module bases all differ; excess/share equal the fixtures'
# known differences (tests/cli/make_fixture.py); 3-run scaling table;
# a fix with a known gain and a known loss read both ways; a warning when
# the programs differ.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

check "compare json" "$L" compare --format json "$FX/base.db" "$FX/more.db"
cp "$T/out" "$T/cmp.json"
json_check "queue_push:12 excess 0.9 s of 1.23 s total change (share 0.9/1.23), all idleness" "$T/cmp.json" \
  'rows[0]["function"] == "queue_push" and rows[0]["line"] == 12 and near(rows[0]["a_s"], 0.6) and near(rows[0]["b_s"], 1.5) and near(rows[0]["excess_s"], 0.9) and near(rows[0]["share"], 0.9 / 1.23) and near(rows[0]["excess_idleness_s"], 0.9) and near(rows[0]["excess_work_s"], 0)'
json_check "steal is new in B: a 0, excess 0.1 (share 1/12)" "$T/cmp.json" \
  'near(row(function="steal")["a_s"], 0) and near(row(function="steal")["excess_s"], 0.1) and near(row(function="steal")["share"], 0.1 / 1.23)'
json_check "compute excess 0.1 is work" "$T/cmp.json" \
  'near(row(function="compute")["excess_work_s"], 0.1) and near(row(function="compute")["excess_idleness_s"], 0)'
json_check "Queue::push(int) got cheaper: -0.03, share negative" "$T/cmp.json" \
  'near(row(function="Queue::push(int)")["excess_s"], -0.03) and near(row(function="Queue::push(int)")["share"], -0.03 / 1.23)'
json_check "unknown function matched by module+offset despite other base/ids" "$T/cmp.json" \
  'near(row(function="libc.so.6+0x9abc")["a_s"], 0.01) and near(row(function="libc.so.6+0x9abc")["b_s"], 0.01)'
json_check "one row per context; total excess = 4.03 - 2.86" "$T/cmp.json" \
  'len(rows) == 8 and near(sum(r["excess_s"] for r in rows), 4.03 - 2.86) and near(sum(abs(r["share"]) for r in rows), 1.0) and [abs(r["excess_s"]) for r in rows] == sorted((abs(r["excess_s"]) for r in rows), reverse=True)'

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
grep -q '+0.900  *+73.2%  *0.600  *1.500.*queue_push (queue_bench.c:12)' "$T/out" || fail "compare table row"

check "compare three runs" env COLUMNS=140 "$L" compare "$FX/base.db" "$FX/more.db" "$FX/most.db"
grep -qE '^A +base.db +3 ' "$T/out" || fail "scaling table: run A"
grep -qE '^C +most.db +9 +0.900 +1.67x +56% +6.030 ' "$T/out" || fail "scaling table: run C (9 threads, 0.9 s, 1.67x, 56%, effort 6.03)"
grep -q 'queue_push (queue_bench.c:14)' "$T/out" && fail "unchanged context listed"
grep -q '0.900 2.400.*queue_push (queue_bench.c:12)' "$T/out" || fail "growing excess per run"
grep -q -- '-0.030 -0.030.*Queue::push(int)' "$T/out" || fail "a gain over the series is listed too"
grep -qE '^B +more.db +5 +1.100 +1.36x +82% ' "$T/out" || fail "speedup/efficiency of B: 1.5/1.1 = 1.36x, x 3/5 = 82%"
check "compare three runs json" "$L" compare --format json "$FX/base.db" "$FX/more.db" "$FX/most.db"
json_check "excess per run and growth flags" "$T/out" \
  'near(rows[0]["excess_s"], 2.4) and [round(x, 6) for x in rows[0]["excess_by_run_s"]] == [0.9, 2.4] and rows[0]["grows"] and not row(function="queue_push", line=14)["grows"]'

# A fix with a known gain (queue_push:12 -0.45 s) and loss (compute +0.30 s),
# read both ways: the same rows with opposite signs, B faster then slower.
check "compare fix forwards" "$L" compare --format json "$FX/base.db" "$FX/fixed.db"
json_check "forwards: the gain first (|-0.45| > 0.30), signed shares" "$T/out" \
  'rows[0]["function"] == "queue_push" and near(rows[0]["excess_s"], -0.45) and near(rows[0]["share"], -0.6) and rows[1]["function"] == "compute" and near(rows[1]["excess_s"], 0.30) and near(rows[1]["share"], 0.4)'
check "compare fix backwards" "$L" compare --format json "$FX/fixed.db" "$FX/base.db"
json_check "backwards: the same rows, signs flipped" "$T/out" \
  'rows[0]["function"] == "queue_push" and near(rows[0]["excess_s"], 0.45) and near(rows[0]["share"], 0.6) and rows[1]["function"] == "compute" and near(rows[1]["excess_s"], -0.30) and near(rows[1]["a_s"], 2.1) and near(rows[1]["b_s"], 1.8)'
check "compare fix table forwards" env COLUMNS=120 "$L" compare "$FX/base.db" "$FX/fixed.db"
grep -q '^B is FASTER than A: speedup 1.25x' "$T/out" || fail "forwards: B is faster, 1.5/1.2 = 1.25x"
grep -q 'gains -0.450 s, losses +0.300 s' "$T/out" || fail "forwards: gains and losses"
grep -q -- '-0.450  *-60.0%.*queue_push (queue_bench.c:12)' "$T/out" || fail "forwards: the gain row"
grep -q -- '+0.300  *+40.0%.*compute (queue_bench.c:5)' "$T/out" || fail "forwards: the loss row"
[ -s "$T/err" ] && fail "same program: no warning expected, got: $(cat "$T/err")"
check "compare fix table backwards" env COLUMNS=120 "$L" compare "$FX/fixed.db" "$FX/base.db"
grep -q '^B is SLOWER than A: speedup 0.80x' "$T/out" || fail "backwards: B is slower, 0.80x"
grep -q 'gains -0.300 s, losses +0.450 s' "$T/out" || fail "backwards: gains and losses"
check "compare --by-function -n 1 keeps the largest |change|" "$L" compare --by-function -n 1 "$FX/more.db" "$FX/base.db"
grep -q -- '-0.900 .*queue_push in queue_bench' "$T/out" || fail "by-function -n 1: queue_push's -0.9 s gain"
[ "$(grep -c ' in queue_bench' "$T/out")" = 1 ] || fail "by-function -n 1: one row"
grep -q '^functions by |change| (Change s = B - A' "$T/out" || fail "by-function: the table is not titled 'functions by |change|'"
grep -q 'contexts' "$T/out" && fail "by-function: the output speaks of contexts"
check "compare names contexts without --by-function" "$L" compare -n 1 "$FX/more.db" "$FX/base.db"
grep -q '^contexts by |change| (Change s = B - A' "$T/out" || fail "compare: the table is not titled 'contexts by |change|'"
check "compare --by-function groups an unnamed frame by module" "$L" compare --by-function --format json "$FX/base.db" "$FX/more.db"
json_check "unnamed libc frame: [libc.so.6]" "$T/out" 'near(row(function="[libc.so.6]")["a_s"], 0.01)'
check "compare other program" "$L" compare "$FX/base.db" "$FX/other.db"
[ "$(wc -l < "$T/err")" = 1 ] && grep -q '^lockblame: compare: the runs profile different programs (A: queue_bench, B: other_bench)' "$T/err" ||
    fail "one warning line for different programs, got: $(cat "$T/err")"
echo "PASS: $NCHECKS checks"
