#!/usr/bin/env bash
# An output no process of the tree could write (its directory missing, or
# read-only to the tree's user): one lockblame: line for the whole tree,
# said by the process that starts it (or by `lockblame run`), and the tree
# runs unprofiled, its output and status its own. Before, every process of
# the tree profiled, failed its write and said so (21 lines for forktree
# 20 2 1000), and `run` then said that no process had recorded anything.
#  1. plain LD_PRELOAD, LOCKBLAME_OUTPUT in a directory that does not exist
#  2. lockblame run -o the same
#  3. as an unprivileged user (where root can run one), a read-only
#     directory: plain LD_PRELOAD with the default name there, and run
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$BUILD/bench/forktree"
prog=$BUILD/bench/forktree

# one NAME ERR OUT STATUS PATTERN: the run's stderr is one lockblame: line
# matching PATTERN, forktree's output is there, and it exited 0.
one() {
    local name=$1 err=$2 out=$3 st=$4 pattern=$5
    local lines; lines=$(grep -c '^lockblame: ' "$err" || true)
    echo "  $name: status $st, $lines lockblame: line(s): $(head -c 200 "$err")"
    [ "$st" = 0 ] || bad "$name: exited $st, not forktree's 0"
    [ "$lines" = 1 ] && grep -qE "$pattern" "$err" ||
        bad "$name: stderr is not one line matching '$pattern': $(head -c 600 "$err")"
    grep -q "^per_child_ms " "$out" || bad "$name: forktree's own output is missing"
}

echo "== 1. plain LD_PRELOAD, a directory that does not exist"
db=$tmp/missing/dir/out.db st=0
LD_PRELOAD=$LOCKBLAME_LIB LOCKBLAME_OUTPUT=$db "$prog" 20 2 1000 >"$tmp/plain.out" 2>"$tmp/plain.err" || st=$?
one plain "$tmp/plain.err" "$tmp/plain.out" $st \
    "^lockblame: cannot write profile $db: No such file or directory; not profiling\$"

echo "== 2. lockblame run, the same"
st=0
"$LOCKBLAME_CLI" run -o "$db" -- "$prog" 20 2 1000 >"$tmp/run.out" 2>"$tmp/run.err" || st=$?
one run "$tmp/run.err" "$tmp/run.out" $st \
    "^lockblame: run: cannot write profile $db: No such file or directory; running $prog unprofiled\$"
[ ! -e "$tmp/missing" ] || bad "something made $tmp/missing"

echo "== 3. a read-only directory, as nobody"
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null || ! id nobody >/dev/null 2>&1; then
    skip_part "root and runuser, to run as nobody"
else
    ro=$tmp/ro
    mkdir -m 555 "$ro"
    chmod 755 "$tmp"
    st=0
    (cd "$ro" && runuser -u nobody -- env LD_PRELOAD="$LOCKBLAME_LIB" "$prog" 20 2 1000) \
        >"$tmp/ro.out" 2>"$tmp/ro.err" || st=$?
    one "read-only, plain" "$tmp/ro.err" "$tmp/ro.out" $st \
        "^lockblame: cannot write profile $ro/lockblame\\.forktree\\.[0-9]+\\.db: Permission denied; not profiling\$"
    st=0
    (cd "$ro" && runuser -u nobody -- "$LOCKBLAME_CLI" run -- "$prog" 20 2 1000) \
        >"$tmp/rorun.out" 2>"$tmp/rorun.err" || st=$?
    one "read-only, run" "$tmp/rorun.err" "$tmp/rorun.out" $st \
        "^lockblame: run: cannot write profile in the current directory: Permission denied; running $prog unprofiled\$"
    [ -z "$(ls -A "$ro")" ] || bad "read-only: files made in $ro: $(ls -A "$ro")"
fi
finish
