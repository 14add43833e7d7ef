#!/usr/bin/env bash
# Blame across exec'd processes: prefork_exec's parent puts a
# process-shared semaphore in a shm_open'd object and fork + execs three
# copies of itself as workers, which map the object at addresses of their
# own and hand the lock among themselves; worker 0 holds long and posts in
# slow_release. The tree's processes name the semaphore by file and offset
# (blame/shared_keys.h) and share its record through the table beside the
# database: each site's blame must be within 5% of the truth the workers
# log (fast_release's to 5% of all the waiting), and the tree's rows must
# conserve. Keyed by address, each exec'd worker kept its own record: the
# waiters' own fast posts took the blame and slow_release almost none.
#
# With "kill", a victim exec'd the same way is killed outright (SIGKILL)
# while it waits on the lock; the parent then lets the workers in with a
# post in parent_release. The tree drops the victim's wait from the
# record when it finds it gone: parent_release is blamed for the workers'
# waits only, the others keep their truth, the rows conserve the waits
# that were written, and the header says that a process ended without
# writing and left a wait nobody wrote. With the victim still counted as
# a waiter, every post was blamed for its wait too.
#
# With "named", the lock is a named semaphore (sem_open), which glibc maps
# itself: the same truth holds. Keyed by address, each worker blamed its
# own fast posts (slow_release 0, fast_release all the waiting).
#
# The kill run samples once a second: the parent, which neither waits
# nor runs 10 ms, then has no sample, and its only record is the blame
# its post took for the workers' waits; it must still write it. (A
# process that recorded no thread, sample or wait wrote nothing: under
# the default rate the parent's post was lost whenever no sample saw it.)
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/prefork_exec
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$W"
for mode in plain kill named; do
    db=$tmp/$mode.db
    arg=
    [ $mode = plain ] || arg=$mode
    event=
    [ $mode = kill ] && event=timer@1000000000
    LOCKBLAME_EVENT=$event LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$W" $arg \
        >"$tmp/truth" 2>"$tmp/err" || fail "$mode: workload failed: $(cat "$tmp/err")"
    cat "$tmp/truth"
    [ ! -e "$db-shared" ] || fail "$mode: the shared table was left beside the database"
    workers=$(rows "$db" "SELECT COUNT(*) FROM run WHERE command LIKE '% worker %'")
    [ "$workers" = 3 ] || fail "$mode: $workers of the 3 exec'd workers in the database"
    "$LOCKBLAME_CLI" report --by-release-site --format json "$db" >"$tmp/sites.json" ||
        fail "$mode: report failed"
    "$LOCKBLAME_CLI" report "$db" >"$tmp/report.txt" || fail "$mode: report failed"
    python3 "$TESTLIB/check_prefork.py" "$tmp/truth" "$tmp/sites.json" "$db" ||
        fail "$mode: blame off its truth"
    if [ $mode = kill ]; then
        [ "$(rows "$db" "SELECT samples FROM run WHERE command NOT LIKE '% worker %' AND exit_reason = 'exit'")" = 0 ] ||
            fail "kill: the parent was sampled, so the case of a parent with blame only is not tested"
        [ "$(rows "$db" "SELECT value FROM meta WHERE key = 'shared_killed_waits'")" = 1 ] ||
            fail "kill: meta shared_killed_waits is not 1"
        grep -q '^unwritten: 1 process.*1 wait' "$tmp/report.txt" ||
            fail "kill: the header does not say the killed process left a wait: $(grep unwritten "$tmp/report.txt")"
    else
        ! grep -q '^unwritten:' "$tmp/report.txt" || fail "$mode: an unwritten: line where all wrote"
    fi
done
echo PASS
