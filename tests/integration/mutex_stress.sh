#!/usr/bin/env bash
# Mutual exclusion holds under the preload: mutex, spin lock (both mixed with
# trylock) and rwlock counters come out exact, at 4 and 8 threads.
. "$(dirname "$0")/../lib/common.sh"
need "$WORKLOADS/mutex_stress" "$LOCKBLAME_LIB"

for n in 4 8; do
    echo "== $n threads, native"
    "$WORKLOADS/mutex_stress" "$n" >"$tmp/native.out" || { cat "$tmp/native.out"; fail "native run exited $?"; }
    cat "$tmp/native.out"
    echo "== $n threads, preloaded"
    start=$(date +%s.%N)
    LOCKBLAME_OUTPUT=$tmp/out$n.db preloaded "$WORKLOADS/mutex_stress" "$n" >"$tmp/pre.out" \
        || { cat "$tmp/pre.out"; fail "preloaded run exited $?"; }
    cat "$tmp/pre.out"
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "preloaded run took %.2f s\n", b - a }'
    cmp -s "$tmp/native.out" "$tmp/pre.out" || fail "output differs under the preload"
    need "$tmp/out$n.db"
done
