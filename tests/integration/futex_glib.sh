#!/usr/bin/env bash
# GLib's waits, which block in futex system calls made through libc's
# syscall() (docs/DESIGN.md rule 3, futex words; rule 5: the program's frame
# is the site, not libglib's): GMutex, GCond and GThreadPool, built
# gcc -O2 -g (tests/workloads_user/gt_futex_glib.c, built where
# libglib2.0-dev is installed). In each one function makes three threads
# wait about 150 ms; its blame must match the workload's own ground truth
# within 5% of the total wait (and the waiting within the wakes' spans:
# futex_scenarios.sh), and it must be the top release site.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/futex_scenarios.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
W=$WORKLOADS_USER/gt_futex_glib
if [ ! -x "$W" ]; then
    echo "SKIP: needs GLib (libglib2.0-dev) to build $W"
    exit 77
fi

futex_scenarios "$W" gmutex:slow_holder gcond:slow_signaller pool:slow_pusher
[ "$errors" -eq 0 ]
