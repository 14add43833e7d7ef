#!/usr/bin/env bash
# Rust std's waits, which block in futex system calls made through libc's
# syscall() (docs/DESIGN.md rule 3, futex words; rule 5: the program's frame
# is the site, not std's): Mutex, Condvar, RwLock, Barrier and mpsc recv,
# built rustc -O -g with the first rustc on PATH
# (tests/workloads_user/gt_futex_rust.rs). In each one function makes
# three threads wait about 150 ms; its blame must match the workload's
# own ground truth within 5% of the total wait (and the waiting within
# the wakes' spans: futex_scenarios.sh), and it must be the top release
# site: a MutexGuard dropped in slow_holder is slow_holder.
# The same program built with rustc's v0 symbol names ("_R...",
# -C symbol-mangling-version=v0) names the same sites.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/futex_scenarios.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
W=$WORKLOADS_USER/gt_futex_rust
if [ ! -x "$W" ]; then
    echo "SKIP: needs rustc to build $W"
    exit 77
fi
rustc --version 2>/dev/null || true

futex_scenarios "$W" mutex:gt_futex_rust::slow_holder condvar:gt_futex_rust::slow_signaller \
    rwlock:gt_futex_rust::rwlock::slow_holder barrier:gt_futex_rust::slow_straggler \
    mpsc:gt_futex_rust::slow_sender
echo "=== v0 symbol names"
nm "$W"_v0 >"$tmp/v0.syms"
grep -q ' _RNv.*slow_holder$' "$tmp/v0.syms" || bad "${W}_v0 has no v0-mangled slow_holder"
futex_scenarios "$W"_v0 mutex:gt_futex_rust::slow_holder rwlock:gt_futex_rust::rwlock::slow_holder \
    mpsc:gt_futex_rust::slow_sender
[ "$errors" -eq 0 ]
