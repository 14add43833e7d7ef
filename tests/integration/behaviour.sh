#!/usr/bin/env bash
# The preload never changes a program's behaviour: same stdout, same exit
# status, same stderr apart from at most 5 added lines that start with
# `lockblame:`, also over mutexes initialized on reused memory (with
# lockblame running or disabled). Also: it fails quietly on a bad setting (unwritable output,
# unknown event, bad LOCKBLAME_SPIN, LOCKBLAME_MUTEX or LOCKBLAME_COND), writes lockblame.<prog>.<pid>.db by default, and
# `lockblame run` leaves the program's output alone.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/mutex_stress" \
     "$WORKLOADS/exit_status" "$BUILD/demo/taskqueue" "$WORKLOADS/mutex_init_reused"

errors=0
bad() {
    echo "  FAILED: $*"
    errors=$((errors + 1))
}

# compare NAME MIN_LB_LINES CMD...: run CMD natively and preloaded (with
# whatever LOCKBLAME_* the caller put in PRE_ENV) and compare. MIN_LB_LINES is
# how many `lockblame:` lines the preloaded run must at least print.
PRE_ENV=()
compare() {
    local name=$1 min_lines=$2
    shift 2
    echo "== $name: $* ${PRE_ENV[*]}"
    local rc=0 prc=0
    "$@" >"$tmp/$name.n.out" 2>"$tmp/$name.n.err" || rc=$?
    env "${PRE_ENV[@]}" LD_PRELOAD="$LOCKBLAME_LIB" "$@" \
        >"$tmp/$name.p.out" 2>"$tmp/$name.p.err" || prc=$?
    echo "  exit status: native $rc, preloaded $prc"
    [ "$rc" -eq "$prc" ] || bad "$name: exit status $prc under the preload, $rc natively"
    if ! cmp -s "$tmp/$name.n.out" "$tmp/$name.p.out"; then
        bad "$name: stdout differs"
        diff "$tmp/$name.n.out" "$tmp/$name.p.out" | head -20 | sed 's/^/    /' || true
    fi
    grep -v '^lockblame:' "$tmp/$name.p.err" >"$tmp/$name.p.err.rest" || true
    if ! cmp -s "$tmp/$name.n.err" "$tmp/$name.p.err.rest"; then
        bad "$name: stderr differs beyond lockblame: lines"
        diff "$tmp/$name.n.err" "$tmp/$name.p.err.rest" | head -20 | sed 's/^/    /' || true
    fi
    local n
    n=$(grep -c '^lockblame:' "$tmp/$name.p.err" || true)
    echo "  lockblame: lines on stderr: $n"
    sed -n 's/^lockblame:/    lockblame:/p' "$tmp/$name.p.err" | head -10
    [ "$n" -le 5 ] || bad "$name: $n lockblame: lines on stderr (at most 5)"
    [ "$n" -ge "$min_lines" ] || bad "$name: expected a lockblame: line on stderr explaining the problem"
    return 0
}

PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/stress.db")
compare stress 0 "$WORKLOADS/mutex_stress" 4
[ -s "$tmp/stress.db" ] || bad "no database at LOCKBLAME_OUTPUT"

PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/demo.db")
compare demo 0 "$BUILD/demo/taskqueue" 4

PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/exit3.db")
compare exit3 0 "$WORKLOADS/exit_status"
[ "$(cat "$tmp/exit3.n.out")" = "exit_status: stdout line" ] || bad "exit_status workload printed something unexpected"
rc=0
"$WORKLOADS/exit_status" >/dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || bad "exit_status workload exits $rc natively, not 3"

PRE_ENV=(LOCKBLAME_OUTPUT=/nonexistent-dir/sub/out.db)
compare unwritable_output 1 "$WORKLOADS/mutex_stress" 2 30000

PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/badevent.db" LOCKBLAME_EVENT=no_such_event@1000)
compare bad_event 1 "$WORKLOADS/mutex_stress" 2 30000

# Mutexes initialized over memory that held other data, one pattern of
# which looks like lockblame's tags: unchanged with lockblame running, and
# with it disabled (no pool of lb_mons to follow a tag into: it crashed).
PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/reused.db")
compare mutex_init_reused 0 "$WORKLOADS/mutex_init_reused"
PRE_ENV=(LOCKBLAME_DISABLE=1)
compare mutex_init_reused_disabled 0 "$WORKLOADS/mutex_init_reused"

# a bad LOCKBLAME_SPIN, LOCKBLAME_MUTEX or LOCKBLAME_COND: one line naming it, the program
# unchanged (exit status 3)
for var in SPIN MUTEX COND; do
    PRE_ENV=(LOCKBLAME_OUTPUT="$tmp/bad$var.db" "LOCKBLAME_$var=bogus")
    compare "bad_$var" 1 "$WORKLOADS/exit_status"
    n=$(grep -c "^lockblame: bad LOCKBLAME_$var" "$tmp/bad_$var.p.err" || true)
    [ "$n" -eq 1 ] || bad "bad_$var: $n lines starting 'lockblame: bad LOCKBLAME_$var' on stderr, want 1"
done

echo "== default output name"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && preloaded "$WORKLOADS/mutex_stress" 2 30000 >/dev/null) || bad "run in $tmp/cwd exited $?"
ls "$tmp/cwd"
compgen -G "$tmp/cwd/lockblame.mutex_stress.*.db" >/dev/null \
    || bad "no lockblame.mutex_stress.<pid>.db in the current directory"

echo "== lockblame run"
rc=0
"$LOCKBLAME_CLI" run -o "$tmp/run.db" -- "$WORKLOADS/mutex_stress" 2 30000 >"$tmp/run.out" 2>"$tmp/run.err" || rc=$?
sed 's/^/  stderr: /' "$tmp/run.err" | head -10
[ $rc -eq 0 ] || bad "lockblame run exited $rc"
"$WORKLOADS/mutex_stress" 2 30000 | cmp -s - "$tmp/run.out" || bad "lockblame run changed the program's stdout"
[ -s "$tmp/run.db" ] || bad "lockblame run -o wrote no database"
rc=0
"$LOCKBLAME_CLI" run -o "$tmp/run3.db" -- "$WORKLOADS/exit_status" >/dev/null 2>&1 || rc=$?
echo "  lockblame run -- exit_status: exit status $rc (the program's is 3; not checked)"

echo "$errors problem(s)"
[ $errors -eq 0 ]
