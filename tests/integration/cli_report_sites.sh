#!/usr/bin/env bash
# lockblame report --by-release-site on the fixture DB (tests/cli/make_fixture.py):
# JSON values equal the fixture's known blame, CSV has the contract columns,
# the table shows header, totals, conservation line and caller chains.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

check "json report" "$L" report --by-release-site --format json "$FX/base.db"
cp "$T/out" "$T/sites.json"
json_check "three release sites, blame order" "$T/sites.json" \
  'len(rows) == 3 and [r["blame_s"] for r in rows] == sorted([r["blame_s"] for r in rows], reverse=True)'
json_check "queue_push:12 mutex blame 0.6 s, share 2/3, 1000 releases" "$T/sites.json" \
  'near(row(function="queue_push", line=12)["blame_s"], 0.6) and near(row(function="queue_push", line=12)["share"], 0.6/0.9) and row(function="queue_push", line=12)["count"] == 1000 and row(function="queue_push", line=12)["object"] == "mutex" and row(function="queue_push", line=12)["file"] == "queue_bench.c"'
json_check "queue_pop:22 mutex blame 0.2 s" "$T/sites.json" \
  'near(row(function="queue_pop")["blame_s"], 0.2) and row(function="queue_pop")["object"] == "mutex" and row(function="queue_pop")["blamed_count"] == 4'
json_check "queue_push:14 cond blame 0.1 s, 10 signals" "$T/sites.json" \
  'near(row(function="queue_push", line=14)["blame_s"], 0.1) and row(function="queue_push", line=14)["object"] == "cond" and row(function="queue_push", line=14)["count"] == 10'
json_check "shares sum to 1" "$T/sites.json" 'near(sum(r["share"] for r in rows), 1.0)'
json_check "callers innermost first" "$T/sites.json" \
  'rows[0]["callers"] == ["worker (queue_bench.c:40)", "main (queue_bench.c:60)"] and rows[0]["module"] == "queue_bench"'
json_check "value_s equals blame_s for idleness" "$T/sites.json" 'all(near(r["value_s"], r["blame_s"]) for r in rows)'

check "default view is --by-release-site" "$L" report --format json "$FX/base.db"
cmp -s "$T/out" "$T/sites.json" || fail "default view differs from --by-release-site"

check "-n 1 limits the caller chain" "$L" report --format json -n 1 "$FX/base.db"
json_check "one caller" "$T/out" 'all(len(r["callers"]) == 1 for r in rows)'

check "csv report" "$L" report --format csv "$FX/base.db"
head -1 "$T/out" | tr ',' '\n' > "$T/cols"
for c in function file line object blame_s share count; do
    grep -qx "$c" "$T/cols" || fail "CSV header lacks $c: $(head -1 "$T/out")"
done
[ "$(wc -l < "$T/out")" -eq 4 ] || fail "CSV: want header + 3 rows"
grep -q '^queue_push,queue_bench.c,12,mutex,0.6,' "$T/out" || fail "CSV row for queue_push:12"
echo "ok: csv header and rows"

check "table report" env COLUMNS=120 "$L" report "$FX/base.db"
grep -q '^command: *\./queue_bench 2' "$T/out" || fail "table: no command line"
grep -q 'task-clock' "$T/out" || fail "table: no event"
grep -q 'threads: *3' "$T/out" || fail "table: no thread count"
grep -q 'effort: *2.860 s = work 1.960 s + idleness 0.900 s (idleness 31.5% of effort)' "$T/out" \
    || fail "table: effort line"
grep -q 'wait: *0.950 s = blame 0.900 s + hand-off latency 0.030 s + unattributed 0.020 s (measured by the waiters: 0.950 s)' "$T/out" \
    || fail "table: conservation line"
grep -q '0.600  *66.7%.*queue_push (queue_bench.c:12)' "$T/out" || fail "table: top site"
grep -q '^ *<- worker (queue_bench.c:40)' "$T/out" || fail "table: caller chain"
echo "ok: table header, totals, caller chains"

check "--metric wait ranks waiting frames" "$L" report --metric wait --format json "$FX/base.db"
json_check "wait at queue_push:10 0.84 s (mutex, 100 contended)" "$T/out" \
  'rows[0]["function"] == "queue_push" and rows[0]["line"] == 10 and near(rows[0]["value_s"], 0.84) and rows[0]["object"] == "mutex" and rows[0]["count"] == 100'
check "--metric work" "$L" report --metric work --format json "$FX/base.db"
json_check "work: compute 1.8 s first, Queue::push(int) demangled" "$T/out" \
  'rows[0]["function"] == "compute" and near(rows[0]["value_s"], 1.8) and any(r["function"] == "Queue::push(int)" for r in rows) and any(r["function"] == "libc.so.6+0x9abc" for r in rows)'

# Default DB: the newest lockblame.*.db in the current directory.
mkdir "$T/cwd"
cp "$FX/base.db" "$T/cwd/lockblame.old.1.db"
cp "$FX/more.db" "$T/cwd/lockblame.new.2.db"
touch -d '2020-01-01' "$T/cwd/lockblame.old.1.db"
(cd "$T/cwd" && "$L" report --format json) > "$T/def.json" || fail "report without DB"
json_check "default DB is the newest (more.db: queue_push 1.5 s)" "$T/def.json" 'near(rows[0]["blame_s"], 1.5)'
echo "PASS: $NCHECKS checks"
