#!/usr/bin/env bash
# A bad LOCKBLAME_* value is said in one line for the whole process tree.
#
# A switch (LOCKBLAME_QUIET, LOCKBLAME_SPOOL,
# LOCKBLAME_SHARE_RULES, LOCKBLAME_CACHE: 1 or 0) with any other value is said in one line
# for the whole tree, under plain LD_PRELOAD (by the image that started the
# run) and under `lockblame run` (by run, as no process of the tree starts
# it), and the default holds: prefork_sem (a parent and four forked
# workers) prints the lines it prints natively (their measured figures
# aside), exits 0, and its processes are in the database. A value of 0 or 1 is said by no line.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/prefork_sem"
prog=$WORKLOADS_USER/prefork_sem
# shape FILE: the program's lines without their measured figures
shape() { sed 's/ [0-9.]*$//' "$1"; }
"$prog" >"$tmp/native.out" || fail "prefork_sem failed natively"

# tree MODE NAME=VALUE: run the tree under MODE (preload or run) with the
# setting; its stderr in $tmp/err, its database $tmp/t.db.
tree() {
    rm -f "$tmp/t.db"
    local rc=0
    if [ "$1" = preload ]; then
        env "$2" LOCKBLAME_OUTPUT="$tmp/t.db" LD_PRELOAD="$LOCKBLAME_LIB" "$prog" \
            >"$tmp/out" 2>"$tmp/err" || rc=$?
    else
        env "$2" "$LOCKBLAME_CLI" run -o "$tmp/t.db" -- "$prog" >"$tmp/out" 2>"$tmp/err" || rc=$?
    fi
    [ "$rc" = 0 ] || bad "$1 $2: exit status $rc"
    [ "$(shape "$tmp/out")" = "$(shape "$tmp/native.out")" ] ||
        bad "$1 $2: its lines differ from the native run's: $(shape "$tmp/out" | tr '\n' ' ')"
}

for name in LOCKBLAME_QUIET LOCKBLAME_SPOOL LOCKBLAME_SHARE_RULES LOCKBLAME_CACHE; do
    for mode in preload run; do
        tree $mode "$name=maybe"
        n=$(grep -c "^lockblame: $name wants .*, not 'maybe'; using 1\$" "$tmp/err" || true)
        [ "$n" = 1 ] || bad "$mode $name=maybe: $n lines saying so, want 1: $(cat "$tmp/err")"
        procs=$(rows "$tmp/t.db" "SELECT COUNT(*) FROM run")
        # (a worker that never waited and ran less than a sample period
        # records nothing, and is left out)
        [ "$procs" -ge 3 ] 2>/dev/null || bad "$mode $name=maybe: $procs processes in the database, want 3 or more"
        for good in 0 1; do
            tree $mode "$name=$good"
            ! grep -q "$name" "$tmp/err" || bad "$mode $name=$good: said: $(cat "$tmp/err")"
        done
        echo "ok: $mode $name"
    done
done

# The settings every image reads (sampling, accounting, time windows): a
# shell that runs prefork_sem twice is three images, each of which reads
# them; one line in all, under plain LD_PRELOAD and under `lockblame run`.
printf '#!/bin/sh\n"%s" >/dev/null\n"%s" >/dev/null\n' "$prog" "$prog" >"$tmp/two.sh"
chmod +x "$tmp/two.sh"
for setting in LOCKBLAME_FREQ=abc LOCKBLAME_EVENT=no_such_event LOCKBLAME_SIGNAL=zz \
    LOCKBLAME_MUTEX=zz LOCKBLAME_COND=zz LOCKBLAME_SPIN=zz LOCKBLAME_INTERVAL=zz; do
    name=${setting%%=*} value=${setting#*=}
    for mode in preload run; do
        rm -f "$tmp/t.db"
        rc=0
        if [ $mode = preload ]; then
            env "$setting" LOCKBLAME_OUTPUT="$tmp/t.db" LD_PRELOAD="$LOCKBLAME_LIB" "$tmp/two.sh" \
                2>"$tmp/err" || rc=$?
        else
            env "$setting" "$LOCKBLAME_CLI" run -o "$tmp/t.db" -- "$tmp/two.sh" 2>"$tmp/err" || rc=$?
        fi
        [ $rc = 0 ] || bad "$mode $setting: exit status $rc"
        n=$(grep -c "$name\|$value" "$tmp/err" || true)
        [ "$n" = 1 ] || bad "$mode $setting: $n lines about it, want 1: $(cat "$tmp/err")"
        procs=$(rows "$tmp/t.db" "SELECT COUNT(*) FROM run")
        [ "$procs" -ge 6 ] 2>/dev/null || bad "$mode $setting: $procs processes in the database, want 6 or more"
    done
    echo "ok: $setting said once"
done

# a bash root: bash defines getenv, which reads only the shell's variables
# once a setenv made them (the library's own, at start-up); the root reads
# its settings all the same, says the bad one, and its children do not
if command -v bash >/dev/null; then
    env LOCKBLAME_FREQ=abc LOCKBLAME_SPOOL=yes LOCKBLAME_OUTPUT="$tmp/b.db" LD_PRELOAD="$LOCKBLAME_LIB" \
        bash -c "\"$prog\" >/dev/null; \"$prog\" >/dev/null" 2>"$tmp/err" || bad "bash root: failed"
    for name in LOCKBLAME_FREQ LOCKBLAME_SPOOL; do
        n=$(grep -c "$name" "$tmp/err" || true)
        [ "$n" = 1 ] || bad "bash root, $name: $n lines, want 1: $(cat "$tmp/err")"
    done
    echo "ok: a bash root says each once"
fi

# a run started inside another tree (which passed on LOCKBLAME_SAID) says
# its own lines
for mode in preload run; do
    rm -f "$tmp/t.db"
    if [ $mode = preload ]; then
        env LOCKBLAME_SAID=LOCKBLAME_FREQ LOCKBLAME_FREQ=abc LOCKBLAME_OUTPUT="$tmp/t.db" \
            LD_PRELOAD="$LOCKBLAME_LIB" "$tmp/two.sh" 2>"$tmp/err" || bad "$mode, inherited: failed"
    else
        env LOCKBLAME_SAID=LOCKBLAME_FREQ LOCKBLAME_FREQ=abc "$LOCKBLAME_CLI" run -o "$tmp/t.db" -- \
            "$tmp/two.sh" 2>"$tmp/err" || bad "$mode, inherited: failed"
    fi
    n=$(grep -c "LOCKBLAME_FREQ" "$tmp/err" || true)
    [ "$n" = 1 ] || bad "$mode, LOCKBLAME_SAID inherited from a tree around: $n lines, want 1: $(cat "$tmp/err")"
done
if command -v bash >/dev/null; then # a bash root: its unsetenv leaves environ alone
    env LOCKBLAME_SAID=LOCKBLAME_FREQ LOCKBLAME_FREQ=abc LOCKBLAME_OUTPUT="$tmp/bi.db" \
        LD_PRELOAD="$LOCKBLAME_LIB" bash -c "\"$prog\" >/dev/null; \"$prog\" >/dev/null" \
        2>"$tmp/err" || bad "bash root, inherited: failed"
    n=$(grep -c "LOCKBLAME_FREQ" "$tmp/err" || true)
    [ "$n" = 1 ] || bad "bash root, LOCKBLAME_SAID inherited: $n lines, want 1: $(cat "$tmp/err")"
fi
echo "ok: a new run says its own"
[ $errors -eq 0 ]
echo PASS
