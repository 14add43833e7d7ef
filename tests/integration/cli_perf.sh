#!/usr/bin/env bash
# lockblame report on a synthetic database with 1M nodes (and 1M metric
# rows): the default view must take at most 3 s of CPU time (user + sys;
# wall time is printed too but depends on machine load). It takes 1.5-1.9 s
# on the 2-core VM, and CPU time moves with the machine's load too: 2.05 s
# once in a fresh-clone CI run with the same binary that took
# 1.6 s in the next runs. 3 s still fails a report that got 2x slower. The other views
# must finish; their times are printed, not judged. A compare of two such
# databases must take at most 5 s of CPU time.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L=${LOCKBLAME_CLI:-$ROOT/build/lockblame}
[ -x "$L" ] || { echo "FAIL: $L is not built"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/lockblame-perf.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 "$ROOT/tests/cli/make_fixture.py" --big 1000000 "$T/big.db" || { echo "FAIL: fixture"; exit 1; }
LIMIT=${LOCKBLAME_PERF_LIMIT_S:-3.0}

run_timed() {   # prints "cpu wall", fails on a non-zero exit
    /usr/bin/env time -f "%U %S %e" -o "$T/time" "$L" report "$@" "$T/big.db" > "$T/out" 2> "$T/err" \
        || { cat "$T/err"; echo "FAIL: report $* exited non-zero"; exit 1; }
    awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$T/time"
}

read -r cpu wall <<< "$(run_timed)"
echo "default view (table): ${cpu} s CPU, ${wall} s wall"
awk -v c="$cpu" -v l="$LIMIT" 'BEGIN { exit !(c <= l) }' \
    || { echo "FAIL: default report took ${cpu} s CPU > ${LIMIT} s"; exit 1; }
for v in "--format json" "--by-lock" "--by-thread" "--top-down" "--bottom-up" "--flat" "--format folded"; do
    # shellcheck disable=SC2086
    read -r cpu wall <<< "$(run_timed $v)"
    echo "report $v: ${cpu} s CPU, ${wall} s wall"
done
cp "$T/big.db" "$T/big2.db"
/usr/bin/env time -f "%U %S %e" -o "$T/time" "$L" compare "$T/big.db" "$T/big2.db" > "$T/out" 2> "$T/err" \
    || { cat "$T/err"; echo "FAIL: compare exited non-zero"; exit 1; }
read -r cpu wall <<< "$(awk '{ printf "%.2f %.2f\n", $1 + $2, $3 }' "$T/time")"
echo "compare of two 1M-node databases: ${cpu} s CPU, ${wall} s wall"
awk -v c="$cpu" -v l="${LOCKBLAME_COMPARE_LIMIT_S:-5.0}" 'BEGIN { exit !(c <= l) }' \
    || { echo "FAIL: compare took ${cpu} s CPU > 5 s"; exit 1; }
echo "PASS"
