#!/usr/bin/env bash
# The benchmark scripts a user runs on a bigger machine still work: bench/
# scale.sh (quick sizes) and bench/field.sh (small input) print every row
# with numbers, native and preloaded side by side, and the field bench
# names a top release site for pigz; bench/mechanism.c's preload delivers
# signals with a mechanism and none without. No figure is judged: these
# machines are too noisy for timed assertions. In the slow tier (make
# check-slow): the benchmarks take minutes, more than make check's 120 s
# a test on a busy machine.
. "$(dirname "$0")/../lib/common.sh"
B=$BUILD/bench
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$B/taskq" "$B/handoff" "$B/lockmix" "$B/pingpong" \
    "$B/libmechanism.so"

# The scripts write under $BUILD/bench: give them a build folder of links,
# so a user's own bench results stay as they are.
mkdir -p "$tmp/build/bench"
ln -s "$LOCKBLAME_LIB" "$tmp/build/liblockblame.so"
ln -s "$LOCKBLAME_CLI" "$tmp/build/lockblame"
for p in taskq handoff lockmix pingpong libmechanism.so; do ln -s "$B/$p" "$tmp/build/bench/$p"; done

num='[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?'
echo "== bench/scale.sh, quick sizes, 2 threads, two variants"
BUILD=$tmp/build SCALE_QUICK=1 \
    SCALE_VARIANTS="default mtimer:LIB=$tmp/build/bench/libmechanism.so,MECHANISM=timer" \
    "$ROOT/bench/scale.sh" 2 >"$tmp/scale.out" 2>&1 || bad "scale.sh exited $?"
cat "$tmp/scale.out"
for row in "taskq 2" "handoff 2" "lockmix 2" "pingpong 2"; do
    grep -qE "^$row +[a-z/ -]+\(?[a-z ]*\)? +$num +$num +[-+]?$num(x|%) +$num +[-+]?$num(x|%)" \
        "$tmp/scale.out" || bad "scale.sh: no complete '$row' row"
done
[ "$(grep -c 'hand-off rate' "$tmp/scale.out")" = 3 ] || bad "scale.sh: want 3 hand-off rate rows"
grep -q '^default: sampling: ' "$tmp/scale.out" || bad "scale.sh: no sampling line for the default variant"

echo "== bench/field.sh, 2 threads, 2 rounds, 2 MB"
BUILD=$tmp/build FIELD_REPS=2 FIELD_MB=2 "$ROOT/bench/field.sh" 2 >"$tmp/field.out" 2>&1 ||
    bad "field.sh exited $?"
cat "$tmp/field.out"
grep -q '^program ' "$tmp/field.out" || bad "field.sh: no header"
for prog in "sysbench threads -t 2:sysbench" "sysbench mutex -t 2:sysbench" "pigz -p 2:pigz" "xz -T 2 -3:xz"; do
    label=${prog%%:*} tool=${prog##*:}
    command -v "$tool" >/dev/null 2>&1 || { echo "  ($tool not installed: no '$label' row)"; continue; }
    grep -qE "^$label +$num +$num +$num"x "$tmp/field.out" || bad "field.sh: no complete '$label' row"
done
if command -v pigz >/dev/null 2>&1; then
    # pigz's writer thread waits on a cond its compressing threads signal
    # (a stripped pigz names the site pigz+0x..., one with symbols a function)
    grep -E '^pigz -p 2 ' "$tmp/field.out" | grep -qE '  [^ ]+.*, [0-9.]+ s (cond|mutex) blame$' ||
        bad "field.sh: the pigz row names no release site"
fi

echo "== bench/mechanism.c: signals with a mechanism, none without"
for m in timer timer-user none; do
    MECHANISM=$m MECHANISM_REPORT=1 LD_PRELOAD=$B/libmechanism.so "$B/lockmix" 2 2000000 8 150 \
        >/dev/null 2>"$tmp/mech.$m" || bad "mechanism $m: lockmix exited $?"
    n=$(sed -n 's/^mechanism: \([0-9]*\) signals$/\1/p' "$tmp/mech.$m")
    echo "  $m: ${n:-?} signals"
    case $m in
        none) [ "$n" = 0 ] || bad "mechanism none: $n signals, want 0" ;;
        *) [ -n "$n" ] && [ "$n" -gt 0 ] || bad "mechanism $m: no signals over a CPU-bound run" ;;
    esac
done

echo "$errors problem(s)"
[ $errors -eq 0 ]
