#!/usr/bin/env bash
# OpenMP entry points keep their behaviour under lockblame (docs/DESIGN.md hard
# rules): omp_test_lock's and omp_test_nest_lock's results, nest depths,
# the counters that critical sections and locks protect under contention,
# a dynamic loop's reduction and the exit status are the native run's
# (tests/workloads_user/omp_behaviour.c). Each release that frees a lock
# or leaves a critical section is counted once (site.releases): 4 threads
# x 2000 rounds x 4 kinds, and 4 in the first region (a nest lock's inner
# unsets free nothing) = 32004.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/omp_behaviour"

set +e
"$WORKLOADS_USER/omp_behaviour" >"$tmp/native.out"
native_rc=$?
LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$WORKLOADS_USER/omp_behaviour" >"$tmp/preloaded.out"
preloaded_rc=$?
set -e
cat "$tmp/preloaded.out"
[ "$native_rc" = "$preloaded_rc" ] || bad "exit status $preloaded_rc under lockblame, $native_rc natively"
diff "$tmp/native.out" "$tmp/preloaded.out" || bad "output differs from the native run's"
releases=$(rows "$tmp/out.db" "SELECT SUM(releases) FROM site WHERE object = 'mutex'")
echo "mutex releases counted: $releases"
[ "$releases" = 32004 ] || bad "counted $releases mutex releases, expected 32004"
[ $errors -eq 0 ]
