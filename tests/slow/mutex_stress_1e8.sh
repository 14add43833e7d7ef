#!/usr/bin/env bash
# Mutual exclusion under conversion races at 10^8 operations: mutexes and
# spin locks re-initialized every few thousand operations (so each epoch
# starts with every thread converting the same fresh lock), counts exact.
# Prints native and preloaded times. In the slow tier (make check-slow):
# 10^8 operations take 30-60 s preloaded on the 2-core VM, within the
# tier's 900 s a test.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/mutex_stress_1e8
need "$W" "$LOCKBLAME_LIB"

secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

# threads ops epoch
for cfg in "4 100000000 5000" "8 20000000 500"; do
    set -- $cfg
    echo "== $1 threads, $2 operations, re-init every $3 operations per thread"
    start=$(date +%s.%N)
    "$W" "$@" >"$tmp/native.out" || { cat "$tmp/native.out"; fail "native run exited $?"; }
    tn=$(secs "$start")
    cat "$tmp/native.out"
    start=$(date +%s.%N)
    LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" "$@" >"$tmp/pre.out" 2>"$tmp/pre.err" \
        || { cat "$tmp/pre.out" "$tmp/pre.err"; fail "preloaded run exited $?"; }
    tp=$(secs "$start")
    cat "$tmp/pre.out"
    awk -v n="$tn" -v p="$tp" 'BEGIN { printf "native %.2f s, preloaded %.2f s (x%.2f)\n", n, p, p / n }'
    cmp -s "$tmp/native.out" "$tmp/pre.out" || fail "output differs under the preload"
    need "$tmp/out.db"
    rm -f "$tmp/out.db"
done
