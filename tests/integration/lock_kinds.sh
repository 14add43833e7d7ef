#!/usr/bin/env bash
# Every mutex kind (normal, recursive, errorcheck, adaptive, robust, PI, PP,
# process-shared mutex and spin locks shared with a forked child) returns the
# same values and errno, and keeps mutual exclusion, natively and preloaded.
# The workload asserts the POSIX/glibc results itself; this driver also
# compares the two runs line by line.
. "$(dirname "$0")/../lib/common.sh"
need "$WORKLOADS/lock_kinds" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"

echo "== native"
start=$(date +%s.%N)
"$WORKLOADS/lock_kinds" >"$tmp/native.out" 2>&1 || { cat "$tmp/native.out"; fail "native run exited $? (the workload itself is wrong)"; }
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "native run took %.2f s\n", b - a }'
grep -E 'skip|contended|pshared .*count|lock_kinds:' "$tmp/native.out" | sed 's/^/  /'

echo "== preloaded"
start=$(date +%s.%N)
rc=0
LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$WORKLOADS/lock_kinds" >"$tmp/pre.out" 2>"$tmp/pre.err" || rc=$?
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "preloaded run took %.2f s\n", b - a }'
grep -E 'skip|contended|pshared .*count|lock_kinds:' "$tmp/pre.out" | sed 's/^/  /'
grep -v '^lockblame:' "$tmp/pre.err" | sed 's/^/  stderr: /' || true

errors=0
if ! diff "$tmp/native.out" "$tmp/pre.out" >"$tmp/diff"; then
    echo "preloaded output differs from native (< native, > preloaded):"
    cat "$tmp/diff"
    errors=$((errors + 1))
fi
[ $rc -eq 0 ] || { echo "FAILED: preloaded run exited $rc"; errors=$((errors + 1)); }
if [ -s "$tmp/out.db" ]; then
    "$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" >/dev/null \
        || { echo "FAILED: report on the profile exited $?"; errors=$((errors + 1)); }
else
    echo "FAILED: no profile written"; errors=$((errors + 1))
fi
echo "$errors problem(s)"
[ $errors -eq 0 ]
