#!/usr/bin/env bash
# Threads at scale and file descriptors (thread creation at scale, and no
# state the program can see), with many_threads (-O2):
#   - 2000 threads alive at once: same output as native, exit 0, a thread
#     row for each in the profile;
#   - the sampler's perf events never take the program's low fd numbers:
#     the program's first open() gets the same fd with a perf event per
#     thread as with sampling off, and no perf event fd is below 64;
#   - the fd limit (ulimit -n 256) reached by 300 threads' perf events:
#     the rest fall back to the CPU-time timer, said in exactly one line,
#     and the program runs as natively. (Skipped where perf_event cannot
#     be opened.)
. "$(dirname "$0")/../lib/common.sh"
W=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
need "$LOCKBLAME_LIB" "$W/many_threads"
command -v sqlite3 >/dev/null 2>&1 || skip sqlite3
# same NAT PRE: the outputs agree on every line but the first fd (checked
# separately below, against a preloaded run with sampling off)
same() { diff <(grep -v '^first fd' "$1") <(grep -v '^first fd' "$2"); }

N=2000
echo "== $N threads at once"
"$W/many_threads" $N >"$tmp/nat" || bad "native run exited $?"
rc=0
LOCKBLAME_OUTPUT=$tmp/many.db preloaded "$W/many_threads" $N >"$tmp/pre" 2>"$tmp/pre.err" || rc=$?
sed 's/^/  /' "$tmp/pre"; grep '^lockblame:' "$tmp/pre.err" | sed 's/^/  /'
[ "$rc" = 0 ] || bad "preloaded run exited $rc"
same "$tmp/nat" "$tmp/pre" || bad "output differs from the native run"
rows=$(sqlite3 "$tmp/many.db" "SELECT count(*) FROM thread" 2>/dev/null || echo 0)
echo "  thread rows: $rows"
[ "$rows" = $((N + 1)) ] || bad "$rows thread rows, expected $((N + 1))"

echo "== fd placement"
LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$tmp/off.db preloaded "$W/many_threads" 50 >"$tmp/off" 2>/dev/null ||
    bad "sampling off: exited $?"
LOCKBLAME_EVENT=task-clock LOCKBLAME_OUTPUT=$tmp/tc.db preloaded "$W/many_threads" 50 >"$tmp/tc" 2>"$tmp/tc.err" ||
    bad "task-clock: exited $?"
perf_ok=1
grep -q 'cannot sample task-clock' "$tmp/tc.err" && perf_ok=0
if [ $perf_ok = 1 ]; then
    echo "  sampling off: $(grep '^first fd' "$tmp/off"); task-clock: $(grep '^first fd' "$tmp/tc")"
    [ "$(grep '^first fd' "$tmp/off")" = "$(grep '^first fd' "$tmp/tc")" ] ||
        bad "a perf event took one of the program's low fd numbers"
    grep -q '^perf event fds below 64: 0$' "$tmp/tc" || bad "$(grep '^perf event fds' "$tmp/tc")"
else
    skip_part "perf_event for task-clock"
fi

if [ $perf_ok = 1 ]; then
    echo "== ulimit -n 256, 300 threads, a perf event each"
    (ulimit -n 256 && "$W/many_threads" 300) >"$tmp/lnat" || bad "native run with ulimit -n 256 exited $?"
    rc=0
    (ulimit -n 256 && LOCKBLAME_EVENT=task-clock LOCKBLAME_OUTPUT=$tmp/lim.db preloaded "$W/many_threads" 300) \
        >"$tmp/lpre" 2>"$tmp/lpre.err" || rc=$?
    grep '^lockblame:' "$tmp/lpre.err" | sed 's/^/  /'
    [ "$rc" = 0 ] || bad "preloaded run with ulimit -n 256 exited $rc"
    same "$tmp/lnat" "$tmp/lpre" || bad "output differs from the native run"
    n=$(grep -c '^lockblame: file descriptor limit reached' "$tmp/lpre.err" || true)
    [ "$n" = 1 ] || bad "expected one line about the fd limit, got $n"
    fb=$(sqlite3 "$tmp/lim.db" "SELECT value FROM meta WHERE key = 'sampling_timer_fallbacks'" 2>/dev/null || echo 0)
    echo "  threads sampled by the timer instead: $fb"
    [ "${fb:-0}" -gt 0 ] || bad "no thread fell back to the timer"
fi

echo "$errors problem(s)"
finish
