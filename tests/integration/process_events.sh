#!/usr/bin/env bash
# Process events: SIGTERM flushes the profile and still dies of SIGTERM,
# also after the program set SIGTERM's action itself and back to default;
# fork children add their own profiles to the run's one database; exec
# writes the old image's profile first (it recorded threads), and an exec
# that fails after that says the rest goes unrecorded; sampling adds no
# EINTR; the writer never follows a symlink planted at the output path.
source "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/process_events
need "$W" "$LOCKBLAME_LIB"

# sigterm_run MODE: the workload in MODE, killed by SIGTERM once it runs:
# it dies of SIGTERM (143) and the profile says so, with its mutex counts.
sigterm_run() {
    local mode=$1 db=$tmp/$1.db
    LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" "$mode" >"$tmp/$mode.out" 2>"$tmp/$mode.err" &
    local pid=$!
    for _ in $(seq 50); do grep -q ready "$tmp/$mode.out" 2>/dev/null && break; sleep 0.1; done
    sleep 0.3
    kill -TERM $pid
    local rc=0
    wait $pid || rc=$?
    echo "  $mode: exit status $rc (143 = killed by SIGTERM)"
    [ $rc -eq 143 ] || bad "$mode run exited $rc, not 143"
    [ -s "$db" ] || { bad "no database after SIGTERM ($mode)"; return; }
    local reason acq
    reason=$(rows "$db" "SELECT exit_reason FROM run")
    echo "  $mode: exit_reason: $reason"
    [ "$reason" = "signal SIGTERM" ] || bad "$mode: exit_reason is '$reason'"
    acq=$(rows "$db" "SELECT SUM(acquisitions) FROM sync_object WHERE object='mutex'")
    echo "  $mode: mutex acquisitions recorded: $acq"
    [ "${acq:-0}" != "?" ] && [ "${acq:-0}" -gt 0 ] 2>/dev/null || bad "$mode: no mutex acquisitions in the SIGTERM profile"
}

echo "== SIGTERM"
sigterm_run sigterm
ls "$tmp" | grep -q '\.tmp\.' && bad "a temporary file was left behind"
# The program set SIGTERM's action itself (ignored, then the default):
# lockblame's handler is back in place and the profile is written.
sigterm_run sigterm-reset

echo "== fork"
mkdir "$tmp/fork"
(cd "$tmp/fork" && LD_PRELOAD=$LOCKBLAME_LIB "$W" fork >"$tmp/fork.out" 2>/dev/null) || bad "fork workload failed"
n=$(ls "$tmp/fork" | grep -c '^lockblame\.process_events\..*\.db$' || true)
echo "  databases: $n (one for the run)"
[ "$n" -eq 1 ] || bad "expected 1 database, found $n"
f=$(ls "$tmp"/fork/lockblame.process_events.*.db 2>/dev/null | head -1)
pids=$(rows "$f" "SELECT COUNT(DISTINCT pid) FROM run")
echo "  processes in it: $pids (parent + 3 children)"
[ "$pids" = 4 ] || bad "the database holds $pids processes, not 4"
# Each child forgot what its parent recorded before the fork: its own
# mutex acquisitions are its two threads' 2 x 20000.
child_acq=$(rows "$f" "SELECT group_concat(a) FROM (SELECT SUM(o.acquisitions) a FROM sync_object o
                       JOIN run r ON r.id = o.run_id WHERE o.object = 'mutex' AND r.pid <>
                       (SELECT pid FROM run ORDER BY start_unix LIMIT 1) GROUP BY r.id)")
echo "  mutex acquisitions per child: $child_acq"
for a in ${child_acq//,/ }; do [ "$a" = 40000 ] || bad "a child recorded $a acquisitions, not 40000"; done

echo "== exec"
mkdir "$tmp/exec"
# Sampling off: echo, which waits on nothing and creates no thread, then
# records nothing even when a busy machine stretches its CPU time past a
# sampling period; the image before it recorded its two threads.
out=$(cd "$tmp/exec" && LOCKBLAME_EVENT=none LD_PRELOAD=$LOCKBLAME_LIB "$W" exec 2>/dev/null) || bad "exec workload failed"
[ "$out" = "exec-done" ] || bad "exec output '$out'"
f=$(ls "$tmp"/exec/lockblame.process_events.*.db 2>/dev/null | head -1)
[ -n "$f" ] || bad "no profile from the image that called exec"
[ -n "$f" ] && { reason=$(rows "$f" "SELECT group_concat(exit_reason) FROM run"); echo "  images: $reason"; [ "$reason" = exec ] || bad "exit_reasons '$reason' (echo recorded nothing)"; }

echo "== an exec that fails"
# Both execs fail (no such file; no such command in PATH): the image goes
# on, profiled, and its one profile holds both rounds of contention
# (2 x 2 x 20000 acquisitions), ended by its exit, not by an exec.
out=$(LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$tmp/exec-fails.db LD_PRELOAD=$LOCKBLAME_LIB "$W" exec-fails 2>/dev/null) ||
    bad "exec-fails workload failed"
[ "$out" = "exec-fails-done" ] || bad "exec-fails output '$out'"
images=$(rows "$tmp/exec-fails.db" "SELECT group_concat(exit_reason) FROM run")
acq=$(rows "$tmp/exec-fails.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'mutex'")
echo "  images: $images; mutex acquisitions: $acq"
[ "$images" = exit ] || bad "exec-fails: exit_reasons '$images', not one image ended by its exit"
[ "$acq" = 80000 ] || bad "exec-fails: $acq mutex acquisitions, not 80000 (both rounds)"

echo "== an exec that looked possible and fails"
# execv of /bin/true with a 256 KiB argument: the file is there, so the
# profile is written at the exec, which then fails with E2BIG. The call
# returns as natively, one lockblame: line says the rest of the process
# is not recorded, and the profile holds the first round only (2 x 20000
# acquisitions), ended by the exec.
native=$("$W" exec-too-big 2>/dev/null) || bad "exec-too-big natively failed"
out=$(LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$tmp/too-big.db LD_PRELOAD=$LOCKBLAME_LIB "$W" exec-too-big 2>"$tmp/too-big.err") ||
    bad "exec-too-big workload failed"
echo "  native: $native; preloaded: $out"
[ "$native" = "exec-too-big -1 E2BIG" ] && [ "$out" = "$native" ] || bad "exec-too-big output '$out', natively '$native'"
said=$(grep -c '^lockblame: exec of /bin/true failed (E2BIG): the profile ends at the exec' "$tmp/too-big.err")
echo "  lines saying so: $said"
[ "$said" = 1 ] || bad "exec-too-big: $said lines about the failed exec: $(cat "$tmp/too-big.err")"
images=$(rows "$tmp/too-big.db" "SELECT group_concat(exit_reason) FROM run")
acq=$(rows "$tmp/too-big.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'mutex'")
echo "  images: $images; mutex acquisitions: $acq"
[ "$images" = exec ] || bad "exec-too-big: exit_reasons '$images', not one image ended by its exec"
[ "$acq" = 40000 ] || bad "exec-too-big: $acq mutex acquisitions, not 40000 (the round before the exec)"

echo "== no new EINTR"
out=$(LOCKBLAME_OUTPUT=$tmp/eintr.db LD_PRELOAD=$LOCKBLAME_LIB "$W" eintr 2>/dev/null) || bad "eintr workload: $out"
echo "  $out"

echo "== cancellation in cond and sem waits"
out=$(LOCKBLAME_OUTPUT=$tmp/cancel.db LD_PRELOAD=$LOCKBLAME_LIB "$W" cancel 2>/dev/null) || bad "cancel workload: $out"
native=$("$W" cancel 2>/dev/null) || bad "cancel workload natively: $native"
echo "  preloaded: $out; native: $native"
[ "$out" = "$native" ] || bad "cancel output differs"
blame=$("$LOCKBLAME_CLI" report --by-release-site --format csv "$tmp/cancel.db" 2>/dev/null |
        awk -F, '$1 ~ /^after_cancel_/ { s += $5 } END { printf "%.6f", s + 0 }')
waited=$(rows "$tmp/cancel.db" "SELECT printf('%.6f', SUM(wait_s)) FROM sync_object WHERE object IN ('cond','sem')")
# By the rules, the next signal/post takes what the cancelled waiters
# accrued while they waited (~0.1 s each); a waiter left registered after
# its cancellation would add its 300 ms of phantom waiting on top.
echo "  blame on the signal/post after the cancelled waits: $blame s; the cancelled waiters waited $waited s"
awk -v b="$blame" -v w="$waited" 'BEGIN { d = b - w; if (d < 0) d = -d; exit !(w > 0.3 && d < 0.05) }' \
    || bad "cancelled waiters left wait state behind (blame $blame s vs waited $waited s)"
# Two cond and two sem waiters start together and are cancelled together:
# each kind waited about as long. A kind whose cancelled waits stayed open
# (no cleanup handler run) waits on until its signal or post, 300 ms later,
# and on top of that blame and waiting would agree.
cw=$(rows "$tmp/cancel.db" "SELECT printf('%.6f', SUM(wait_s)) FROM sync_object WHERE object = 'cond'")
sw=$(rows "$tmp/cancel.db" "SELECT printf('%.6f', SUM(wait_s)) FROM sync_object WHERE object = 'sem'")
echo "  cond waiters waited $cw s, sem waiters $sw s"
awk -v c="$cw" -v s="$sw" 'BEGIN { d = c - s; if (d < 0) d = -d; exit !(c > 0.1 && s > 0.1 && d < 0.2) }' \
    || bad "cancelled cond or sem waits stayed open (cond $cw s, sem $sw s)"

echo "== SIGABRT (abort) writes the profile, best effort"
rc=0; LOCKBLAME_OUTPUT=$tmp/abort.db LD_PRELOAD=$LOCKBLAME_LIB "$W" abort >/dev/null 2>&1 || rc=$?
echo "  exit status $rc (134 = SIGABRT)"
[ $rc -eq 134 ] || bad "abort run exited $rc, not 134"
reason=$(rows "$tmp/abort.db" "SELECT exit_reason FROM run")
[ "$reason" = "signal SIGABRT" ] || bad "abort: exit_reason '$reason'"

echo "== a vfork child killed by SIGTERM leaves its parent's profile alone"
# The child shares its parent's memory: finishing there ended the parent's
# profiling (no summary, no database) before its threads ran.
rc=0; LOCKBLAME_OUTPUT=$tmp/vfork.db LD_PRELOAD=$LOCKBLAME_LIB "$W" vfork-killed >/dev/null 2>"$tmp/vfork.err" || rc=$?
echo "  exit status $rc"
[ $rc -eq 0 ] || bad "vfork-killed run exited $rc, not 0"
reason=$(rows "$tmp/vfork.db" "SELECT exit_reason FROM run")
acq=$(rows "$tmp/vfork.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object='mutex'")
echo "  exit_reason: $reason; mutex acquisitions recorded: $acq"
[ "$reason" = "exit" ] || bad "vfork-killed: exit_reason '$reason', not exit"
[ "${acq:-0}" -ge 40000 ] 2>/dev/null || bad "vfork-killed: $acq mutex acquisitions recorded, not the threads' 40000"
grep -q '^lockblame: ' "$tmp/vfork.err" || bad "vfork-killed: no summary line"

echo "== symlink at the output path"
echo "precious" >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/link.db"
LOCKBLAME_OUTPUT=$tmp/link.db LD_PRELOAD=$LOCKBLAME_LIB "$W" exec >/dev/null 2>&1 || true
[ "$(cat "$tmp/victim")" = precious ] || bad "the writer wrote through a symlink"

echo "$errors problem(s)"
[ $errors -eq 0 ]
