#!/usr/bin/env bash
# The CLI on a big profile: `lockblame report` in each view and `lockblame
# compare` on synthetic databases of 1M nodes (and 1M metric rows,
# tests/cli/make_fixture.py --big), CPU time (user + sys) and wall time
# of each, printed. Run by `make bench` after bench/run.sh; it never
# fails on time (the default view took 1.4-1.9 s of CPU on the 2-core VM
# and compare 4-6 s; CPU time moves with the machine's load too).
# tests/integration/cli_big_profile.sh checks the results on a smaller one.
#
# Usage: BUILD=build bench/cli_perf.sh [NODES]   (default 1000000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
L=$BUILD/lockblame
NODES=${1:-1000000}
[ -x "$L" ] || { echo "bench/cli_perf.sh: $L is not built" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/lockblame-perf.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 "$ROOT/tests/cli/make_fixture.py" --big "$NODES" "$T/big.db"
cp "$T/big.db" "$T/big2.db"

# timed LABEL CMD...: one row, "LABEL  CPU s  wall s"; a failed command's row says so
timed() {
    local label=$1
    shift
    if /usr/bin/env time -f "%U %S %e" -o "$T/time" "$@" >/dev/null 2>"$T/err"; then
        awk -v l="$label" '{ printf "%-36s %8.2f %8.2f\n", l, $1 + $2, $3 }' "$T/time"
    else
        printf "%-36s %8s %8s  (exited non-zero: %s)\n" "$label" - - "$(tail -n 1 "$T/err")"
    fi
}

echo "lockblame CLI on $NODES nodes ($(nproc) CPUs)"
printf "%-36s %8s %8s\n" "command" "CPU s" "wall s"
timed "report (default view)" "$L" report "$T/big.db"
for v in "--format json" "--by-lock" "--by-thread" "--top-down" "--bottom-up" "--flat" "--format folded"; do
    # shellcheck disable=SC2086
    timed "report $v" "$L" report $v "$T/big.db"
done
timed "compare (two such databases)" "$L" compare "$T/big.db" "$T/big2.db"
