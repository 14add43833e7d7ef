#!/usr/bin/env bash
# lockblame at scale: the contended benchmarks at several thread counts,
# native and preloaded side by side. For machines with more cores than the
# 2-core CI box (docs/PERFORMANCE.md, "Scaling"). Reports figures; never
# fails on time.
#
#   bench/scale.sh [THREADS ...]        default: 4 8 16
#
# Environment: BUILD (default build), SCALE_REPS (default 3 rounds, variants
# interleaved in a rotating order), SCALE_EVENT (a LOCKBLAME_EVENT for the
# preloaded runs; default: the library's own choice), SCALE_QUICK=1 (small
# sizes, a smoke test of the script).
#
# Rows, for each thread count N:
#   taskq N      one producer, N workers, one lock round trip per task:
#                wall time ratio (lower is better) and the hand-off rate
#   handoff N    N threads on one lock, one-instruction critical section:
#                throughput ratio (higher is better) and the hand-off rate
#   lockmix N    N threads, 64 locks, ~150 xorshift rounds between
#                acquisitions: overhead in percent of wall time
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
B=$BUILD/bench
LIB=$(realpath "$BUILD/liblockblame.so")
CLI=$BUILD/lockblame
REPS=${SCALE_REPS:-3}
THREADS=("$@")
[ ${#THREADS[@]} -eq 0 ] && THREADS=(4 8 16)
TQ_TASKS=2000000 HANDOFF_S=1 MIX_OPS=2000000
if [ "${SCALE_QUICK:-0}" = 1 ]; then
    REPS=1 TQ_TASKS=50000 HANDOFF_S=0.2 MIX_OPS=100000
fi
OUT=$B/scale
rm -rf "$OUT" && mkdir -p "$OUT"

for p in taskq handoff lockmix; do
    [ -x "$B/$p" ] || { echo "scale: $B/$p missing; run 'make bench-progs'" >&2; exit 1; }
done

. bench/lib.sh # val, median, calc

# one NAME TAG REP PROG ARGS...: TAG native or lb
one() {
    local name=$1 tag=$2 rep=$3
    shift 3
    local f=$OUT/$name.$tag.$rep db=$OUT/$name.$rep.db
    if [ "$tag" = native ]; then
        "$@" >"$f" 2>>"$OUT/stderr.log"
    else
        rm -f "$db"
        if [ -n "${SCALE_EVENT:-}" ]; then
            LD_PRELOAD=$LIB LOCKBLAME_OUTPUT=$db LOCKBLAME_EVENT=$SCALE_EVENT "$@" >"$f" 2>>"$OUT/stderr.log"
        else
            LD_PRELOAD=$LIB LOCKBLAME_OUTPUT=$db "$@" >"$f" 2>>"$OUT/stderr.log"
        fi
        "$CLI" report -n 1 "$db" 2>/dev/null | grep -m1 '^sampling:' >"$OUT/sampling.txt"
    fi
}
# pair NAME PROG ARGS...: REPS rounds of native + lb, order alternating
pair() {
    local name=$1 r
    shift
    for ((r = 1; r <= REPS; r++)); do
        if ((r % 2)); then one "$name" native $r "$@"; one "$name" lb $r "$@"
        else one "$name" lb $r "$@"; one "$name" native $r "$@"; fi
    done
}
# med NAME TAG KEY
med() {
    local r v=()
    for ((r = 1; r <= REPS; r++)); do v+=("$(val "$3" "$OUT/$1.$2.$r")"); done
    median "${v[@]}"
}

printf 'lockblame scale bench, %s, %s CPUs (%s), Linux %s, %s rounds\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(nproc)" "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(uname -r)" "$REPS"
# row LABEL FIGURE NAME KEY FORMAT EXPR: one line, the medians of KEY native
# (a) and preloaded (b), and EXPR of them printed with FORMAT
row() {
    local a b
    a=$(med "$3" native "$4") b=$(med "$3" lb "$4")
    printf '%-12s %-34s %14s %14s %10s\n' "$1" "$2" "$a" "$b" "$(calc "$5" "$a" "$b" "$6")"
}
printf '%-12s %-34s %14s %14s %10s\n' row figure native lockblame ratio
for n in "${THREADS[@]}"; do
    pair taskq$n "$B/taskq" "$n" "$TQ_TASKS"
    row "taskq $n" "wall s (lower is better)" taskq$n elapsed_s '%.2fx' 'b / a'
    row "" "hand-off rate" taskq$n handoff_rate '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
    pair handoff$n "$B/handoff" "$n" "$HANDOFF_S"
    row "handoff $n" "acq/s (higher is better)" handoff$n ops_per_s '%.2fx' 'b / a'
    row "" "hand-off rate" handoff$n handoff_rate '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
    pair lockmix$n "$B/lockmix" "$n" "$MIX_OPS" 64 150
    row "lockmix $n" "wall s, ~150 rounds between acq" lockmix$n elapsed_s '%+.1f%%' '(b / a - 1) * 100'
done
[ -s "$OUT/sampling.txt" ] && cat "$OUT/sampling.txt"
exit 0
