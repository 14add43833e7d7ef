#!/usr/bin/env bash
# lockblame at scale: the contended benchmarks at several thread counts,
# native and preloaded side by side. For machines with more cores than the
# 2-core CI box (docs/PERFORMANCE.md, "Scaling to 16 cores"). Reports figures; never
# fails on time.
#
#   bench/scale.sh [THREADS ...]        default: 4 8 16
#
# Environment: BUILD (default build), SCALE_REPS (default 3 rounds, variants
# interleaved in a rotating order), SCALE_TQ_TASKS (task queue size,
# default 1000000), SCALE_PROGS (default "taskq handoff lockmix pingpong": the rows
# to run), SCALE_QUICK=1 (small sizes, a smoke test of the script),
# SCALE_VARIANTS: the preloaded variants, each NAME or NAME:SETTINGS where
# SETTINGS is a comma-separated list of VAR=VALUE put in the program's
# environment; LIB=PATH there names another build of the library (a
# before/after comparison in one run). Default: "default", the library as
# a user runs it. Example:
#   SCALE_VARIANTS='default exact:LOCKBLAME_MUTEX=exact old:LIB=/tmp/old.so'
#
# Rows, for each thread count N (one column per variant, each a ratio to
# native and the variant's median):
#   taskq N      one producer and N workers, one lock round trip per task:
#                wall time ratio (lower is better) and the hand-off rate's
#                change, threads blocking per 1000 acquisitions, and the
#                workers' waits on "not empty" per 1000 tasks (the rest of
#                the blocking is on the mutex)
#   handoff N    N threads on one lock, one-instruction critical section:
#                throughput ratio (higher is better) and the hand-off
#                rate's change
#   lockmix N    N threads, 64 locks, ~150 xorshift rounds between
#                acquisitions: overhead in percent of wall time
#   pingpong 2   2 threads, one lock, a fixed count (once, with the first
#                N): wall time ratio and the hand-off rate's change
# The databases of the last round stay in $BUILD/bench/scale/NAME.VARIANT.db
# (for `lockblame compare` between thread counts).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
B=$BUILD/bench
LIB=$(realpath "$BUILD/liblockblame.so")
CLI=$BUILD/lockblame
REPS=${SCALE_REPS:-3}
THREADS=("$@")
[ ${#THREADS[@]} -eq 0 ] && THREADS=(4 8 16)
read -r -a VARIANTS <<<"${SCALE_VARIANTS:-default}"
read -r -a PROGS <<<"${SCALE_PROGS:-taskq handoff lockmix pingpong}"
TQ_TASKS=${SCALE_TQ_TASKS:-1000000} HANDOFF_S=1 MIX_OPS=2000000 PINGPONG_N=2000000
if [ "${SCALE_QUICK:-0}" = 1 ]; then
    REPS=1 TQ_TASKS=50000 HANDOFF_S=0.2 MIX_OPS=100000 PINGPONG_N=100000
fi
OUT=$B/scale
rm -rf "$OUT" && mkdir -p "$OUT"

for p in taskq handoff lockmix pingpong; do
    [ -x "$B/$p" ] || { echo "scale: $B/$p missing; run 'make bench-progs'" >&2; exit 1; }
done

. bench/lib.sh # val, median, calc

vname() { echo "${1%%:*}"; }
# one NAME VARIANT REP PROG ARGS...: VARIANT native or one of VARIANTS
one() {
    local name=$1 variant=$2 rep=$3
    shift 3
    local tag f db
    tag=$(vname "$variant")
    f=$OUT/$name.$tag.$rep db=$OUT/$name.$tag.db
    if [ "$variant" = native ]; then
        "$@" >"$f" 2>>"$OUT/stderr.log"
        return
    fi
    local lib=$LIB settings=() kv
    if [ "$variant" != "$tag" ]; then
        IFS=, read -r -a settings <<<"${variant#*:}"
    fi
    local envs=()
    for kv in "${settings[@]}"; do
        case $kv in
            LIB=*) lib=$(realpath "${kv#LIB=}") ;;
            *) envs+=("$kv") ;;
        esac
    done
    rm -f "$db"
    env "${envs[@]}" LD_PRELOAD="$lib" LOCKBLAME_OUTPUT="$db" "$@" >"$f" 2>>"$OUT/stderr.log"
    "$CLI" report -n 1 "$db" 2>/dev/null | grep -m1 '^sampling:' >"$OUT/sampling.$tag.txt"
}
# rounds NAME PROG ARGS...: REPS rounds of native + every variant, the
# order rotating from round to round
rounds() {
    local name=$1 r i all=(native "${VARIANTS[@]}")
    shift
    for ((r = 1; r <= REPS; r++)); do
        for ((i = 0; i < ${#all[@]}; i++)); do
            one "$name" "${all[$(((i + r) % ${#all[@]}))]}" $r "$@"
        done
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
# row LABEL FIGURE NAME KEY FORMAT EXPR: the median of KEY natively (a),
# then for each variant its median (b) and EXPR of a and b in FORMAT
row() {
    local a b v line
    a=$(med "$3" native "$4")
    line=$(printf '%-11s %-26s %12s' "$1" "$2" "$a")
    for v in "${VARIANTS[@]}"; do
        b=$(med "$3" "$(vname "$v")" "$4")
        line+=$(printf ' %12s %8s' "$b" "$(calc "$5" "$a" "$b" "$6")")
    done
    echo "$line"
}
header=$(printf '%-11s %-26s %12s' row figure native)
for v in "${VARIANTS[@]}"; do header+=$(printf ' %12s %8s' "$(vname "$v")" ratio); done
echo "$header"
for v in "${VARIANTS[@]}"; do [ "$v" != "$(vname "$v")" ] && echo "  $(vname "$v"): ${v#*:}"; done
# the rows of one program at n threads
prog_rows() {
    local prog=$1 n=$2
    case $prog in
        taskq)
            rounds taskq$n "$B/taskq" "$n" "$TQ_TASKS"
            row "taskq $n" "wall s (lower is better)" taskq$n elapsed_s '%.2fx' 'b / a'
            row "" "hand-off rate" taskq$n handoff_rate '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
            row "" "sleeps / 1000 acq" taskq$n sleeps_per_kacq '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
            row "" "empty waits / 1000 tasks" taskq$n empty_waits_per_ktask '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)' ;;
        handoff)
            rounds handoff$n "$B/handoff" "$n" "$HANDOFF_S"
            row "handoff $n" "acq/s (higher is better)" handoff$n ops_per_s '%.2fx' 'b / a'
            row "" "hand-off rate" handoff$n handoff_rate '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
            row "" "sleeps / 1000 acq" handoff$n sleeps_per_kacq '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)' ;;
        lockmix)
            rounds lockmix$n "$B/lockmix" "$n" "$MIX_OPS" 64 150
            row "lockmix $n" "wall s" lockmix$n elapsed_s '%+.1f%%' '(b / a - 1) * 100' ;;
        pingpong) # always 2 threads: once, with the first thread count
            [ "$n" = "${THREADS[0]}" ] || return 0
            rounds pingpong "$B/pingpong" "$PINGPONG_N"
            row "pingpong 2" "wall s (lower is better)" pingpong elapsed_s '%.2fx' 'b / a'
            row "" "hand-off rate" pingpong handoff_rate '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)'
            row "" "sleeps / 1000 acq" pingpong sleeps_per_kacq '%+.0f%%' '(a > 0 ? (b / a - 1) * 100 : 0)' ;;
        *) echo "scale: unknown program $prog" >&2 ;;
    esac
}
for n in "${THREADS[@]}"; do
    for prog in "${PROGS[@]}"; do prog_rows "$prog" "$n"; done
done
for v in "${VARIANTS[@]}"; do
    [ -s "$OUT/sampling.$(vname "$v").txt" ] && echo "$(vname "$v"): $(cat "$OUT/sampling.$(vname "$v").txt")"
done
exit 0
