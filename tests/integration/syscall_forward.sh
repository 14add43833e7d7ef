#!/usr/bin/env bash
# libc's syscall() under the library (src/interpose/syscall.c): every call's
# result and errno are what they are natively (hard rule: the program's
# behaviour does not change), for forwarded numbers (getpid, gettid, write,
# an unknown number) and for futex operations, timed, blamed or forwarded
# (tests/workloads_user/syscall_forward.c). And a futex wait that ran out
# of time is blamed on nobody: the 20 ms wait that timed out stays
# unattributed on its word, though a wake on that word follows.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/syscall_forward
need "$LOCKBLAME_LIB" "$W"

"$W" >"$tmp/native.out" 2>/dev/null || fail "native run exited $?"
LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" >"$tmp/preloaded.out" 2>"$tmp/preloaded.err" \
    || fail "preloaded run exited $?"
cat "$tmp/preloaded.out"
diff "$tmp/native.out" "$tmp/preloaded.out" || fail "output differs under the library"

word=$(sed -n 's/^word \([0-9]*\)$/\1/p' "$tmp/preloaded.err")
[ -n "$word" ] || fail "no word address on stderr"
row=$(rows "$tmp/out.db" "SELECT contended, wait_s, blame_s, unattributed_s FROM sync_object
                         WHERE object = 'futex' AND address = $word")
echo "futex word: contended|wait_s|blame_s|unattributed_s = $row"
python3 - "$row" <<'PY' || fail "the timed-out wait is not unattributed"
import sys
contended, wait, blame, unattributed = sys.argv[1].split("|")
wait, blame, unattributed = float(wait), float(blame), float(unattributed)
# at least the 20 ms wait that timed out, which no wake ended
ok = int(contended) >= 3 and unattributed >= 0.019 and blame <= wait - 0.019
sys.exit(0 if ok else 1)
PY
