#!/usr/bin/env bash
# `lockblame run` adds the tree's pending profiles while its program runs
# (src/report/cli/run_merge.h): a tree's processes leave their profiles in
# the spool, sealed 16 to a file, and run's merger adds the sealed files
# to the database (made by it when no process made it) before the
# program ends. spool_tree prints what it forked, with pids; every process
# it profiles has 3 threads and waits on a condition variable
# (tests/workloads_user/spool_tree.c).
#  1. 40 children one after another, then the root waits at a gate: the
#     database exists before the root ends and holds the children of the
#     sealed files (at least 32), each once, in the order they ended; the
#     open log's records wait in the spool. After the root: every process
#     once, 3 threads each, the waits' paths named, no spool left, run's
#     status the program's, its stderr the summary alone.
#  2. the same with the root killed (SIGKILL) at its gate: run says so, and
#     the database holds every child once, no spool left.
# The wait for the merger is a bound on waiting (60 s), not a time checked:
# without the merger no child is in the database before the root ends.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/spool_tree"
command -v sqlite3 >/dev/null || skip "sqlite3"
prog=$WORKLOADS_USER/spool_tree

joined() { tr '\n' ' ' | sed 's/ $//'; }
child_pids() { awk '$1 == "child" { print $3 }' "$1"; }
tree_pids() { awk '$1 == "root" { print $2 } $1 == "child" { print $3 }' "$1" | sort -n; }
db_pids() { rows "$1" "SELECT pid FROM run ORDER BY pid"; }

# gated MODE: run spool_tree under run with a gate; when 32 children are
# in the database (or 60 s passed), note what is there, then open the gate
# (MODE open) or SIGKILL the root (MODE kill); run's status in st.
gated() {
    local mode=$1
    db=$tmp/$mode.db gate=$tmp/$mode.gate out=$tmp/$mode.out err=$tmp/$mode.err
    LOCKBLAME_EVENT=none "$LOCKBLAME_CLI" run -o "$db" -- "$prog" tree 40 1 0 "$gate" >"$out" 2>"$err" &
    local run=$!
    while [ ! -e "$gate.ready" ] && kill -0 $run 2>/dev/null; do sleep 0.05; done
    [ -e "$gate.ready" ] || fail "$mode: spool_tree ended before its gate: $(cat "$err")"
    local waited=0 children
    while :; do
        children=$(rows "$db" "SELECT COUNT(*) FROM run") # the root is not there before it ends
        [[ $children =~ ^[0-9]+$ ]] && [ "$children" -ge 32 ] && break
        [ $waited -ge 1200 ] && break
        sleep 0.05
        waited=$((waited + 1))
    done
    before=$(db_pids "$db" | joined)
    before_order=$(rows "$db" "SELECT pid FROM run ORDER BY id" | joined)
    spooled=$(ls -1 "$db-spool" 2>/dev/null | joined)
    if [ "$mode" = open ]; then
        touch "$gate"
    else
        kill -KILL "$(pgrep -P $run | head -1)" || bad "kill: no spool_tree under run ($run) to kill"
    fi
    st=0
    wait $run || st=$?
}

echo "== 1. 40 children; the database before and after the root ends"
gated open
n_before=$(wc -w <<<"$before")
echo "  before the root ended: $n_before processes in the database; spool: ${spooled:-nothing}"
[ "$n_before" -ge 32 ] || bad "open: $n_before processes in the database before the root ended, not the 32 of two sealed files"
ended=$(child_pids "$out" | { grep -Fx -f <(tr ' ' '\n' <<<"$before") || true; } | joined)
[ "$before_order" = "$ended" ] ||
    bad "open: the database held '$before_order' before the root ended, in the children's order '$ended'"
[ $st = 0 ] || bad "open: run exited $st, spool_tree exits 0: $(cat "$err")"
want=$(tree_pids "$out" | joined)
got=$(db_pids "$db" | joined)
[ "$(wc -w <<<"$want")" = 41 ] && [ "$got" = "$want" ] || bad "open: the database's pids '$got', the tree's '$want'"
wrong=$(rows "$db" "SELECT group_concat(pid, ' ') FROM run r WHERE threads != 3
    OR (SELECT COUNT(*) FROM thread t WHERE t.run_id = r.id) != 3")
[ -z "$wrong" ] || bad "open: processes without 3 threads: $wrong"
for pid in $(child_pids "$out" | head -1) $(child_pids "$out" | tail -1); do
    functions=$(waits_functions "$db" "$pid")
    [[ " $functions " == *" episode "* && " $functions " == *" waiter "* ]] ||
        bad "open: process $pid's waits' paths lack episode or waiter: '$functions'"
done
[ ! -e "$db-spool" ] || bad "open: $db-spool left: $(ls -A "$db-spool" | joined)"
grep -q "^lockblame: 41 processes profiled; " "$err" && ! grep -qvE "^lockblame: " "$err" &&
    ! grep -qE "pending|could not" "$err" || bad "open: run's stderr is not its summary of 41 processes: $(cat "$err")"

echo "== 2. the root killed at its gate"
gated kill
echo "  before the root was killed: $(wc -w <<<"$before") processes in the database"
[ $st = 137 ] || bad "kill: run exited $st, not 137 (its program killed by SIGKILL)"
grep -q "was killed by SIGKILL" "$err" || bad "kill: run did not say its program was killed: $(cat "$err")"
want=$(child_pids "$out" | sort -n | joined)
got=$(rows "$db" "SELECT pid FROM run WHERE pid IN ($(tr ' ' ',' <<<"$want")) ORDER BY pid" | joined)
dups=$(rows "$db" "SELECT COUNT(*) - COUNT(DISTINCT pid) FROM run")
[ "$(wc -w <<<"$want")" = 40 ] && [ "$got" = "$want" ] && [ "$dups" = 0 ] ||
    bad "kill: the database's children '$got' ($dups twice), the tree's '$want'"
[ ! -e "$db-spool" ] || bad "kill: $db-spool left: $(ls -A "$db-spool" | joined)"
finish
