#!/usr/bin/env bash
# Process trees (docs/DESIGN.md "Process trees"): one run, one database.
# Each case prints the file listing and `report --by-process`, and checks
# the database against what the programs themselves say they did:
#   a shell script running two profiled programs in turn; env and
#   /usr/bin/time as wrappers (exec hands on: no env profile; time's own
#   work, if sampled, no more than that); make -j4
#   over a generated C project (one database outside the source tree, every
#   cc1 in it); a forking server whose processes all exit together; an
#   exec between two recording images (two exec generations); _exit;
#   SIGSEGV; kill -9; a static binary; a setuid binary run by another
#   user; a foreign file at the output path;
#   a program that closes stderr (no line lands in its files);
#   lockblame merge.
source "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
L=$LOCKBLAME_CLI
q() { sqlite3 "$1" "$2" 2>/dev/null || echo "?"; }
show() { # show DIR DB: the listing and the processes
    echo "  \$ ls $(basename "$1")"; ls "$1" | sed 's/^/    /'
    [ -s "$2" ] && "$L" report --by-process "$2" 2>&1 | sed -n '/^  *Pid/,$p' | sed 's/^/    /'
    return 0
}
# The programs of the test, built as users build them.
W=$tmp/tree_work
cc -O2 -g -pthread -o "$W" "$ROOT/tests/trees/tree_work.c" || fail "cannot build tree_work"

echo "== a shell script running two profiled programs in turn (plain LD_PRELOAD)"
mkdir "$tmp/sh"
printf '#!/bin/sh\n"%s" contend\n"%s" contend\n' "$W" "$W" > "$tmp/sh/two.sh"; chmod +x "$tmp/sh/two.sh"
(cd "$tmp/sh" && LOCKBLAME_OUTPUT=$tmp/sh/two.db LD_PRELOAD=$LOCKBLAME_LIB ./two.sh > out 2> err) || bad "two.sh failed"
show "$tmp/sh" "$tmp/sh/two.db"
n=$(q "$tmp/sh/two.db" "SELECT COUNT(*) FROM run")
said=$(grep -c '^contended' "$tmp/sh/out" || true)
echo "  processes in the database: $n; programs that contended: $said"
[ "$n" = "$said" ] || bad "two.sh: $n processes, $said programs contended"
[ "$(q "$tmp/sh/two.db" "SELECT COUNT(*) FROM run WHERE command LIKE '%/bin/sh%'")" = 0 ] || bad "the shell (recorded nothing) is in the database"
lines=$(grep -c '^lockblame:' "$tmp/sh/err" || true)
echo "  stderr lockblame: lines: $lines (at most 2 per recording process)"
[ "$lines" -ge 1 ] && [ "$lines" -le $((2 * said)) ] || bad "two.sh printed $lines lockblame: lines"
[ "$(ls "$tmp/sh" | grep -c '\.db')" = 1 ] || bad "more than one database"

echo "== env and /usr/bin/time as wrappers (lockblame run)"
k=0
for wrapper in "env A=1" "/usr/bin/time -o /dev/null"; do
    [ -x "${wrapper%% *}" ] || [ "$wrapper" = "env A=1" ] || { echo "  (no ${wrapper%% *}; skipped)"; continue; }
    d=$tmp/wrap$((++k)); mkdir "$d"
    (cd "$d" && "$L" run -o "$d/w.db" -- $wrapper "$W" contend > out 2> err) || bad "$wrapper: run failed"
    show "$d" "$d/w.db"
    cmds=$(q "$d/w.db" "SELECT group_concat(command, '|') FROM run")
    echo "  $wrapper: commands in the database: $cmds"
    if [ "$wrapper" = "env A=1" ]; then
        # env records nothing of its own, unless a busy machine stretches
        # its few instructions before the exec to a sampling period: then
        # its image has a row with that sample, and nothing else
        others=$(q "$d/w.db" "SELECT COUNT(*) FROM run WHERE command <> '$W contend' AND
            NOT (command = '$wrapper $W contend' AND samples > 0 AND exit_reason = 'exec')")
        [ "$(q "$d/w.db" "SELECT COUNT(*) FROM run WHERE command = '$W contend'")" = 1 ] &&
            [ "$others" = 0 ] || bad "$wrapper: the database holds '$cmds', not just the program"
    else
        # time forks, waits and prints: a sample of its own work (wait4,
        # its fprintf) is a profile of its own, beside the program's, but
        # it waited on nothing lockblame wraps and blames nothing.
        [ "$(q "$d/w.db" "SELECT COUNT(*) FROM run WHERE command = '$W contend'")" = 1 ] ||
            bad "$wrapper: the database holds '$cmds', not the program once"
        [ "$(q "$d/w.db" "SELECT COUNT(*) FROM run WHERE command NOT IN ('$W contend', '$wrapper $W contend')")" = 0 ] ||
            bad "$wrapper: the database holds '$cmds'"
        [ "$(q "$d/w.db" "SELECT COUNT(*) FROM run r JOIN thread t ON t.run_id = r.id
            JOIN metric m ON m.thread_id = t.id WHERE r.command <> '$W contend' AND m.wait_s > 0")" = 0 ] ||
            bad "$wrapper: the wrapper's profile has waits"
    fi
    [ "$(grep -c '^lockblame:' "$d/err")" -le 5 ] || bad "$wrapper: more than 5 summary lines"
done

echo "== make -j4 over a generated C project"
src=$tmp/project; mkdir "$src"
nfiles=8
for i in $(seq $nfiles); do
    { for f in $(seq 150); do
        echo "int f${i}_$f(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * $f ^ (s >> 3); return s + $i; }"
      done; } > "$src/u$i.c"
done
echo 'int main(void) { return 0; }' > "$src/main.c"
{ printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\nprog: $(OBJS)\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n'; } > "$src/Makefile"
before=$(ls "$src" | sort)
(cd "$src" && "$L" run -o "$tmp/build.db" -- make -s -j4 > "$tmp/make.out" 2> "$tmp/make.err") || bad "make failed: $(cat "$tmp/make.err")"
cat "$tmp/make.err" | sed 's/^/  stderr: /'
show "$src" "$tmp/build.db"
extra=$(comm -13 <(echo "$before") <(ls "$src" | sort) | grep -v '\.o$' | grep -vx prog || true)
[ -z "$extra" ] || bad "files written into the source tree: $extra"
ncc1=$(q "$tmp/build.db" "SELECT COUNT(*) FROM run WHERE executable LIKE '%/cc1'")
nsrc=$(ls "$src"/*.c | wc -l)
# docs/DESIGN.md "Process trees": a process is there when it recorded something; cc1 is
# single-threaded, so that is a sample: each of these units takes cc1 far
# longer than one sampling period of CPU time.
echo "  cc1 processes in the database: $ncc1; C files compiled: $nsrc"
[ "$ncc1" = "$nsrc" ] || bad "cc1 processes $ncc1 for $nsrc compiled files"
[ "$(q "$tmp/build.db" "SELECT COUNT(*) FROM run WHERE executable LIKE '%/cc1' AND samples = 0")" = 0 ] ||
    bad "a cc1 without samples was written"
[ "$(grep -c '^lockblame:' "$tmp/make.err")" -le 5 ] || bad "make: more than 5 lockblame: lines"

echo "== a forking server: parent and workers exit together"
mkdir "$tmp/srv"
# $(...) returns when the last process holding stdout is gone: the parent
# and every worker have written (or lost) their profiles by then.
out=$(cd "$tmp/srv" && LOCKBLAME_OUTPUT=$tmp/srv/srv.db LD_PRELOAD=$LOCKBLAME_LIB "$W" server 12 2> err) || bad "server failed"
echo "$out" > "$tmp/srv/out"
show "$tmp/srv" "$tmp/srv/srv.db"
workers=$(sed -n 's/^workers //p' "$tmp/srv/out")
n=$(q "$tmp/srv/srv.db" "SELECT COUNT(DISTINCT pid) FROM run")
echo "  processes in the database: $n; the server says: 1 parent + $workers workers"
[ "$n" = $((workers + 1)) ] || bad "server: $n processes in the database, want $((workers + 1))"
acq=$(q "$tmp/srv/srv.db" "SELECT group_concat(a) FROM (SELECT SUM(acquisitions) a FROM sync_object WHERE object = 'mutex' GROUP BY run_id)")
echo "  mutex acquisitions per process: $acq (each process: its 2 threads x 20000)"
for a in ${acq//,/ }; do [ "$a" = 40000 ] || bad "a process recorded $a mutex acquisitions, not 40000"; done

echo "== exec: a pre-exec image that recorded something is its own exec generation"
mkdir "$tmp/eg"
(cd "$tmp/eg" && "$L" run -o "$tmp/eg/eg.db" -- "$W" exec > out 2> err) || bad "exec workload failed"
show "$tmp/eg" "$tmp/eg/eg.db"
gens=$(q "$tmp/eg/eg.db" "SELECT group_concat(exec_gen || ':' || exit_reason, ' ') FROM (SELECT * FROM run ORDER BY exec_gen)")
pids=$(q "$tmp/eg/eg.db" "SELECT COUNT(DISTINCT pid) FROM run")
echo "  images: $gens (one pid: $pids); the program contended $(grep -c '^contended' "$tmp/eg/out") times"
[ "$gens" = "0:exec 1:exit" ] && [ "$pids" = 1 ] || bad "exec generations: '$gens', pids $pids"

echo "== _exit writes the profile"
mkdir "$tmp/ex"
rc=0; (cd "$tmp/ex" && LOCKBLAME_OUTPUT=$tmp/ex/ex.db LD_PRELOAD=$LOCKBLAME_LIB "$W" _exit 7 > out 2> err) || rc=$?
show "$tmp/ex" "$tmp/ex/ex.db"
echo "  exit status $rc (the program's 7); exit_reason $(q "$tmp/ex/ex.db" "SELECT exit_reason FROM run")"
[ $rc = 7 ] || bad "_exit: status $rc"
[ "$(q "$tmp/ex/ex.db" "SELECT exit_reason FROM run")" = _exit ] || bad "_exit: no profile"

echo "== SIGSEGV writes a best-effort profile and dies of SIGSEGV"
mkdir "$tmp/sg"
rc=0; (cd "$tmp/sg" && "$L" run -o "$tmp/sg/sg.db" -- "$W" segv > out 2> err) || rc=$?
sed 's/^/  stderr: /' "$tmp/sg/err"
show "$tmp/sg" "$tmp/sg/sg.db"
echo "  lockblame run exit status $rc (139 = 128 + SIGSEGV, as the shell reports it)"
[ $rc = 139 ] || bad "segv: run exited $rc"
grep -q 'killed by SIGSEGV' "$tmp/sg/err" || bad "segv: run did not report the signal"
[ "$(q "$tmp/sg/sg.db" "SELECT exit_reason FROM run")" = "signal SIGSEGV" ] || bad "segv: no profile"

echo "== kill -9: run says no profile was written"
mkdir "$tmp/k9"
rc=0; (cd "$tmp/k9" && "$L" run -o "$tmp/k9/k9.db" -- sh -c 'kill -9 $$' 2> err) || rc=$?
sed 's/^/  stderr: /' "$tmp/k9/err"; show "$tmp/k9" "$tmp/k9/k9.db"
[ $rc = 137 ] || bad "kill -9: run exited $rc"
grep -q 'no profile was written.*SIGKILL' "$tmp/k9/err" || bad "kill -9: run did not say why no profile"

echo "== a static binary: recognised before the start"
mkdir "$tmp/st"
if cc -O2 -static -pthread -o "$tmp/st_work" "$ROOT/tests/trees/tree_work.c" 2>/dev/null; then
    rc=0; (cd "$tmp/st" && "$L" run -o "$tmp/st/st.db" -- "$tmp/st_work" _exit 5 > out 2> err) || rc=$?
    sed 's/^/  stderr: /' "$tmp/st/err"; show "$tmp/st" "$tmp/st/st.db"
    [ $rc = 5 ] || bad "static: run exited $rc, not the program's 5"
    grep -q 'statically linked' "$tmp/st/err" || bad "static: run did not say why"
    [ "$(grep -c '^lockblame:' "$tmp/st/err")" = 1 ] || bad "static: not exactly one line"
    [ -e "$tmp/st/st.db" ] && bad "static: a database appeared"
else
    bad "cannot link statically (libc6-dev provides libc.a)"
fi

echo "== a setuid binary run by another user: recognised before the start"
# As root, a setuid-root program is ours: run it as nobody (CI runs as root).
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
    su_dir=$(mktemp -d /tmp/lockblame-setuid.XXXXXX); chmod 755 "$su_dir"
    cp "$L" "$LOCKBLAME_LIB" "$su_dir/"; cp "$W" "$su_dir/su_work"
    chmod 4755 "$su_dir/su_work"; mkdir -m 777 "$su_dir/out"
    rc=0; (cd "$su_dir/out" && setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$su_dir/lockblame" run -o "$su_dir/out/su.db" -- "$su_dir/su_work" _exit 6 > out 2> err) || rc=$?
    sed 's/^/  stderr: /' "$su_dir/out/err"; show "$su_dir/out" "$su_dir/out/su.db"
    [ $rc = 6 ] || bad "setuid: run exited $rc, not the program's 6"
    grep -q 'setuid' "$su_dir/out/err" || bad "setuid: run did not say why"
    [ "$(grep -c '^lockblame:' "$su_dir/out/err")" = 1 ] || bad "setuid: not exactly one line"
    [ -e "$su_dir/out/su.db" ] && bad "setuid: a database appeared"
    rm -rf "$su_dir"
else
    echo "  (skipped: needs root and setpriv to run a setuid-root program as another user)"
fi

echo "== a foreign file at the output path: refused, the program runs unprofiled"
mkdir "$tmp/ff"; echo precious > "$tmp/ff/notes.db"
(cd "$tmp/ff" && LOCKBLAME_OUTPUT=$tmp/ff/notes.db LD_PRELOAD=$LOCKBLAME_LIB sh -c "\"$W\" contend; \"$W\" contend" > out 2> err) || bad "foreign: program failed"
sed 's/^/  stderr: /' "$tmp/ff/err"; show "$tmp/ff" ""
[ "$(cat "$tmp/ff/notes.db")" = precious ] || bad "foreign file overwritten"
[ "$(grep -c '^lockblame:' "$tmp/ff/err")" = 1 ] || bad "foreign: want one lockblame: line"
[ "$(grep -c '^contended' "$tmp/ff/out")" = 2 ] || bad "foreign: the programs did not run"
[ "$(ls "$tmp/ff" | wc -l)" = 3 ] || bad "foreign: extra files $(ls "$tmp/ff")"
rc=0; (cd "$tmp/ff" && "$L" run -o notes.db -- "$W" contend > out2 2> err2) || rc=$?
sed 's/^/  run stderr: /' "$tmp/ff/err2"
[ $rc = 0 ] && [ "$(cat "$tmp/ff/notes.db")" = precious ] || bad "run -o foreign: rc $rc or overwritten"
# inside a run, a subtree whose LOCKBLAME_OUTPUT names the foreign file:
# one line for that subtree, which runs unprofiled, and not a failed
# write in each of its processes
rc=0; (cd "$tmp/ff" && "$L" run -o run.db -- sh -c "LOCKBLAME_OUTPUT=$tmp/ff/notes.db \"$W\" contend" \
    > out3 2> err3) || rc=$?
sed 's/^/  run, inner output stderr: /' "$tmp/ff/err3"
[ $rc = 0 ] && [ "$(cat "$tmp/ff/notes.db")" = precious ] || bad "run, inner foreign output: rc $rc or overwritten"
[ "$(grep -c 'notes.db' "$tmp/ff/err3")" = 1 ] && grep -q "notes.db exists and is not a lockblame database" "$tmp/ff/err3" ||
    bad "run, inner foreign output: want one line refusing it: $(cat "$tmp/ff/err3")"
[ "$(grep -c '^contended' "$tmp/ff/out3")" = 1 ] || bad "run, inner foreign output: the program did not run"

echo "== a program that closes stderr and reuses fd 2 for a file of its own"
mkdir "$tmp/ce"
LOCKBLAME_OUTPUT=$tmp/ce/ce.db LD_PRELOAD=$LOCKBLAME_LIB "$W" closestderr "$tmp/ce/mine.txt" || bad "closestderr failed"
echo "  its file after a plain LD_PRELOAD run: $(cat "$tmp/ce/mine.txt")"
[ "$(cat "$tmp/ce/mine.txt")" = "mine fd=2" ] || bad "lockblame wrote into the program's file: $(cat "$tmp/ce/mine.txt")"
[ "$(q "$tmp/ce/ce.db" "SELECT COUNT(*) FROM run")" = 1 ] || bad "closestderr: no profile"
"$L" run -o "$tmp/ce/ce2.db" -- "$W" closestderr "$tmp/ce/mine2.txt" 2> "$tmp/ce/err" || bad "closestderr under run failed"
sed 's/^/  run stderr: /' "$tmp/ce/err"
[ "$(cat "$tmp/ce/mine2.txt")" = "mine fd=2" ] || bad "run: lockblame wrote into the program's file"
grep -q '^lockblame: 1 process profiled' "$tmp/ce/err" || bad "run did not print the summary on its own stderr"

echo "== nothing from processes that did nothing"
mkdir "$tmp/idle"
(cd "$tmp/idle" && LD_PRELOAD=$LOCKBLAME_LIB sh -c "\"$W\" idle; true" > out 2> err) || bad "idle failed"
show "$tmp/idle" ""
[ -z "$(ls "$tmp/idle" | grep -v '^out$\|^err$')" ] || bad "idle: files written"
[ -s "$tmp/idle/err" ] && bad "idle: stderr: $(cat "$tmp/idle/err")"

echo "== lockblame merge"
"$L" merge -o "$tmp/all.db" "$tmp/sh/two.db" "$tmp/srv/srv.db" "$tmp/ex/ex.db" || bad "merge failed"
"$L" report --by-process "$tmp/all.db" | sed 's/^/    /'
for f in "$tmp/sh/two.db" "$tmp/srv/srv.db" "$tmp/ex/ex.db"; do q "$f" "SELECT (SELECT COUNT(*) FROM run), (SELECT TOTAL(work_s) FROM metric)"; done > "$tmp/parts"
want=$(awk -F'|' '{ n += $1; w += $2 } END { printf "%d|%.6f", n, w }' "$tmp/parts")
got=$(q "$tmp/all.db" "SELECT COUNT(*), printf('%.6f', (SELECT TOTAL(work_s) FROM metric)) FROM run")
echo "  processes|work: inputs $want, merged $got"
[ "$got" = "$want" ] || bad "merge: $got, want $want"
hdr=$("$L" report "$tmp/all.db" | grep '^processes:')
echo "  header: $hdr"
case $hdr in "processes: ${want%%|*} "*|"processes: ${want%%|*}") ;; *) bad "report header: $hdr" ;; esac
pid=$(q "$tmp/all.db" "SELECT pid FROM run ORDER BY id LIMIT 1")
[ "$("$L" report --pid "$pid" "$tmp/all.db" | grep '^processes:')" = "processes: 1 of ${want%%|*} in the database (selected by --pid/--comm)" ] || bad "--pid"
rc=0; "$L" merge -o "$tmp/ff/notes.db" "$tmp/ex/ex.db" 2> "$tmp/merr" || rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/merr")" = 1 ] || bad "merge onto a foreign file: rc $rc, $(cat "$tmp/merr")"
rc=0; "$L" merge -o "$tmp/x.db" "$tmp/ff/notes.db" 2> "$tmp/merr" || rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/merr")" = 1 ] || bad "merge of a foreign input: rc $rc"
echo "  errors: $(cat "$tmp/merr")"

echo "$errors problem(s)"
[ $errors -eq 0 ]
