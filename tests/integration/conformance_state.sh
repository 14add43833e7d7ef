#!/usr/bin/env bash
# Conformance (issues 13, 14): state the program can see. All
# PTHREAD_KEYS_MAX keys creatable (pthread_key_create/speculative/5-1), the
# first open() gets the same descriptor as natively (also with stdin closed
# and the output already written once), a process-private spin
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
# stdin closed, and the output already a lockblame database (a second run
# to the same file): the start-up check of that file leaves descriptor 0
# free (SQLite would put /dev/null there for good). Only the workload is
# preloaded: a preloaded shell in between would check the file itself.
no_stdin() { # OUTPREFIX CMD...: with stdin closed; writes .out .rc
    local p=$1 rc=0
    shift
    timeout -k 5 "$CONF_TIMEOUT" "$@" >"$p.out" 2>/dev/null <&- || rc=$?
    echo "$rc" >"$p.rc"
}
conf_cases=$((conf_cases + 1))
db=$tmp/first_open_fd_no_stdin.db
LOCKBLAME_OUTPUT=$db preloaded "$WORKLOADS_USER/conf_first_fd" >/dev/null 2>&1 </dev/null ||
    fail "conf_first_fd failed preloaded"
[ -s "$db" ] || fail "conf_first_fd wrote no profile to add to"
no_stdin "$tmp/no_stdin.native" "$WORKLOADS_USER/conf_first_fd"
no_stdin "$tmp/no_stdin.pre" env LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
    "$WORKLOADS_USER/conf_first_fd"
printf '%-28s native %-8s preloaded %-8s\n' first_open_fd_no_stdin \
    "$(conf_verdict "$(cat "$tmp/no_stdin.native.rc")")" "$(conf_verdict "$(cat "$tmp/no_stdin.pre.rc")")"
sed 's/^/    out: /' "$tmp/no_stdin.native.out"
grep -q '^first open: fd 0 ' "$tmp/no_stdin.native.out" ||
    fail "natively, the first open with stdin closed did not get descriptor 0"
if ! cmp -s "$tmp/no_stdin.native.rc" "$tmp/no_stdin.pre.rc" ||
    ! cmp -s "$tmp/no_stdin.native.out" "$tmp/no_stdin.pre.out"; then
    diff "$tmp/no_stdin.native.out" "$tmp/no_stdin.pre.out" | sed 's/^/    stdout diff: /' || true
    conf_diverged=$((conf_diverged + 1))
fi
conf_case spin_private_across_fork "$WORKLOADS_USER/conf_spin_fork"
conf_case spin_uninitialised "$WORKLOADS_USER/conf_spin_garbage"
conf_case spin_release_order "$WORKLOADS_USER/conf_spin_release_order"
conf_case locking_allocator "$WORKLOADS_USER/conf_locking_malloc"
conf_done
