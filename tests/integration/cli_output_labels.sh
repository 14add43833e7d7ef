#!/usr/bin/env bash
# Output that must not confuse, on the fixture DB with known
# contents (tests/cli/make_fixture.py):
# - a recorded command padded with spaces (a process title) shows trimmed;
# - --metric overhead labels its root row (the samples the writer dropped);
# - --by-thread says "Caused" for blame caused and "Waited" for own waiting,
#   with values matching the fixture (worker 1: caused 0.55 s, waited 0.61 s);
# - the HTML page's holders column has no raw floats (1e-05 style).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"
cp "$FX/base.db" "$T/pad.db"
sqlite3 "$T/pad.db" "UPDATE run SET command = command || '      ';
  INSERT INTO metric (node_id, thread_id, work_s, overhead_s, wait_s, idle_mutex_s, idle_spin_s,
    idle_rwlock_s, idle_cond_s, idle_barrier_s, idle_sem_s, idle_join_s, blamed_count)
  VALUES (0, 1, 0, 0.004, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  UPDATE object_blame SET blame_s = 0.0000123 WHERE object_id = (SELECT id FROM sync_object WHERE object = 'cond' AND address IS NOT NULL)"

check "report padded command" "$L" report "$T/pad.db"
grep -q '^command:  ./queue_bench 2$' "$T/out" || fail "command not trimmed: $(grep '^command' "$T/out" | cat -A)"

check "--metric overhead" env COLUMNS=120 "$L" report --metric overhead "$T/pad.db"
grep -q '0.004 .*\[root: dropped samples, no call path\]' "$T/out" || fail "overhead root row unlabelled"

check "--by-thread table" env COLUMNS=120 "$L" report --by-thread "$T/pad.db"
grep -q 'Caused s  *Waited s' "$T/out" || fail "by-thread column titles"
grep -qE '^ *1 +1001 +1\.050 +0\.550 +0\.610 ' "$T/out" || fail "worker 1: work 1.05, caused 0.55, waited 0.61"
grep -q "^Caused s: blame caused" "$T/out" || fail "by-thread legend"

check "--format html" "$L" report --format html "$T/pad.db"
grep -qE '[0-9]e-[0-9]{2} s' "$T/out" && fail "raw float in the HTML page: $(grep -oE '[^>]{0,40}[0-9]e-[0-9]{2} s' "$T/out" | head -1)"
grep -q '12.3 us' "$T/out" || fail "tiny holder blame in microseconds"
echo "PASS: $NCHECKS checks"
