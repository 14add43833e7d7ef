#!/usr/bin/env bash
# lockblame on real programs at several thread counts: wall time natively
# and preloaded, side by side, and the top release-site row a user would
# read first. For machines with more cores than the 2-core CI box
# (docs/PERFORMANCE.md, "Scaling to 16 cores"). Reports figures; never fails on time.
#
#   bench/field.sh [THREADS ...]        default: 4 8 16
#
# Programs (each skipped when not on the PATH): sysbench threads
# (--thread-locks=2: N threads trading 2 mutexes around sched_yield),
# sysbench mutex, pigz -p N and xz -T N compressing the same input.
# Environment: BUILD (default build), FIELD_REPS (default 3 rounds, native
# and preloaded alternating in a rotating order), FIELD_MB (input size for
# pigz and xz, default 64), FIELD_ENV (extra VAR=VALUE settings for the
# preloaded runs, space-separated).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LIB=$(realpath "$BUILD/liblockblame.so")
REPS=${FIELD_REPS:-3}
MB=${FIELD_MB:-64}
read -r -a EXTRA_ENV <<<"${FIELD_ENV:-}"
THREADS=("$@")
[ ${#THREADS[@]} -eq 0 ] && THREADS=(4 8 16)
OUT=$BUILD/bench/field
rm -rf "$OUT" && mkdir -p "$OUT"

. bench/lib.sh # median, calc

# input for the compressors: half counting text (compresses well), half
# base64 of random bytes (compresses ~25%)
INPUT=$OUT/input
{
    seq 1 100000000 | head -c $((MB * 512 * 1024))
    head -c $((MB * 384 * 1024)) /dev/urandom | base64 -w 76
} >"$INPUT"

# timed VARIANT NAME CMD...: runs CMD (stdout discarded) and appends its
# wall seconds to $OUT/NAME.VARIANT; the preloaded run's summary lines
# (stderr, 'lockblame:') go to $OUT/NAME.summary
timed() {
    local variant=$1 name=$2 t0 t1
    shift 2
    t0=$(date +%s.%N)
    if [ "$variant" = native ]; then
        "$@" >/dev/null 2>>"$OUT/stderr.log"
    else
        env "${EXTRA_ENV[@]}" LD_PRELOAD="$LIB" LOCKBLAME_OUTPUT="$OUT/$name.db" "$@" \
            >/dev/null 2>"$OUT/$name.summary"
    fi
    t1=$(date +%s.%N)
    echo "$(calc '%.4f' "$t0" "$t1" 'b - a')" >>"$OUT/$name.$variant"
}

# row NAME LABEL CMD...: REPS rounds of native and preloaded, then one line
row() {
    local name=$1 label=$2 r a b top
    shift 2
    for ((r = 1; r <= REPS; r++)); do
        if ((r % 2)); then
            timed native "$name" "$@"; timed lb "$name" "$@"
        else
            timed lb "$name" "$@"; timed native "$name" "$@"
        fi
    done
    # shellcheck disable=SC2046 # one value a line
    a=$(median $(cat "$OUT/$name.native")) b=$(median $(cat "$OUT/$name.lb"))
    top=$(sed -n 's/^lockblame: top release site: //p' "$OUT/$name.summary" | head -1)
    printf '%-30s %9s %9s %7s  %s\n' "$label" "$a" "$b" "$(calc '%.2fx' "$a" "$b" 'b / a')" "${top:--}"
}
have() { command -v "$1" >/dev/null 2>&1; }

printf 'lockblame field bench, %s, %s CPUs (%s), Linux %s, %s rounds, input %s MB\n' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
    "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(uname -r)" "$REPS" "$MB"
[ ${#EXTRA_ENV[@]} -gt 0 ] && echo "preloaded with: ${EXTRA_ENV[*]}"
printf '%-30s %9s %9s %7s  %s\n' program "native s" "lb s" ratio "top release site (last preloaded run)"
for n in "${THREADS[@]}"; do
    if have sysbench; then
        row "sbthreads$n" "sysbench threads -t $n" \
            sysbench threads --threads="$n" --thread-locks=2 --events=$((75 * n)) --time=0 run
        row "sbmutex$n" "sysbench mutex -t $n" sysbench mutex --threads="$n" --mutex-locks=200000 run
    fi
    have pigz && row "pigz$n" "pigz -p $n" pigz -p "$n" -c "$INPUT"
    have xz && row "xz$n" "xz -T $n -3" xz -T "$n" -3 -c "$INPUT"
done
for db in "$OUT"/*.db; do
    [ -f "$db" ] || continue
    echo "$(basename "$db" .db): $("$BUILD/lockblame" report -n 1 "$db" 2>/dev/null | grep -m1 '^sampling:')"
done
exit 0
