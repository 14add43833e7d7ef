# Sourced by tests/integration/*.sh: strict mode, paths, a temporary
# directory removed on exit, and small helpers. tests/run.sh exports the
# paths; the defaults let a driver also run by hand: bash tests/integration/X.sh
set -euo pipefail

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
LOCKBLAME_LIB=${LOCKBLAME_LIB:-$BUILD/liblockblame.so}
LOCKBLAME_CLI=${LOCKBLAME_CLI:-$BUILD/lockblame}
WORKLOADS=${WORKLOADS:-$BUILD/tests/workloads}
WORKLOADS_USER=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
TESTLIB=$ROOT/tests/lib
unset LD_PRELOAD LOCKBLAME_OUTPUT LOCKBLAME_EVENT LOCKBLAME_SIGNAL LOCKBLAME_RUN LOCKBLAME_SUMMARY LOCKBLAME_DISABLE \
      LOCKBLAME_FREQ LOCKBLAME_SPIN LOCKBLAME_MUTEX LOCKBLAME_COND LOCKBLAME_QUIET LOCKBLAME_TREE_ROOT \
      LOCKBLAME_WHATIF_SITE LOCKBLAME_WHATIF_SPEEDUP LOCKBLAME_WHATIF_OUT LOCKBLAME_INTERVAL LOCKBLAME_SPOOL \
      LOCKBLAME_SPOOL_MAX LOCKBLAME_SHARE_RULES LOCKBLAME_SAID
# No report fetches debug files from a server of the user's environment:
# debuginfod_names.sh sets DEBUGINFOD_URLS to its own server.
unset DEBUGINFOD_URLS

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockblame-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The CLI's cache of symbol indexes (common/symindex_cache.h) starts empty
# in each test: none reads what another test or an earlier run left.
export XDG_CACHE_HOME=$tmp/cache
unset LOCKBLAME_CACHE

fail() {
    echo "FAILED: $*"
    exit 1
}

# bad MSG: note a failed check and go on; the driver ends with
# `[ $errors -eq 0 ]` to fail if any did.
errors=0
bad() { echo "FAILED: $*"; errors=$((errors + 1)); }

# skip WHAT: this test cannot run here for want of WHAT ("go (golang-go)");
# exit 77, which tests/run.sh counts as a skip, never a pass.
skip() {
    echo "SKIP: needs $*"
    exit 77
}

# skip_part WHAT: one part of the test cannot run here; the others go on,
# and `finish` makes the whole test a skip unless a check failed.
skipped_parts=()
skip_part() {
    echo "  (skipped: needs $*)"
    skipped_parts+=("$*")
}

# finish: the driver's end: exit 1 if a `bad` check failed, 77 (a skip,
# naming what was missing) if a part was skipped, else 0.
finish() {
    [ "$errors" -eq 0 ] || exit 1
    if [ ${#skipped_parts[@]} -gt 0 ]; then
        local IFS=,
        echo "SKIP: needs ${skipped_parts[*]}"
        exit 77
    fi
    exit 0
}

# rows DB SQL: sqlite3's answer, or "?" when the query fails.
rows() { sqlite3 "$1" "$2" 2>/dev/null || echo "?"; }

# path_nodes WHERE: the start of an SQL query, a table n(id) of the nodes
# on the paths from the root to the nodes of the metric rows m (with their
# thread t and process r, a run row) that meet WHERE, those nodes included.
path_nodes() {
    echo "WITH RECURSIVE n(id) AS (
          SELECT m.node_id FROM metric m JOIN thread t ON t.id = m.thread_id
            JOIN run r ON r.id = t.run_id WHERE ($1)
          UNION SELECT node.parent_id FROM node JOIN n ON node.id = n.id
            WHERE node.parent_id IS NOT NULL)"
}

# waits_functions DB PID: the functions on the call paths of process
# PID's waits, sorted, each once.
waits_functions() {
    rows "$1" "$(path_nodes "r.pid = $2 AND m.wait_s > 0")
        SELECT group_concat(function, ' ') FROM (SELECT DISTINCT f.function FROM n
          JOIN node ON node.id = n.id JOIN frame f ON f.id = node.frame_id
          WHERE f.function IS NOT NULL ORDER BY 1)"
}

# tree_summary_only NAME ERR N: stderr (file ERR) holds the process
# tree's root summary of N processes and nothing else (its other lines:
# the top site, the structural share, the unseen waits).
tree_summary_only() {
    local name=$1 err=$2 n=$3
    local first; first=$(grep -c "^lockblame: $n processes profiled; " "$err" || true)
    local other; other=$(grep -vcE "^lockblame: ($n processes profiled; |top release site: |[0-9.]+% of the idleness |threads spent )" \
        "$err" || true)
    [ "$first" = 1 ] && [ "$other" = 0 ] ||
        bad "$name: stderr is not the root's summary of $n processes alone: $(head -c 600 "$err")"
}

# need FILE...: fail unless each file exists (built?).
need() {
    local f
    for f in "$@"; do
        [ -e "$f" ] || fail "$f does not exist (run make all tests)"
    done
}

# preloaded CMD...: run CMD with liblockblame preloaded. Set LOCKBLAME_OUTPUT
# yourself (in the environment or with env) to choose the database.
preloaded() {
    LD_PRELOAD=$LOCKBLAME_LIB "$@"
}

# under_event EV PROG: run PROG preloaded with its profile in $tmp/EV.db and
# LOCKBLAME_EVENT=EV (none set for EV "default"), its output in $tmp/EV.out
# and $tmp/EV.err, its lockblame: lines shown; sets event_rc to its exit
# status, and returns 1 (a part skipped: skip_part) where EV is task-clock
# and this machine's perf_event cannot open it.
under_event() {
    local ev=$1 prog=$2
    local envs=(LOCKBLAME_OUTPUT="$tmp/$ev.db")
    [ "$ev" = default ] || envs+=(LOCKBLAME_EVENT="$ev")
    event_rc=0
    env "${envs[@]}" LD_PRELOAD="$LOCKBLAME_LIB" "$prog" >"$tmp/$ev.out" 2>"$tmp/$ev.err" || event_rc=$?
    grep '^lockblame:' "$tmp/$ev.err" | sed 's/^/  /'
    if [ "$ev" = task-clock ] && grep -q 'cannot sample task-clock' "$tmp/$ev.err"; then
        skip_part "perf_event for task-clock"
        return 1
    fi
    return 0
}

# cpu_busy_s: the CPU time all processes have used so far, all cores
# together, in seconds (/proc/stat: everything but idle and iowait).
# Two readings around a run tell how busy the machine was meanwhile.
cpu_busy_s() {
    awk -v hz="$(getconf CLK_TCK)" \
        '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}

# ground_truth_blame TOL PROG [ARGS...]: run PROG preloaded; it writes
# $tmp/out.db and its own ground truth $tmp/gt.json. Print the release-site
# table, write the JSON report to $tmp/report.json, and fail unless blame
# per release site matches the ground truth within TOL of the total wait
# (tests/lib/check_blame.py).
ground_truth_blame() {
    local tol=$1
    shift
    LOCKBLAME_OUTPUT=$tmp/out.db GROUND_TRUTH=$tmp/gt.json preloaded "$@" || fail "workload exited $?"
    need "$tmp/out.db" "$tmp/gt.json"
    "$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" || echo "(table report failed: $?)"
    "$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
        || fail "lockblame report --format json exited $?"
    python3 "$TESTLIB/check_blame.py" --tol "$tol" "$tmp/gt.json" "$tmp/report.json" "$tmp/out.db"
}

# top_site_is NAME: fail unless the first row of $tmp/report.json (the
# release-site report that ground_truth_blame wrote) is the function NAME.
top_site_is() {
    local top
    top=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r[0]["function"] if r else "")' \
        "$tmp/report.json")
    [ "$top" = "$1" ] || fail "top release site is '$top', expected $1"
    echo "top release site: $top"
}
