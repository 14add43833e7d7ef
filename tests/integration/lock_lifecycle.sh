#!/usr/bin/env bash
# Every way a lock starts and ends (preinit, constructor, static
# initializers, malloc'd memory reused without destroy / memset / memcpy,
# destroy then init, init twice, a failed exec, atexit handlers and
# destructors) keeps mutual exclusion and return codes, with the same output
# natively and preloaded.
. "$(dirname "$0")/../lib/common.sh"
need "$WORKLOADS/lock_lifecycle" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"


echo "== native"
start=$(date +%s.%N)
"$WORKLOADS/lock_lifecycle" >"$tmp/native.out" 2>&1 || { cat "$tmp/native.out"; fail "native run exited $? (the workload itself is wrong)"; }
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "native run took %.2f s\n", b - a }'
for i in 1 2; do
    echo "== preloaded, run $i"
    start=$(date +%s.%N)
    rc=0
    LOCKBLAME_OUTPUT=$tmp/out$i.db preloaded "$WORKLOADS/lock_lifecycle" >"$tmp/pre.out" 2>"$tmp/pre.err" || rc=$?
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "preloaded run took %.2f s\n", b - a }'
    sed 's/^/  /' "$tmp/pre.out"
    grep -v '^lockblame:' "$tmp/pre.err" | sed 's/^/  stderr: /' || true
    [ $rc -eq 0 ] || bad "preloaded run $i exited $rc"
    if ! diff "$tmp/native.out" "$tmp/pre.out" >"$tmp/diff"; then
        bad "preloaded output differs from native (< native, > preloaded):"
        cat "$tmp/diff"
    fi
    # The failed exec wrote the profile (exit_reason exec).
    if [ -s "$tmp/out$i.db" ]; then
        "$LOCKBLAME_CLI" report --by-release-site "$tmp/out$i.db" >/dev/null || bad "report exited $?"
        reasons=$(rows "$tmp/out$i.db" "SELECT group_concat(exit_reason) FROM run")
        [ "$reasons" = exec ] || bad "the profile's exit reasons '$reasons', not the failed exec's alone"
    else
        bad "no profile written"
    fi
    [ $errors -eq 0 ] || break
done
echo "$errors problem(s)"
[ $errors -eq 0 ]
