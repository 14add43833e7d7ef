#!/usr/bin/env bash
# The program's own use of the sampling signal (docs/DESIGN.md
# "The program's signals"): sig_own_handler (-O2) installs a handler for
# SIGRTMIN+5, lockblame's default sampling signal, and counts the signals
# it sends itself (raise, sigqueue, and queued while blocked, collected by
# sigtimedwait). Natively and preloaded, with the timer and with a perf
# event where one opens: the same output, the same exit status (0: every
# signal it sent, none from elsewhere), one lockblame: line saying where
# sampling moved, and samples still taken after the move.
. "$(dirname "$0")/../lib/common.sh"
W=${WORKLOADS_USER:-$BUILD/tests/workloads_user}
need "$LOCKBLAME_LIB" "$W/sig_own_handler"
command -v sqlite3 >/dev/null 2>&1 || skip sqlite3

rc_nat=0
"$W/sig_own_handler" >"$tmp/nat" || rc_nat=$?
sed 's/^/  native: /' "$tmp/nat"
[ "$rc_nat" = 0 ] || bad "native run exited $rc_nat"

for ev in default timer task-clock; do
    echo "== LOCKBLAME_EVENT=$ev"
    under_event "$ev" "$W/sig_own_handler" || continue
    [ "$event_rc" = "$rc_nat" ] || bad "$ev: exit $event_rc, native $rc_nat"
    diff "$tmp/nat" "$tmp/$ev.out" || bad "$ev: output differs from the native run"
    grep -v '^lockblame:' "$tmp/$ev.err" && bad "$ev: stderr other than lockblame: lines"
    n=$(grep -c '^lockblame: .*sampling moved to signal' "$tmp/$ev.err" || true)
    [ "$n" = 1 ] || bad "$ev: expected one line saying where sampling moved, got $n"
    [ -s "$tmp/$ev.db" ] || bad "$ev: no profile written ($(ls -l "$tmp" | tr '\n' ' '))"
    samples=$(sqlite3 "$tmp/$ev.db" "SELECT samples FROM run" 2>&1 || echo 0)
    echo "  samples taken: $samples; $(sqlite3 "$tmp/$ev.db" "SELECT group_concat(key || ' ' || value, ', ')
        FROM meta WHERE key LIKE 'sampl%'" 2>/dev/null); threads' CPU $(rows "$tmp/$ev.db" \
        "SELECT SUM(cpu_s) FROM thread") s"
    # The workload computes ~0.4 s after installing its handler: at 1 kHz a
    # few hundred samples, all on the new signal.
    [ "${samples:-0}" -ge 50 ] || bad "$ev: only ${samples:-0} samples: sampling did not go on after the move"
done

echo "$errors problem(s)"
finish
