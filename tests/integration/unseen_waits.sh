#!/usr/bin/env bash
# Waits lockblame cannot see are said, never passed over (docs/INTERNALS.md,
# "Waits it cannot see"). tests/workloads_user/unseen_stdio.c blocks four
# threads on stdio's FILE lock (glibc's internal lock, a futex call made
# inline) while a fifth holds it with flockfile, computing: by construction
# most of the threads' time is off CPU in no wait lockblame sees. Checked:
#  - the waiters' thread.unseen_s sums to at least 80% of their blocked
#    time as the workload measured it (time in fputc less their CPU time
#    and run delay meanwhile), and the holder's CPU-bound life is not unseen;
#  - the exit summary (plain LD_PRELOAD and lockblame run) has the line
#    naming the likely causes, and the report header its unseen: line, also
#    beside the table's "(no blame outside structural waits)"; --by-thread
#    gives each waiter its share, --by-process the process's sum;
#  - lockblame merge keeps the figures; a version-4 database (no such
#    columns) still reads, without the line;
#  - a fork child's threads begin at the fork (unseen_fork.c): the time its
#    parent ran before the fork is not the child's unseen time;
#  - a live thread's time ends where sampling stopped, before the exit
#    write: a CPU-bound program whose write is longer than it ran
#    (many_sites.c) has next to no unseen time and no line;
#  - a control whose threads wait on pthread objects (gt_queue_o2, no sleep,
#    no stdio in its timed part) has no such line: its waits are seen;
#  - a run delay is left unread (NULL) only where it could not bring the
#    thread's unseen time from 1 ms or more, and read where it could: a
#    thread whose lifetime less its CPU time and seen waits is over 1 ms
#    has one, and a main thread (live at the write) whose figure is under
#    1 ms has none (fork_template's children, whose main threads join
#    their workers, and many_sites are such threads where their run delay
#    is short; the rule itself, both ways, is a unit test's).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/unseen_stdio
C=$WORKLOADS_USER/gt_queue_o2
L=$LOCKBLAME_CLI
need "$LOCKBLAME_LIB" "$L" "$W" "$C" "$WORKLOADS_USER/unseen_fork" "$WORKLOADS_USER/fork_template" \
    "$WORKLOADS_USER/many_sites"
[ -r /proc/thread-self/schedstat ] || { echo "SKIP: no /proc/thread-self/schedstat (run delay unknown)"; exit 77; }
cause="off CPU in waits lockblame cannot see .*: likely glibc's internal locks (malloc, stdio), futex calls made inline, sleep, I/O or child processes"

# check_unseen GROUND_TRUTH DB: the waiters' unseen time against their
# blocked time as the workload measured it.
check_unseen() {
python3 - "$1" "$2" <<'PY' || return 1
import json, sqlite3, sys
truth = json.load(open(sys.argv[1]))
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
rows = con.execute("SELECT t.id, t.end_s - t.start_s, t.cpu_s, t.runqueue_s, t.unseen_s, f.function"
                   " FROM thread t LEFT JOIN frame f ON f.id = t.start_frame_id ORDER BY t.id").fetchall()
for r in rows:
    print(f"  thread {r[0]} {r[5] or 'main'}: life {r[1]:.3f} s, cpu {r[2]:.3f} s,"
          f" run delay {r[3] if r[3] is None else round(r[3], 3)} s, unseen {r[4]:.3f} s")
waiters = sum(r[4] for r in rows if r[5] == "waiter")
holder = sum(r[4] for r in rows if r[5] == "holder")
total = sum(r[4] for r in rows)
blocked, off_cpu = truth["blocked_s"], truth["blocked_off_cpu_s"]
print(f"unseen: waiters {waiters:.3f} s, holder {holder:.3f} s, all {total:.3f} s;"
      f" the waiters timed {blocked:.3f} s in fputc, {off_cpu:.3f} s of it off CPU, not runnable")
ok = waiters >= 0.8 * off_cpu and total <= sum(r[1] for r in rows)
# The holder computes while it holds: on CPU or runnable, not unseen.
ok = ok and holder <= 0.25 * blocked / truth["waiters"]
sys.exit(0 if ok else 1)
PY
}

# check_run_delay_rule DB: which threads' run delay was read (runqueue_s
# not NULL) against report/writer/tables.c's rule, with 0.1 ms either
# side of the 1 ms bound left to the rounding of the stored figures. Any
# thread left unread must be under 1 ms by either rule. The live rule
# (read from 1 ms of unseen time without the delay) is applied to main
# threads only (the process's first, tid = pid), live at the write in the
# programs checked here, which fork only from main and end by exit or a
# return from main: a thread that ended read its delay by the exit rule
# (off CPU over 1 ms, seen waits not counted: core/thread.c), and its row
# does not say it ended. Both ways of the live rule, with no such thread
# needed here, are tests/unit/unseen.c's
# test_write_reads_live_delay_from_1_ms_unseen.
check_run_delay_rule() {
python3 - "$1" <<'PY' || return 1
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = con.execute("SELECT t.id, t.tid = r.pid, t.end_s - t.start_s - t.cpu_s,"
                   " COALESCE(w.wait_s, 0), t.runqueue_s, t.unseen_s FROM thread t"
                   " JOIN run r ON r.id = t.run_id LEFT JOIN"
                   " (SELECT thread_id, TOTAL(wait_s) AS wait_s FROM metric GROUP BY thread_id) w"
                   " ON w.thread_id = t.id").fetchall()
ok, unread_mains, read_mains = True, 0, 0
for tid, main, off_cpu, seen, delay, unseen in rows:
    without = max(off_cpu, 0) - seen  # the unseen time without the delay
    wrong = (delay is None and unseen > 0.0011) or (delay is None and without > 0.0011) or \
            (main and delay is not None and without < 0.0009)
    if main:
        unread_mains += delay is None
        read_mains += delay is not None
    if wrong:
        ok = False
        print(f"  thread {tid}{' (main)' if main else ''}: off CPU {off_cpu * 1e3:.3f} ms,"
              f" seen waits {seen * 1e3:.3f} ms, run delay {delay}, unseen {unseen * 1e3:.3f} ms")
print(f"  {len(rows)} threads; main threads with their run delay read {read_mains},"
      f" left unread {unread_mains}")
sys.exit(0 if ok else 1)
PY
}

echo "== unseen_stdio under LD_PRELOAD"
LOCKBLAME_OUTPUT=$tmp/u.db GROUND_TRUTH=$tmp/gt.json preloaded "$W" 2>"$tmp/u.err" || fail "workload exited $?"
cat "$tmp/u.err"
need "$tmp/u.db" "$tmp/gt.json"
grep -q "^lockblame: threads spent .*$cause" "$tmp/u.err" || bad "no unseen-waits line in the exit summary"
check_unseen "$tmp/gt.json" "$tmp/u.db" || bad "unseen time does not match the workload's blocked time"
"$L" report "$tmp/u.db" >"$tmp/u.txt" || fail "report exited $?"
cat "$tmp/u.txt"
grep -q "^unseen:   threads spent .*$cause" "$tmp/u.txt" || bad "no unseen: line in the report header"
grep -q "^(no blame outside structural waits; see unseen: above)" "$tmp/u.txt" ||
    bad "the table does not point at the unseen: line"
"$L" report --by-thread --format json "$tmp/u.db" >"$tmp/threads.json" || fail "report --by-thread exited $?"
python3 - "$tmp/gt.json" "$tmp/threads.json" <<'PY' || bad "--by-thread does not show each waiter's unseen time"
import json, sys
truth, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
waiters = [r["unseen_s"] for r in rows if r["start_routine"] == "waiter"]
print("--by-thread unseen_s of the waiters:", waiters)
share = truth["blocked_off_cpu_s"] / truth["waiters"]
sys.exit(0 if len(waiters) == truth["waiters"] and all(w >= 0.6 * share for w in waiters) else 1)
PY
"$L" report --by-process --format json "$tmp/u.db" >"$tmp/procs.json" || fail "report --by-process exited $?"
p=$(python3 -c 'import json, sys; print("%.6f" % json.load(open(sys.argv[1]))[0]["unseen_s"])' "$tmp/procs.json")
d=$(rows "$tmp/u.db" "SELECT printf('%.6f', TOTAL(unseen_s)) FROM thread")
echo "  --by-process unseen_s $p, the threads' $d"
[ "$p" = "$d" ] || bad "--by-process does not give the process's unseen time"
"$L" report --format html "$tmp/u.db" >"$tmp/u.html" || fail "report --format html exited $?"
grep -q '<th>unseen</th>' "$tmp/u.html" || bad "the HTML header has no unseen row"

# In a pid namespace the threads' numbers are the namespace's: with /proc
# mounted for it (a container) they are /proc's too, and a thread builds
# its schedstat path from its own numbers; with the host's /proc they are
# not, and it reads the path from /proc/thread-self (util/run_delay.c).
# Another thread's or process's statistics would show here as a run delay
# beside which the waiters' unseen time falls short. With the host's /proc
# the tree's root says once what it cannot look up by pid there.
host_proc="with the host's /proc"
for mount in --mount-proc ""; do
    where=${mount:-$host_proc}
    unshare --pid --fork $mount true 2>/dev/null || { echo "  (no pid namespace $where here)"; continue; }
    echo "== unseen_stdio in a pid namespace $where"
    rm -f "$tmp/ns.db" "$tmp/ns.json"
    LOCKBLAME_OUTPUT=$tmp/ns.db GROUND_TRUTH=$tmp/ns.json unshare --pid --fork $mount \
        env LD_PRELOAD="$LOCKBLAME_LIB" "$W" 2>"$tmp/ns.err" || fail "workload exited $? in the namespace"
    need "$tmp/ns.db" "$tmp/ns.json"
    # what the tree cannot look up by pid there is said once
    said=$(grep -c "^lockblame: /proc here is another pid namespace's" "$tmp/ns.err" || true)
    [ "$said" = "$([ -n "$mount" ] && echo 0 || echo 1)" ] ||
        bad "the line on /proc's namespace said $said times $where"
    [ "$(rows "$tmp/ns.db" "SELECT COUNT(*) FROM thread WHERE runqueue_s IS NOT NULL")" -ge 1 ] ||
        bad "no thread's run delay read in the namespace $where"
    check_unseen "$tmp/ns.json" "$tmp/ns.db" ||
        bad "unseen time does not match the workload's in the namespace $where"
done

echo "== lockblame run"
"$L" run -o "$tmp/r.db" -- "$W" >/dev/null 2>"$tmp/r.err" || fail "lockblame run exited $?"
cat "$tmp/r.err"
grep -q "^lockblame: threads spent .*$cause" "$tmp/r.err" || bad "no unseen-waits line in run's summary"

echo "== merge and an older database"
"$L" merge -o "$tmp/m.db" "$tmp/u.db" >/dev/null || fail "merge exited $?"
a=$(rows "$tmp/u.db" "SELECT printf('%.6f', TOTAL(unseen_s)) FROM thread")
b=$(rows "$tmp/m.db" "SELECT printf('%.6f', TOTAL(unseen_s)) FROM thread")
echo "  unseen: $a s written, $b s merged"
[ "$a" = "$b" ] || bad "merge changed the unseen time ($a -> $b)"
cp "$tmp/u.db" "$tmp/v4.db"
sqlite3 "$tmp/v4.db" "ALTER TABLE thread DROP COLUMN unseen_s; ALTER TABLE thread DROP COLUMN runqueue_s;
                      UPDATE meta SET value = '4' WHERE key = 'schema_version'" || fail "cannot make a version-4 copy"
"$L" report "$tmp/v4.db" >"$tmp/v4.txt" || bad "report of a version-4 database exited $?"
grep -q '^unseen:' "$tmp/v4.txt" && bad "a version-4 database has an unseen: line"
"$L" merge -o "$tmp/m4.db" "$tmp/v4.db" >/dev/null || bad "merge of a version-4 database exited $?"
[ "$(rows "$tmp/m4.db" "SELECT COUNT(*) FROM thread WHERE unseen_s IS NULL")" -ge 1 ] ||
    bad "merged version-4 threads do not read as unknown (NULL)"

echo "== a fork child's threads begin at the fork"
F=$WORKLOADS_USER/unseen_fork
LOCKBLAME_OUTPUT=$tmp/f.db preloaded "$F" >"$tmp/f.out" 2>"$tmp/f.err" || fail "unseen_fork exited $?"
cat "$tmp/f.out" "$tmp/f.err"
child=$(sed -n 's/^child //p' "$tmp/f.out")
# The parent computed 0.3 s before the fork: counted as the child's, that
# would be 0.3 s of unseen time in the child's main thread.
u=$(rows "$tmp/f.db" "SELECT printf('%.3f', MAX(t.unseen_s)) FROM thread t JOIN run r ON r.id = t.run_id
                      WHERE r.pid = ${child:-0}")
echo "  child $child: largest unseen time of a thread $u s"
awk -v u="$u" 'BEGIN { exit !(u != "" && u != "?" && u < 0.15) }' ||
    bad "the fork child counts its parent's time before the fork as unseen ($u s)"

echo "== a CPU-bound program whose exit write is long"
# many_sites computes and locks at 3,000 call sites of its own: its one
# thread is never off CPU in a wait, and lockblame's exit write, which
# names every site, takes longer than the program ran. A live thread's
# time in the profile ends where its CPU time is read, as sampling stops
# before the write: the write's own time is no part of it, which counted
# would be unseen time, most of the thread's. The write's length is
# measured from outside, from main's return to the process's end.
rc=0
python3 - "$LOCKBLAME_LIB" "$WORKLOADS_USER/many_sites" "$tmp/s.db" "$tmp/s.err" <<'PY' || rc=$?
import os, sqlite3, subprocess, sys, time
lib, prog, db, err = sys.argv[1:5]
env = dict(os.environ, LD_PRELOAD=lib, LOCKBLAME_OUTPUT=db)
with open(err, "w") as e:
    out = subprocess.run([prog], env=env, stdout=subprocess.PIPE, stderr=e, text=True, check=True)
ended = time.monotonic_ns()  # CLOCK_MONOTONIC, as the workload's
write_s = (ended - int(out.stdout.split()[1])) / 1e9
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
life, cpu, unseen = con.execute("SELECT TOTAL(end_s - start_s), TOTAL(cpu_s), TOTAL(unseen_s)"
                                " FROM thread").fetchone()
print(f"  life {life:.3f} s, cpu {cpu:.3f} s, unseen {unseen * 1e3:.3f} ms;"
      f" from main's return to the process's end {write_s:.3f} s")
if write_s < 0.02:
    sys.exit(3)  # too short for the check to tell
sys.exit(0 if unseen <= 0.1 * write_s else 1)
PY
case $rc in
0) ;;
3) skip_part "an exit write of 20 ms or more (many_sites)" ;;
*) bad "a CPU-bound thread's unseen time holds the exit write's" ;;
esac
cat "$tmp/s.err"

echo "== a live thread's CPU time, run delay and open wait end where its time does"
# many_sites with a thread parked on a condition variable to the end (a
# wait still open at the exit write), three ways: sampled; without
# sampling (LOCKBLAME_EVENT=none: quiesce has no events to stop, and still
# reads where each live thread's time ends); and sampled with the program
# pinned to one CPU beside a busy loop, so that the write is runnable for
# much of its time and each thread's run delay is read. Each thread's
# CPU time holds none of the write's (against main's own clock as it
# returned), its CPU time and run delay fit in its lifetime, its seen
# waits too, and its open wait (structural_wait, open) ends no later than
# its row. The write's part of a figure would be of the order of the
# write (measured from outside); a tenth of it is allowed for the
# quiesce and the clocks' reads.
for way in sampled none pinned; do
    rc=0
    python3 - "$LOCKBLAME_LIB" "$WORKLOADS_USER/many_sites" "$tmp/p_$way.db" "$way" <<'PY' || rc=$?
import os, sqlite3, subprocess, sys, time
lib, prog, db, way = sys.argv[1:5]
env = dict(os.environ, LD_PRELOAD=lib, LOCKBLAME_OUTPUT=db)
if way == "none":
    env["LOCKBLAME_EVENT"] = "none"
hog, pin = None, None
if way == "pinned":
    cpu = min(os.sched_getaffinity(0))
    pin = lambda: os.sched_setaffinity(0, {cpu})
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=pin)
try:
    out = subprocess.run([prog, "100", "parked"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, check=True, preexec_fn=pin)
    ended = time.monotonic_ns()  # CLOCK_MONOTONIC, as the workload's
finally:
    if hog:
        hog.kill()
        hog.wait()
words = out.stdout.split()
write_s, main_cpu_s = (ended - int(words[1])) / 1e9, int(words[3]) / 1e9
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
rows = con.execute("SELECT t.id, t.tid = r.pid, t.start_s, t.end_s, t.cpu_s, t.runqueue_s,"
                   " (SELECT TOTAL(wait_s) FROM metric m WHERE m.thread_id = t.id),"
                   " (SELECT MAX(end_s) FROM structural_wait s WHERE s.thread_id = t.id AND s.open)"
                   " FROM thread t JOIN run r ON r.id = t.run_id").fetchall()
slack = 0.1 * write_s
print(f"  {way}: main's CPU time {main_cpu_s:.6f} s as it returned;"
      f" from there to the process's end {write_s:.3f} s")
ok, opens = True, 0
for tid, main, start, end, cpu, delay, waited, open_end in rows:
    life = end - start
    print(f"    thread {tid}{' (main)' if main else ''}: {start:.6f}-{end:.6f} s, cpu {cpu:.6f} s,"
          f" run delay {delay}, waits {waited:.6f} s, open wait to {open_end}")
    opens += open_end is not None
    ok = ok and cpu + (delay or 0) <= life + slack and waited <= life + 1e-6
    ok = ok and (open_end is None or open_end <= end + 1e-9)
    ok = ok and (not main or cpu <= main_cpu_s + slack)
if write_s < 0.02 or (way == "pinned" and not any(r[5] is not None for r in rows)):
    sys.exit(3)  # too short for the check to tell; no run delay read
sys.exit(0 if ok and opens == 1 else 1)
PY
    case $rc in
    0) ;;
    3) skip_part "an exit write of 20 ms or more, and a run delay to read (many_sites parked, $way)" ;;
    *) bad "$way: a live thread's figures hold the exit write's time" ;;
    esac
done
grep -q "cannot see" "$tmp/s.err" && bad "a CPU-bound program has an unseen-waits line"

echo "== which threads' run delay is read"
LOCKBLAME_OUTPUT=$tmp/t.db preloaded "$WORKLOADS_USER/fork_template" >/dev/null 2>&1 ||
    fail "fork_template exited $?"
for db in "$tmp/u.db" "$tmp/f.db" "$tmp/t.db" "$tmp/s.db"; do
    check_run_delay_rule "$db" || bad "$(basename "$db"): a run delay read or left unread against the rule"
done

echo "== control: gt_queue_o2 (pthread waits only)"
LOCKBLAME_OUTPUT=$tmp/c.db GROUND_TRUTH=$tmp/cgt.json preloaded "$C" >/dev/null 2>"$tmp/c.err" || fail "control exited $?"
cat "$tmp/c.err"
echo "  unseen $(rows "$tmp/c.db" "SELECT printf('%.3f s of %.3f s lifetime', TOTAL(unseen_s), TOTAL(end_s - start_s)) FROM thread"),"\
     "seen $(rows "$tmp/c.db" "SELECT printf('%.3f s', TOTAL(wait_s)) FROM metric")"
grep -q "cannot see" "$tmp/c.err" && bad "the control has an unseen-waits line"
"$L" report "$tmp/c.db" >"$tmp/c.txt" || fail "report of the control exited $?"
grep '^unseen:' "$tmp/c.txt" && bad "the control's header has an unseen: line"
finish
