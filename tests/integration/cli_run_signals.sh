#!/usr/bin/env bash
# lockblame run passes SIGTERM, SIGHUP, SIGUSR1 and SIGINT sent to it on to the
# program, waits for it, prints its summary and exits with the program's
# status; nothing is left running. A program that handles the signal
# exits in its own way (status 3 here); one that does not dies of it, and
# run dies of the same signal (143).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$WORKLOADS_USER/until_signal"
cd "$tmp"

# wait_for FILE: until the program has written it (a hang guard, not a
# timing assertion: the test fails only if it never comes).
wait_for() {
    local i
    for i in $(seq 1 600); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# stop MODE SIGNAL WANT_RC: run the program, signal `lockblame run`, check.
stop() {
    local mode=$1 sig=$2 want_rc=$3 db=$tmp/$1.$2.db pidfile=$tmp/$1.$2.pid
    "$LOCKBLAME_CLI" run -o "$db" -- "$WORKLOADS_USER/until_signal" "$mode" "$pidfile" \
        >"$tmp/out" 2>"$tmp/err" &
    local runpid=$!
    wait_for "$pidfile" || { kill -KILL $runpid; fail "$mode/$sig: the program never started"; }
    local prog_pid rc=0
    prog_pid=$(cat "$pidfile")
    kill -"$sig" $runpid
    wait $runpid || rc=$?
    if kill -0 "$prog_pid" 2>/dev/null; then
        kill -KILL "$prog_pid"
        fail "$mode/$sig: the program (pid $prog_pid) was left running after run ended (rc $rc)"
    fi
    [ $rc -eq "$want_rc" ] || fail "$mode/$sig: run exited $rc, want $want_rc ($(cat "$tmp/err"))"
    if [ "$mode" = handle ]; then
        local num
        num=$(kill -l "$sig")
        grep -qx "stopped by signal $num" "$tmp/out" || fail "$mode/$sig: program output: $(cat "$tmp/out")"
    fi
    grep -q '^lockblame: .*profiled' "$tmp/err" || fail "$mode/$sig: no summary: $(cat "$tmp/err")"
    [ "$(rows "$db" "SELECT COUNT(*) FROM run WHERE pid = $prog_pid")" = 1 ] ||
        fail "$mode/$sig: the program's profile is not in the database"
    echo "ok: $mode, SIG$sig: run exited $rc, program gone, summary printed, profile written"
}

stop handle TERM 3
stop handle HUP 3
stop handle USR1 3
# A background job of a script starts with SIGINT ignored: run passes it
# on all the same, and the program, which installs its own handler, takes it.
stop handle INT 3
stop default TERM 143
echo PASS
