#!/usr/bin/env bash
# On a bigger machine, from the working tree with .devpack/ carried over
# (bench/pack.sh): what the machine is, then bench/scale.sh and
# bench/field.sh, each under a time limit so that a slow row cannot eat
# the machine's lease. Writes probe.txt, scale.txt and field.txt to $OUT
# (the device tool's output folder) and prints them.
#
#   bench/device_run.sh [THREADS ...]       default: 4 8 16
#
# Environment: SCALE_VARIANTS (default: "default", every .devpack/lib-NAME.so
# as a variant NAME, and the timer alone as "mtimer"), SCALE_REPS (4),
# SCALE_PROGS, SCALE_LIMIT_S (300), FIELD_THREADS ("4 16"; empty: no field
# bench), FIELD_LIMIT_S (150), FIELD_MB.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/device_run}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.devpack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PWD/.devpack/bin:$PATH
[ -x .devpack/lockblame ] || { echo "device_run: no .devpack (bench/pack.sh, carried)" >&2; exit 1; }
THREADS=("$@")
[ ${#THREADS[@]} -eq 0 ] && THREADS=(4 8 16)

if [ -z "${SCALE_VARIANTS:-}" ]; then
    SCALE_VARIANTS=default
    for lib in .devpack/lib-*.so; do
        [ -e "$lib" ] || continue
        name=${lib#.devpack/lib-}
        SCALE_VARIANTS+=" ${name%.so}:LIB=$lib"
    done
    SCALE_VARIANTS+=" mtimer:LIB=.devpack/bench/libmechanism.so,MECHANISM=timer"
fi
export SCALE_VARIANTS SCALE_REPS=${SCALE_REPS:-4}

{
    echo "== probe"
    date -u
    echo "cpus $(nproc), $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "kernel $(uname -r), $(getconf GNU_LIBC_VERSION), $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
    LD_PRELOAD=$PWD/.devpack/liblockblame.so LOCKBLAME_OUTPUT=$OUT/probe.db .devpack/bench/taskq 4 100000 >/dev/null
    .devpack/lockblame report -n 1 "$OUT/probe.db" | grep -E '^(event|sampling):'
    rm -f "$OUT/probe.db"
} >"$OUT/probe.txt" 2>&1
cat "$OUT/probe.txt"

BUILD=.devpack timeout "${SCALE_LIMIT_S:-300}" bench/scale.sh "${THREADS[@]}" >"$OUT/scale.txt" 2>&1
cat "$OUT/scale.txt"
read -r -a field_threads <<<"${FIELD_THREADS-4 16}"
if [ ${#field_threads[@]} -gt 0 ]; then
    BUILD=.devpack timeout "${FIELD_LIMIT_S:-150}" bench/field.sh "${field_threads[@]}" >"$OUT/field.txt" 2>&1
    cat "$OUT/field.txt"
fi
exit 0
