#!/usr/bin/env bash
# Conformance (issues 13, 14): state the program can see. All
# PTHREAD_KEYS_MAX keys creatable (pthread_key_create/speculative/5-1), the
# first open() gets the same descriptor as natively (also with stdin closed,
# the output already written once, in a parent that forks children one
# after another, and after time windows), a process-private spin
# lock used across fork (pthread_spin_init/2-2), an uninitialised spin
# lock holding 0x41414141 and spin locks released out of acquisition order,
# by another thread or after a re-init behave as natively; a program whose
# allocator takes a pthread mutex (which glibc calls under a thread's own
# lock, as jemalloc's is) creates, runs and joins its threads as natively.
# Native vs preloaded, compared.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
conf_case pthread_keys_all "$WORKLOADS_USER/conf_keys"
conf_case first_open_fd "$WORKLOADS_USER/conf_first_fd"
# With stdin closed, natively and preloaded (only the workload: a
# preloaded shell in between would do lockblame's start-up work itself),
# compared: SQLite puts /dev/null for good on a descriptor 0-2 it is
# handed, so lockblame's reads of the run's database while the program
# runs must leave those free.
no_stdin() { # OUTPREFIX CMD...: writes .out .rc
    local p=$1 rc=0
    shift
    timeout -k 5 "$CONF_TIMEOUT" "$@" >"$p.out" 2>/dev/null <&- || rc=$?
    echo "$rc" >"$p.rc"
}
no_stdin_case() { # NAME DB CMD...: preloaded with output DB
    local name=$1 db=$2
    shift 2
    need "$1" "$LOCKBLAME_LIB"
    conf_cases=$((conf_cases + 1))
    no_stdin "$tmp/$name.native" "$@"
    no_stdin "$tmp/$name.pre" env LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" "$@"
    printf '%-28s native %-8s preloaded %-8s\n' "$name" \
        "$(conf_verdict "$(cat "$tmp/$name.native.rc")")" \
        "$(conf_verdict "$(cat "$tmp/$name.pre.rc")")"
    sed 's/^/    out: /' "$tmp/$name.native.out"
    grep -q 'fd 0 ' "$tmp/$name.native.out" ||
        fail "$name: natively, no open with stdin closed got descriptor 0"
    if ! cmp -s "$tmp/$name.native.rc" "$tmp/$name.pre.rc" ||
        ! cmp -s "$tmp/$name.native.out" "$tmp/$name.pre.out"; then
        diff "$tmp/$name.native.out" "$tmp/$name.pre.out" | sed 's/^/    stdout diff: /' || true
        conf_diverged=$((conf_diverged + 1))
    fi
}
# the output already a lockblame database (a second run to the same
# file): lockblame checks it at start-up
db=$tmp/first_open_fd_no_stdin.db
LOCKBLAME_OUTPUT=$db preloaded "$WORKLOADS_USER/conf_first_fd" >/dev/null 2>&1 </dev/null ||
    fail "conf_first_fd failed preloaded"
[ -s "$db" ] || fail "conf_first_fd wrote no profile to add to"
no_stdin_case first_open_fd_no_stdin "$db" "$WORKLOADS_USER/conf_first_fd"
# a parent forking children one after another: from its second fork on,
# lockblame reads the names the children wrote, for the next ones
no_stdin_case fork_open_fd_no_stdin "$tmp/fork_open_fd_no_stdin.db" \
    "$WORKLOADS_USER/conf_first_fd" forks
# time windows every 100 ms: each names frames with libdwfl and commits
# from lockblame's own thread while the program runs
LOCKBLAME_INTERVAL=100ms conf_case first_open_fd_windows "$WORKLOADS_USER/conf_first_fd" windows
LOCKBLAME_INTERVAL=100ms no_stdin_case windows_open_fd_no_stdin "$tmp/windows_no_stdin.db" \
    "$WORKLOADS_USER/conf_first_fd" windows
conf_case spin_private_across_fork "$WORKLOADS_USER/conf_spin_fork"
conf_case spin_uninitialised "$WORKLOADS_USER/conf_spin_garbage"
conf_case spin_release_order "$WORKLOADS_USER/conf_spin_release_order"
conf_case locking_allocator "$WORKLOADS_USER/conf_locking_malloc"
conf_done
