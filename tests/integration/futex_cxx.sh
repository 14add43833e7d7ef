#!/usr/bin/env bash
# C++20 waits that block in futex system calls made through libc's
# syscall() (docs/DESIGN.md rule 3, futex words; rule 5, the program's frame
# is the site): std::counting_semaphore, std::latch, std::barrier,
# std::atomic<int>::wait/notify_one and std::shared_future::get, built
# g++ -std=c++20 -O2 -g (tests/workloads_user/gt_futex_cxx.cc). In each
# one function makes three threads wait about 150 ms; its blame must
# match the workload's own ground truth within 5% of the total wait (and
# the waiting within the wakes' spans: futex_scenarios.sh), and it must
# be the top release site. Before futex words were monitored,
# lockblame saw none of these waits.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/futex_scenarios.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/gt_futex_cxx"

futex_scenarios "$WORKLOADS_USER/gt_futex_cxx" semaphore:slow_signaller latch:slow_signaller \
    barrier:slow_straggler atomic:slow_signaller future:slow_signaller
[ "$errors" -eq 0 ]
