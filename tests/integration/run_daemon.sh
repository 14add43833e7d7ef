#!/usr/bin/env bash
# `lockblame run` of a program that daemonizes (tests/trees/tree_work.c,
# mode daemon): its first process exits 0 once its child runs, and the
# child, a new session, contends and ends only after run has returned
# (it waits for a file the test makes). Checks, with the parent recording
# nothing (no database when run ends), with the parent contending first
# (a database of one process), and with the parent exiting right after
# its fork, as memcached -d does, its child stopped, most likely before it
# ran at all (it has then no slot in the tree's ledger when run counts:
# run, its subreaper, counts it as its orphan):
#  - run exits 0, PROG's status;
#  - its stderr says, in one lockblame: line, that 1 process of the tree
#    still runs and adds its profile to the database when it ends, and
#    never that no process recorded anything;
#  - once the child has ended (it writes its pid into a file last, then
#    exits), `lockblame report --by-process` on the database lists it.
# Then orphans of the tree that lockblame does not see (started without
# LD_PRELOAD, or with LOCKBLAME_DISABLE=1), which never add a profile, and
# one started with another LOCKBLAME_OUTPUT, which adds its profile
# elsewhere, and a Go program (lockblame's library loaded, inactive): run's
# line counts them apart and promises nothing of them, alone (2 such
# orphans; the other output's 1; the Go program) and beside a daemon that
# records (1 of each), in the exact words of each case.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
W=$tmp/tree_work
cc -O2 -g -pthread -o "$W" "$ROOT/tests/trees/tree_work.c" || fail "cannot build tree_work"
# go_linger GO READY: a program that carries the Go linker's build id note
# (tests/workloads_user/go_note.c), in which lockblame stays inactive:
# makes READY, then waits for GO (at most a minute)
G=$tmp/go_linger
cat >"$G.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((section(".note.go.buildid"), aligned(4), used)) static const struct {
    uint32_t namesz, descsz, type;
    char name[4];
    char desc[8];
} go_note = { 4, 8, 4, "Go", "lbtest00" };
int main(int argc, char **argv)
{
    if (argc != 3 || !fopen(argv[2], "w"))
        return 1;
    for (int i = 0; i < 600 && access(argv[1], F_OK) != 0; i++)
        usleep(100000);
    return 0;
}
C
cc -O2 -o "$G" "$G.c" || fail "cannot build go_linger"

# ended PID: whether process PID is gone (or a zombie no one reaps)
ended() {
    local state
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
    [ -z "$state" ] || [ "$state" = Z ] || [ "$state" = X ]
}

# daemon_ends VARIANT COUNTS: once the daemon of $db has ended (its pid in
# $done, written last, then its exit: it writes its profile on its way
# out), `lockblame report --by-process` on $db lists it, and the database
# holds one of COUNTS processes ("" for any).
daemon_ends() {
    local variant=$1 counts=$2 child pids
    for _ in $(seq 600); do
        [ -s "$done" ] && break
        sleep 0.1
    done
    child=$(cat "$done" 2>/dev/null || true)
    [ -n "$child" ] || fail "$variant: the daemon never wrote $done"
    for _ in $(seq 600); do
        ended "$child" && break
        sleep 0.1
    done
    ended "$child" || fail "$variant: the daemon (pid $child) did not end"
    "$LOCKBLAME_CLI" report --by-process "$db" >"$tmp/$variant.by" 2>"$tmp/$variant.by.err" ||
        bad "$variant: report --by-process exited $?: $(cat "$tmp/$variant.by.err")"
    pids=$(rows "$db" "SELECT group_concat(pid, ' ') FROM (SELECT pid FROM run ORDER BY pid)")
    echo "  run's pids: $pids; the daemon: $child"
    grep -Eq "^ *$child +" "$tmp/$variant.by" ||
        { cat "$tmp/$variant.by"; bad "$variant: report --by-process does not list the daemon ($child)"; }
    [ -z "$counts" ] || [[ " $counts " == *" $(rows "$db" "SELECT COUNT(*) FROM run") "* ]] ||
        bad "$variant: $(rows "$db" "SELECT COUNT(*) FROM run") processes in the database, want $counts"
}

for variant in quiet contend nowait; do
    case $variant in
    quiet) echo "== the parent records nothing" ;;
    contend) echo "== the parent contends first" ;;
    nowait) echo "== the parent exits right after its fork" ;;
    esac
    db=$tmp/$variant.db go=$tmp/$variant.go done=$tmp/$variant.done
    arg=$([ $variant = quiet ] || echo $variant)
    rc=0
    "$LOCKBLAME_CLI" run -o "$db" -- "$W" daemon "$go" "$done" $arg >"$tmp/$variant.out" \
        2>"$tmp/$variant.err" || rc=$?
    touch "$go" # the daemon goes on now
    if [ $variant = nowait ]; then
        stopped=$(awk '/^daemon / {print $2}' "$tmp/$variant.out")
        [ -n "$stopped" ] && kill -CONT "$stopped" || bad "nowait: no daemon to continue"
    fi
    cat "$tmp/$variant.err"
    [ $rc = 0 ] || bad "$variant: run exited $rc, not PROG's 0"
    line="lockblame: 1 process of the tree still runs (a daemon?): its profile is added to $db when it ends; lockblame report merges it"
    [ "$(grep -cxF "$line" "$tmp/$variant.err")" = 1 ] ||
        bad "$variant: run did not say in one line that the daemon still runs"
    grep -q 'no process recorded anything' "$tmp/$variant.err" &&
        bad "$variant: run says no process recorded anything while the daemon runs"
    if [ $variant = contend ]; then
        grep -q '^lockblame: 1 process profiled; ' "$tmp/$variant.err" ||
            bad "$variant: run's summary does not count the parent's profile"
    fi
    # (a parent that records nothing may still have taken a sample of its
    # start on a loaded machine, and written a profile)
    daemon_ends $variant "$([ $variant = contend ] && echo 2 || echo "1 2")"
done

# Orphans that lockblame does not see add no profile, and run's line says
# so apart: two alone (one started without LD_PRELOAD, one with
# LOCKBLAME_DISABLE=1), and one beside a daemon that records. Each sleeps
# past run's end (until $go, at most a minute), and touches its file
# $ready.N first, in its own image past the exec that left lockblame: the
# tree's root waits for that before it ends, so that run counts each as
# what it stays.
linger='touch "$2"; i=0; while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done'
for variant in unseen elsewhere go mixed; do
    db=$tmp/$variant.db go=$tmp/$variant.go done=$tmp/$variant.done ready=$tmp/$variant.ready
    case $variant in
    unseen)
        echo "== two orphans that lockblame does not see"
        prog=(sh -c 'env -u LD_PRELOAD sh -c "$1" unseen "$2" "$3.1" & echo "unseen $!"
                     LOCKBLAME_DISABLE=1 sh -c "$1" unseen "$2" "$3.2" & echo "unseen $!"
                     while [ ! -e "$3.1" ] || [ ! -e "$3.2" ]; do sleep 0.05; done' \
            _ "$linger" "$go" "$ready")
        line="lockblame: 2 processes of the tree still run (a daemon?) that lockblame does not see: they add no profile"
        ;;
    elsewhere)
        echo "== an orphan that writes its profile elsewhere (another LOCKBLAME_OUTPUT)"
        prog=(sh -c 'LOCKBLAME_OUTPUT="$4" sh -c "$1" unseen "$2" "$3.1" & echo "unseen $!"
                     while [ ! -e "$3.1" ]; do sleep 0.05; done' \
            _ "$linger" "$go" "$ready" "$tmp/$variant.other.db")
        line="lockblame: 1 process of the tree still runs (a daemon?) that lockblame does not see: it adds no profile"
        ;;
    go)
        echo "== an orphan that is a Go program, with the library loaded"
        prog=(sh -c '"$1" "$2" "$3.1" & echo "unseen $!"
                     while [ ! -e "$3.1" ]; do sleep 0.05; done' _ "$G" "$go" "$ready")
        line="lockblame: 1 process of the tree still runs (a daemon?) that lockblame does not see: it adds no profile"
        ;;
    mixed)
        echo "== a daemon, and an orphan that lockblame does not see"
        prog=(sh -c 'env -u LD_PRELOAD sh -c "$1" unseen "$2" "$3.1" & echo "unseen $!"
                     while [ ! -e "$3.1" ]; do sleep 0.05; done
                     exec "$4" daemon "$2" "$5"' _ "$linger" "$go" "$ready" "$W" "$done")
        line="lockblame: 1 process of the tree still runs (a daemon?): its profile is added to $db when it ends; lockblame report merges it; 1 more that lockblame does not see adds nothing"
        ;;
    esac
    rc=0
    "$LOCKBLAME_CLI" run -o "$db" -- "${prog[@]}" >"$tmp/$variant.out" 2>"$tmp/$variant.err" || rc=$?
    touch "$go" # the orphans end now
    cat "$tmp/$variant.err"
    [ $rc = 0 ] || bad "$variant: run exited $rc, not PROG's 0"
    [ "$(grep -cxF "$line" "$tmp/$variant.err")" = 1 ] ||
        bad "$variant: run did not say in one line: $line"
    [ $variant != mixed ] && grep -q 'profiles\? \(is\|are\) added' "$tmp/$variant.err" &&
        bad "$variant: run promises a profile of an orphan that lockblame does not see"
    for orphan in $(awk '/^unseen / {print $2}' "$tmp/$variant.out"); do
        for _ in $(seq 600); do
            ended "$orphan" && break
            sleep 0.1
        done
        ended "$orphan" || bad "$variant: the orphan (pid $orphan) did not end"
    done
    [ $variant != mixed ] || daemon_ends $variant ""
done
finish
