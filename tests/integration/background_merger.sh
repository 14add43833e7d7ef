#!/usr/bin/env bash
# The tree's background merger under plain LD_PRELOAD
# (report/writer/merger.h): wait_any_tree forks 250 children one after
# another, each recording a cond wait, reaps each with wait(2) (any child)
# and then waits at a gate (tests/workloads_user/wait_any_tree.c).
#  1. default bound (256 records): before the root ends, the database
#     already holds at least 200 of the children (a merger started once
#     240 were pending; no child's capped commit, which comes at 256,
#     would have added any); the root's waits never saw a process it did
#     not fork, nor a SIGCHLD of another process, and its last wait()
#     failed with ECHILD; after it ends the
#     database holds every child once, added in the order the
#     children ended, no spool is left, and the tree's summary counts
#     them (the root records nothing: sampling is off, and it never waits
#     on a lock)
#  2. a merger stopped with SIGSTOP while the tree runs: the root ends
#     all the same (it kills a merger that keeps it waiting 2 s), and its
#     final merge adds every child once
#  3. LOCKBLAME_SPOOL_MAX=0 (no bound, so no merger): before the root
#     ends, no more than a few children are in the database (those that
#     named something new), and after it ends all of them
# The tree runs with LOCKBLAME_EVENT=none: a sample names the address it
# lands on, so a child may name something new and commit itself.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/wait_any_tree"
command -v sqlite3 >/dev/null || skip "sqlite3"
# a merger needs close_range(2) (Linux 5.9; a seccomp filter may refuse it)
[ "$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(436, 100000, 100001, 0))' 2>/dev/null)" = 0 ] ||
    skip "close_range(2)"
prog=$WORKLOADS_USER/wait_any_tree
N=250

joined() { tr '\n' ' ' | sed 's/ $//'; }
children_in_db() { rows "$1" "SELECT COUNT(*) FROM run WHERE pid <> $2"; }

# started NAME [ENV...]: start the tree under ENV; sets root (its pid),
# db, gate.
started() {
    local name=$1
    shift
    db=$tmp/$name.db gate=$tmp/$name.gate
    env "$@" LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$prog" $N "$gate" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    root=$!
}

# at_gate NAME: returns once the root waits at its gate.
at_gate() {
    while [ ! -e "$gate.ready" ] && kill -0 $root 2>/dev/null; do sleep 0.05; done
    [ -e "$gate.ready" ] || fail "$1: wait_any_tree ended before its gate: $(head -c 600 "$tmp/$1.err")"
}

# gated NAME [ENV...]: started, then at its gate.
gated() {
    started "$@"
    at_gate "$1"
}

# stop_a_merger: while the tree runs, SIGSTOP the first merger seen (a
# child of the root whose exit signal, field 38 of /proc/PID/stat, is 0);
# prints its pid, or nothing if none was seen before the gate.
stop_a_merger() {
    local p f
    while [ ! -e "$gate.ready" ] && kill -0 $root 2>/dev/null; do
        for p in $(cat "/proc/$root/task/$root/children" 2>/dev/null); do
            { read -ra f <"/proc/$p/stat"; } 2>/dev/null || continue
            [ "${f[37]:-}" = 0 ] && kill -STOP "$p" 2>/dev/null && { echo "$p"; return; }
        done
    done
}

# ended NAME: after the gate: the root's line, the database's processes
# and their order, no spool left.
ended() {
    local name=$1 out=$tmp/$1.out
    touch "$gate"
    wait $root || bad "$name: wait_any_tree exited $?: $(head -c 600 "$tmp/$name.err")"
    local signals=0
    [ "$name" = stopped ] && signals='[0-9]+' # (the test's SIGSTOP of the merger is reported to the root)
    grep -qxE "root $root reaped $N foreign 0 echild yes sigchld_foreign $signals" "$out" ||
        bad "$name: the root's waits: '$(grep '^root' "$out")', not $N reaped, none foreign, ECHILD at the end, no SIGCHLD of another process"
    local want; want=$(awk '$1 == "child" { print $3 }' "$out" | sort -n | joined)
    local got; got=$(rows "$db" "SELECT pid FROM run WHERE pid <> $root ORDER BY pid" | joined)
    [ "$(wc -w <<<"$want")" = $N ] && [ "$got" = "$want" ] ||
        bad "$name: the database's processes are not the $N children once each ($(wc -w <<<"$got") rows)"
    local order; order=$(awk '$1 == "child" { print $3 }' "$out" | joined)
    local added; added=$(rows "$db" "SELECT pid FROM run WHERE pid <> $root ORDER BY id" | joined)
    [ "$added" = "$order" ] || bad "$name: the children were not added in the order they ended"
    [ ! -e "$db-spool" ] || bad "$name: $db-spool left: $(ls -A "$db-spool" | head -5 | joined)"
    grep -qE "^lockblame: $N processes profiled" "$tmp/$name.err" ||
        bad "$name: the summary does not count the $N children: $(head -c 300 "$tmp/$name.err")"
}

echo "== 1. the default bound: a merger beside the tree"
gated merger
# the last merger may still be adding its batch: up to 60 s, then the count
early=0
for _ in $(seq 1 600); do
    early=$(children_in_db "$db" $root)
    [ "$early" != "?" ] && [ "$early" -ge 200 ] && break
    sleep 0.1
done
echo "  before the root ends: $early of $N children in the database"
[ "$early" != "?" ] && [ "$early" -ge 200 ] ||
    bad "merger: $early children in the database before the root ended, not 200 or more"
ended merger

echo "== 2. a merger stopped (SIGSTOP) while the tree runs"
# the root waits for it a bounded time (2 s), kills it, and its final
# merge adds what the merger held
started stopped
stopped=$(stop_a_merger)
at_gate stopped
echo "  stopped merger: ${stopped:-none seen}"
[ -n "$stopped" ] || bad "stopped: no merger seen while the tree ran"
ended stopped
[ -z "$stopped" ] || ! kill -0 "$stopped" 2>/dev/null || bad "stopped: merger $stopped still there after the root ended"

echo "== 3. LOCKBLAME_SPOOL_MAX=0: no bound, no merger"
gated unbounded LOCKBLAME_SPOOL_MAX=0
sleep 0.5 # (time for a merger, had one started, to add a batch)
early=$(children_in_db "$db" $root)
echo "  before the root ends: $early of $N children in the database"
[ "$early" != "?" ] && [ "$early" -le 10 ] ||
    bad "unbounded: $early children in the database before the root ended, not 10 or fewer"
ended unbounded

[ $errors -eq 0 ]
