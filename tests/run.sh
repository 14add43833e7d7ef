#!/usr/bin/env bash
# Test runner for lockblame.
#
# Two tiers, each test in its own process under `timeout`:
#   quick (default; make check)  build/tests/unit/* (compiled from tests/unit/*.c)
#                                and tests/integration/*.sh: results only, never
#                                a time, rate or resource limit
#   slow (--slow; make check-slow)  tests/slow/*.sh: soak and scale tests, each
#                                with its own stated, generous limits
# A test's output goes to build/tests/logs/<kind>.<name>.log, printed only
# when the test fails. Exit status 0 is a pass; 77 means the test cannot run
# here (a missing program or kernel feature): it is a skip, and the reason
# is the text after "SKIP: " on the last line of its log that starts so.
# Prints "PASS name (secs)", "FAIL name (reason)" or "SKIP name (reason)"
# per test, then, as its last line, exactly "N passed, M failed, K skipped".
# Exits 1 if any test failed.
#
# Usage: tests/run.sh [--slow] [PATTERN...]   only tests whose name contains a PATTERN
# Environment:
#   LOCKBLAME_TEST_TIMEOUT  seconds per test on an idle machine (default 120;
#                           900 with --slow). The limit only catches a test
#                           that hangs: on a machine with more runnable
#                           threads than CPUs every test takes that many
#                           times longer, so a test's limit is this times
#                           the 1-minute load average over the CPUs online
#                           when it starts (at least 1)
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
tier=quick
if [ "${1:-}" = --slow ]; then
    tier=slow
    shift
fi
if [ $tier = slow ]; then
    TIMEOUT=${LOCKBLAME_TEST_TIMEOUT:-900}
else
    TIMEOUT=${LOCKBLAME_TEST_TIMEOUT:-120}
fi
SKIP_STATUS=77
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
      LOCKBLAME_FREQ LOCKBLAME_SPIN LOCKBLAME_MUTEX LOCKBLAME_COND LOCKBLAME_QUIET LOCKBLAME_TREE_ROOT LOCKBLAME_SPOOL \
      LOCKBLAME_SHARE_RULES
# Nor may `make -jN check`'s job server reach the tests that run make
# themselves: their make warns "-jN forced in submake" on stderr, which
# those tests read as lockblame's.
unset MAKEFLAGS MFLAGS MAKELEVEL

# The CLI's cache of symbol indexes (common/symindex_cache.h) goes to a
# directory of this run's own, not the user's home, and starts empty:
# tests/lib/common.sh gives each driver that sources it one of its own.
unset LOCKBLAME_CACHE
XDG_CACHE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/lockblame-tests-cache.XXXXXX")
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT

selected() {
    [ $# -le 1 ] && return 0
    local name=$1; shift
    local p
    for p in "$@"; do
        case $name in *"$p"*) return 0 ;; esac
    done
    return 1
}

# kind/name, in run order: unit tests first, they are quick.
tests=()
if [ $tier = quick ]; then
    for t in "$BUILD"/tests/unit/*; do
        [ -f "$t" ] && [ -x "$t" ] || continue
        tests+=("unit/$(basename "$t")")
    done
    drivers=tests/integration
else
    drivers=tests/slow
fi
for t in "$drivers"/*.sh; do
    [ -f "$t" ] || continue
    tests+=("${drivers#tests/}/$(basename "$t" .sh)")
done

# skip_reason LOG: what a skipped test said it needed.
skip_reason() {
    local why
    why=$(sed -n 's/^SKIP: //p' "$1" | tail -n 1)
    echo "${why:-exit $SKIP_STATUS, no reason given}"
}

passed=0
failed=0
skipped=0
for name in "${tests[@]}"; do
    selected "$name" "$@" || continue
    kind=${name%%/*}
    base=${name#*/}
    log=$LOGDIR/$kind.$base.log
    if [ "$kind" = unit ]; then
        cmd=("$BUILD/tests/unit/$base")
    else
        cmd=(bash "tests/$kind/$base.sh")
    fi
    limit=$(awk -v t="$TIMEOUT" -v cpus="$(nproc)" '{ f = $1 / cpus; printf "%.0f", t * (f > 1 ? f : 1) }' /proc/loadavg)
    start=$(date +%s.%N)
    timeout -k 10 "$limit" "${cmd[@]}" </dev/null >"$log" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then
        echo "PASS $name (${secs}s)"
        passed=$((passed + 1))
        continue
    fi
    if [ $rc -eq $SKIP_STATUS ]; then
        echo "SKIP $name ($(skip_reason "$log"))"
        skipped=$((skipped + 1))
        continue
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        reason="timeout after ${limit}s"
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

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
