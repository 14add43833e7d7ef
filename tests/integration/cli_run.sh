#!/usr/bin/env bash
# lockblame run: exit status of the child (or 128+signal), environment
# (LD_PRELOAD with the library next to the CLI, prepended; LOCKBLAME_*),
# stdout/stderr of the child untouched.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"
cd "$T"
export LOCKBLAME_OUTPUT=$T/ignored.db

rc=0; "$L" run -- sh -c 'exit 3' 2> "$T/err" || rc=$?
[ $rc -eq 3 ] || fail "exit 3 -> $rc"; echo "ok: exit status 3 passed on"
rc=0; "$L" run -- true || rc=$?
[ $rc -eq 0 ] || fail "true -> $rc"; echo "ok: exit status 0"
rc=0; "$L" run -- sh -c 'kill -TERM $$' 2> /dev/null || rc=$?
[ $rc -eq 143 ] || fail "SIGTERM -> $rc, want 143"; echo "ok: killed by SIGTERM -> 143"
rc=0; "$L" run -- "$T/no-such-program" 2> "$T/err" || rc=$?
[ $rc -eq 127 ] || fail "missing program -> $rc, want 127"; echo "ok: missing program -> 127"

unset LOCKBLAME_OUTPUT
LD_PRELOAD= "$L" run -o out.db -e task-clock@500000 -F 250 -- \
    sh -c 'printf "%s|%s|%s|%s\n" "$LD_PRELOAD" "$LOCKBLAME_OUTPUT" "$LOCKBLAME_EVENT" "$LOCKBLAME_FREQ"' \
    > "$T/env" 2> "$T/err" || fail "run with options"
lib=$(dirname "$L")/liblockblame.so
if [ -e "$lib" ]; then
    # the output name is made absolute: the whole process tree writes there
    want="$(cd "$(dirname "$L")" && pwd -P)/liblockblame.so|$(pwd -P)/out.db|task-clock@500000|250"
    [ "$(cat "$T/env")" = "$want" ] || fail "env: got '$(cat "$T/env")', want '$want'"
    echo "ok: LD_PRELOAD and LOCKBLAME_* set"
    # an existing LD_PRELOAD is kept, after ours
    LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 "$L" run -o out2.db -- sh -c 'echo "$LD_PRELOAD"' > "$T/env2" 2>/dev/null
    grep -q "liblockblame.so /lib/x86_64-linux-gnu/libm.so.6\$" "$T/env2" || fail "LD_PRELOAD not prepended: $(cat "$T/env2")"
    echo "ok: LD_PRELOAD prepended"
else
    grep -q '^lockblame: ' "$T/err" || fail "no warning about the missing library"
    [ "$(cut -d'|' -f2- "$T/env")" = "$(pwd -P)/out.db|task-clock@500000|250" ] || fail "env: $(cat "$T/env")"
    echo "ok: LOCKBLAME_* set (library not built: warned, ran unprofiled)"
fi

# the child's own output passes through untouched
"$L" run -o out3.db -- sh -c 'echo to-stdout; echo to-stderr >&2' > "$T/o" 2> "$T/e"
grep -qx to-stdout "$T/o" || fail "child stdout"
grep -qx to-stderr "$T/e" || fail "child stderr"
[ "$(wc -l < "$T/o")" -eq 1 ] || fail "extra stdout lines: $(cat "$T/o")"
grep -v '^lockblame: ' "$T/e" | grep -qvx to-stderr && fail "extra stderr lines: $(cat "$T/e")"
echo "ok: child stdout/stderr untouched"
# options after PROG belong to PROG
"$L" run -o out4.db -- sh -c 'echo "$1"' sh -o > "$T/o" 2>/dev/null
grep -qx -- -o "$T/o" || fail "PROG's own -o was eaten"
echo "ok: PROG's options left alone"
echo "PASS"
