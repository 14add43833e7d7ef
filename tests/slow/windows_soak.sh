#!/usr/bin/env bash
# Soak of the time windows: a server-shaped workload (spike_windows: three
# workers doing calm work for SOAK_S seconds, default 600, with 10 s of
# contention in the middle) under `lockblame run --interval 1s`. Every 5 s
# it samples the process's RSS and the database's size. Asserts, after a
# warm-up (the first minute, or a fifth of a shorter run): the RSS grows
# by at most 4 MB + 2% (memory bounded: windows are written and dropped),
# and the database grows linearly with the windows (bytes per window in
# the second half within a factor of 2 of the first half's). Also: at
# least one window every 2 s, and the windows add up to the whole run.
# In the slow tier (make check-slow): its limits hold on a quiet machine.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/spike_windows
need "$W" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
SOAK_S=${SOAK_S:-600}
warm=$((SOAK_S / 5 < 60 ? SOAK_S / 5 : 60))
db=$tmp/soak.db
"$LOCKBLAME_CLI" run --interval 1s -o "$db" -- "$W" $((SOAK_S * 1000)) $((SOAK_S * 500)) \
    $((SOAK_S * 500 + 10000)) >"$tmp/truth" 2>"$tmp/err" &
runner=$!
pid=
for _ in $(seq 100); do
    pid=$(pgrep -P "$runner" -f spike_windows | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.1
done
[ -n "$pid" ] || fail "no workload process"
start=$(date +%s)
: >"$tmp/samples"
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    size=$(stat -c %s "$db" 2>/dev/null || echo 0)
    windows=$(sqlite3 "$db" "SELECT COUNT(*) FROM time_window" 2>/dev/null || echo 0)
    [ -n "$rss" ] && echo "$(($(date +%s) - start)) $rss $size $windows" >>"$tmp/samples"
    sleep 5
done
wait "$runner" || fail "run exited $?"
tail -n 3 "$tmp/samples"
python3 - "$tmp/samples" "$warm" "$SOAK_S" <<'PY' || bad "soak limits"
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm, soak = int(sys.argv[2]), int(sys.argv[3])
after = [r for r in rows if r[0] >= warm and r[3] > 0]
ok = len(after) >= 4
if ok:
    base = after[0][1]
    peak = max(r[1] for r in after)
    grow_ok = peak - base <= 4096 + 0.02 * base
    print("RSS after %d s: %d kB, at most %d kB later (limit +%d kB)" % (after[0][0], base, peak, 4096 + 0.02 * base))
    mid = after[len(after) // 2]
    first = (mid[2] - after[0][2]) / max(1, mid[3] - after[0][3])
    second = (after[-1][2] - mid[2]) / max(1, after[-1][3] - mid[3])
    print("database: %.0f bytes a window in the first half, %.0f in the second" % (first, second))
    linear = first > 0 and 0.5 <= second / first <= 2
    windows = after[-1][3]
    rate = windows >= after[-1][0] / 2
    print("%d windows in %d s" % (windows, after[-1][0]))
    ok = grow_ok and linear and rate
sys.exit(0 if ok else 1)
PY
got=$(sqlite3 "$db" "SELECT ROUND((SELECT SUM(wait_s) FROM window_metric) - (SELECT SUM(wait_s) FROM metric), 6)")
[ "$got" = "0.0" ] || [ "$got" = "0" ] || [ "$got" = "-0.0" ] || bad "windows' wait less the whole run's: $got s"
finish
