#!/usr/bin/env bash
# Test runner for lockblame.
#
# Discovers
#   build/tests/unit/*          compiled unit tests (from tests/unit/*.c)
#   tests/integration/*.sh      integration drivers
# and runs each in its own process under `timeout`, with its output captured
# to build/tests/logs/<kind>.<name>.log. A log is printed only when its test
# fails. Prints "PASS name" or "FAIL name (reason)" per test, then exactly one
# line "N passed, M failed". Exits 1 if any test failed.
#
# Usage: tests/run.sh [PATTERN...]   run only tests whose name contains a PATTERN
# Environment:
#   LOCKBLAME_TEST_TIMEOUT  seconds per test (default 120)
#   BUILD                   build directory (default build)
#
# Tests see ROOT (absolute repository root), BUILD (absolute), LOCKBLAME_LIB,
# LOCKBLAME_CLI, WORKLOADS and WORKLOADS_USER (the directories of built
# workloads: tests/workloads, tests/workloads_user).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TIMEOUT=${LOCKBLAME_TEST_TIMEOUT:-120}
LOGDIR=$BUILD/tests/logs
mkdir -p "$LOGDIR"

export ROOT BUILD
export LOCKBLAME_LIB=$BUILD/liblockblame.so
export LOCKBLAME_CLI=$BUILD/lockblame
export WORKLOADS=$BUILD/tests/workloads
export WORKLOADS_USER=$BUILD/tests/workloads_user
# A stray LD_PRELOAD or LOCKBLAME_* setting in the caller's environment would
# change what every test measures.
unset LD_PRELOAD LOCKBLAME_OUTPUT LOCKBLAME_EVENT LOCKBLAME_SIGNAL LOCKBLAME_RUN LOCKBLAME_SUMMARY LOCKBLAME_DISABLE \
      LOCKBLAME_FREQ LOCKBLAME_SPIN LOCKBLAME_MUTEX LOCKBLAME_COND

selected() {
    [ $# -le 1 ] && return 0
    local name=$1; shift
    local p
    for p in "$@"; do
        case $name in *"$p"*) return 0 ;; esac
    done
    return 1
}

# name|command... pairs, in run order: unit tests first, they are quick.
tests=()
for t in "$BUILD"/tests/unit/*; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    tests+=("unit/$(basename "$t")")
done
for t in tests/integration/*.sh; do
    [ -f "$t" ] || continue
    tests+=("integration/$(basename "$t" .sh)")
done

passed=0
failed=0
for name in "${tests[@]}"; do
    selected "$name" "$@" || continue
    kind=${name%%/*}
    base=${name#*/}
    log=$LOGDIR/$kind.$base.log
    if [ "$kind" = unit ]; then
        cmd=("$BUILD/tests/unit/$base")
    else
        cmd=(bash "tests/integration/$base.sh")
    fi
    start=$(date +%s.%N)
    timeout -k 10 "$TIMEOUT" "${cmd[@]}" </dev/null >"$log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then
        echo "PASS $name (${secs}s)"
        passed=$((passed + 1))
        continue
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        reason="timeout after ${TIMEOUT}s"
    elif [ $rc -gt 128 ]; then
        reason="killed by signal $(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
    else
        reason="exit $rc"
    fi
    echo "FAIL $name ($reason)"
    echo "---- $log (last 200 lines) ----"
    tail -n 200 "$log" | sed 's/^/  | /'
    echo "----"
    failed=$((failed + 1))
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
