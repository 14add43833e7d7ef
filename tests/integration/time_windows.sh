#!/usr/bin/env bash
# Time windows (docs/DESIGN.md "Time windows"), against the truth that
# tests/workloads_user/spike_windows logs itself: three workers contend on
# one mutex (released in spike_holder) only between seconds 2 and 4 of a
# 6 s run.
#  1. `run --interval 1s`: the windows that overlap the spike hold at least
#     80% of spike_holder's blame and the others almost none; each window
#     conserves (blame + hand-off + unattributed = wait, to within what
#     moves between the window's end and its reading); the windows add
#     up to the whole-run tables; `report --window N` and `--since/--until`
#     show the spike, `report --windows` lists it; the whole-run report is
#     byte-identical with the window tables dropped; merge carries the
#     windows (a database merged with itself: each window twice).
#  2. `run --interval 0` and `lockblame snapshot PID` once the workers are
#     done, while the program waits for a file: `report --window 0` reads
#     the spike from the running process; at exit the whole-run blame
#     matches the workload's truth as closely as in part 1.
#     In a pid namespace of its own (a container's), the process named by
#     the caller's pid (not the one it has there) writes its window too
#     (skipped where unshare is refused).
#  3. `report --format pprof --per-window DIR`: go tool pprof reads each
#     window's time and duration (skipped without go).
#  4. The HTML page's timeline, rendered by headless Chromium: the tallest
#     stack is a spike window, its colour spike_holder's (skipped without
#     chromium).
#  1 and 2 also: lockblame's own window thread, which writes the windows
#     with SQLite, is no thread of the profile: the run records main and the
#     three workers only, the report lists no "(unknown)" thread, and no
#     thread row has the tid of the process's lockblame-win thread.
#  5. Windows add up to the whole run also for 1,001 short threads joined as
#     they end (many_threads), a pool (gt_pool_o2) and a forked tree
#     (prefork_sem), at 30 ms windows.
source "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/spike_windows
need "$W" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
L=$LOCKBLAME_CLI

# --- 1. intervals --------------------------------------------------------
"$L" run --interval 1s -o "$tmp/s.db" -- "$W" 6000 2000 4000 >"$tmp/truth" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "run --interval 1s failed"; }
from=$(awk '/^spike_from_unix/ {print $2}' "$tmp/truth")
to=$(awk '/^spike_to_unix/ {print $2}' "$tmp/truth")
waited=$(awk '/^spike_wait_s/ {print $2}' "$tmp/truth")
echo "truth: spike from $from to $to, waited $waited s"
sqlite3 -separator ' ' "$tmp/s.db" "
  SELECT w.seq, w.start_unix, w.end_unix,
         COALESCE((SELECT SUM(m.idle_mutex_s) FROM window_metric m
                   JOIN window_node n ON n.id = m.node_id JOIN window_frame f ON f.id = n.frame_id
                   WHERE m.window_id = w.id AND f.function = 'spike_holder'), 0),
         COALESCE((SELECT SUM(wait_s) FROM window_object o WHERE o.window_id = w.id), 0),
         COALESCE((SELECT SUM(blame_s + handoff_s + unattributed_s) FROM window_object o
                   WHERE o.window_id = w.id), 0)
  FROM time_window w ORDER BY w.seq" >"$tmp/windows"
cat "$tmp/windows"
sqlite3 -separator ' ' "$tmp/s.db" "
  SELECT (SELECT SUM(m.idle_mutex_s) FROM metric m JOIN node n ON n.id = m.node_id
          JOIN frame f ON f.id = n.frame_id WHERE f.function = 'spike_holder'),
         (SELECT SUM(idle_mutex_s) FROM window_metric), (SELECT SUM(idle_mutex_s) FROM metric),
         (SELECT SUM(wait_s) FROM window_metric), (SELECT SUM(wait_s) FROM metric),
         (SELECT SUM(wait_s) FROM window_object), (SELECT SUM(wait_s) FROM sync_object),
         (SELECT SUM(blame_s) FROM window_object), (SELECT SUM(blame_s) FROM sync_object)" >"$tmp/sums"
python3 - "$tmp/windows" "$tmp/sums" "$from" "$to" <<'PY' || bad "windows against the truth"
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
sums = list(map(float, open(sys.argv[2]).read().split()))
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
ok = True
def check(cond, what):
    global ok
    print(("ok: " if cond else "FAILED: ") + what)
    ok &= cond
total = sum(r[3] for r in rows)
spike = sum(r[3] for r in rows if r[2] > t0 and r[1] < t1)
calm = sum(r[3] for r in rows if r[2] < t0 - 0.05 or r[1] > t1 + 0.05)
check(len(rows) >= 5, "%d windows for a 6 s run at 1 s" % len(rows))
check(total > 0.3, "spike_holder blame %.3f s in the windows" % total)
check(spike >= 0.8 * total, "windows overlapping the spike hold %.1f%% of its blame" % (100 * spike / max(total, 1e-9)))
check(calm <= max(0.01, 0.02 * total), "windows away from the spike hold %.4f s" % calm)
for r in rows:
    tol = 0.02 + 0.02 * r[4]  # what moves between the window's end and its reading
    check(abs(r[5] - r[4]) <= tol, "window %d conserves: blame + hand-off + unattributed %.4f s, wait %.4f s" % (r[0], r[5], r[4]))
whole, wm, m, ww, w, ow, o, ob, b = sums
for name, a, c in (("spike_holder blame", total, whole), ("mutex blame", wm, m), ("metric wait", ww, w),
                   ("object wait", ow, o), ("object blame", ob, b)):
    check(abs(a - c) <= 1e-6 * max(1, c), "%s: windows sum %.6f s, whole run %.6f s" % (name, a, c))
sys.exit(0 if ok else 1)
PY
# lockblame's own window thread is not the program's (main and 3 workers).
[ "$(rows "$tmp/s.db" "SELECT COUNT(*) FROM thread")" = 4 ] ||
    bad "--interval 1s: $(rows "$tmp/s.db" "SELECT COUNT(*) FROM thread") thread rows, want 4 (main and 3 workers)"
"$L" report --by-thread "$tmp/s.db" >"$tmp/threads.txt" || bad "report --by-thread failed"
grep -q '(unknown)' "$tmp/threads.txt" && bad "report --by-thread lists an (unknown) thread: lockblame's own?"
# The CLI's window numbers (a process's last window, a sliver after the
# last boundary, shares the number of the window before it).
"$L" report --windows --format csv "$tmp/s.db" >"$tmp/list.csv" || bad "report --windows --format csv failed"
spike_window=$(python3 - "$tmp/list.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(max(rows, key=lambda r: float(r["blame_s"]))["window"])
PY
)
"$L" report --window "$spike_window" "$tmp/s.db" >"$tmp/spike.txt" || fail "report --window failed"
sed -n '1,12p' "$tmp/spike.txt"
grep -A1 '^Blame s' "$tmp/spike.txt" | grep -q 'spike_holder' ||
    bad "report --window $spike_window: spike_holder is not the top release site"
"$L" report --window 0 --format json "$tmp/s.db" >"$tmp/calm.json" || bad "report --window 0 --format json failed"
grep -q spike_holder "$tmp/calm.json" && bad "window 0 (calm) names spike_holder"
"$L" report --since 2.2 --until 3.8 --by-lock "$tmp/s.db" >"$tmp/since.txt" || bad "report --since/--until failed"
grep -q 'mutex' "$tmp/since.txt" || bad "report --since 2.2 --until 3.8 --by-lock shows no mutex"
"$L" report --windows "$tmp/s.db" >"$tmp/list.txt" || bad "report --windows failed"
cat "$tmp/list.txt"
[ "$(grep -c 'spike_holder' "$tmp/list.txt")" -ge 2 ] || bad "report --windows names spike_holder in under 2 windows"
"$L" compare "$tmp/s.db@0" "$tmp/s.db@$spike_window" >"$tmp/compare.txt" || bad "compare DB@N DB@M failed"
grep -q spike_holder "$tmp/compare.txt" || bad "compare of a calm and a spike window does not name spike_holder"
rc=0
"$L" report --window 99 "$tmp/s.db" >/dev/null 2>"$tmp/e99" || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/e99")" -eq 1 ] || bad "report --window 99: rc $rc, want 2 and one line"
"$L" merge -o "$tmp/twice.db" "$tmp/s.db" "$tmp/s.db" || bad "merge of a database with windows"
one=$(rows "$tmp/s.db" "SELECT COUNT(*) || ' ' || ROUND(SUM(idle_mutex_s), 6) FROM window_metric")
two=$(rows "$tmp/twice.db" "SELECT (COUNT(*) / 2) || ' ' || ROUND(SUM(idle_mutex_s) / 2, 6) FROM window_metric")
[ "$one" = "$two" ] || bad "merged windows: $two, want twice $one"
"$L" report --window "$spike_window" --by-process "$tmp/twice.db" >"$tmp/twice.txt" || bad "report --window of a merged database"
[ "$(grep -c spike_windows "$tmp/twice.txt")" -ge 2 ] || bad "merged: --by-process of a window does not list two processes"
# The whole-run report reads the whole-run tables only.
mkdir "$tmp/a" "$tmp/b"
cp "$tmp/s.db" "$tmp/a/s.db"
cp "$tmp/s.db" "$tmp/b/s.db"
sqlite3 "$tmp/b/s.db" "DROP TABLE time_window; DROP TABLE window_run; DROP TABLE window_thread;
  DROP TABLE window_metric; DROP TABLE window_object; DROP TABLE window_node;
  DROP TABLE window_frame; DROP TABLE window_module"
for view in --by-release-site --by-lock --by-thread --top-down; do
    (cd "$tmp/a" && "$L" report $view s.db) >"$tmp/a.$view"
    (cd "$tmp/b" && "$L" report $view s.db) >"$tmp/b.$view"
    cmp -s "$tmp/a.$view" "$tmp/b.$view" || bad "report $view differs with the window tables dropped"
done

# --- 2. snapshot ---------------------------------------------------------
"$L" run --interval 0 -o "$tmp/snap.db" -- "$W" 6000 2000 4000 "$tmp/go" >"$tmp/truth2" 2>"$tmp/err2" &
runner=$!
for _ in $(seq 600); do
    grep -q 'workers done' "$tmp/err2" && break
    sleep 0.1
done
grep -q 'workers done' "$tmp/err2" || { cat "$tmp/err2"; touch "$tmp/go"; fail "the workload never said 'workers done'"; }
pid=$(pgrep -P "$runner" -f spike_windows | head -1)
[ -n "$pid" ] || { touch "$tmp/go"; fail "no workload process under run"; }
"$L" snapshot "$pid" >"$tmp/snap.out" 2>&1 || { cat "$tmp/snap.out"; touch "$tmp/go"; fail "snapshot failed"; }
cat "$tmp/snap.out"
win_tid=$(grep -lx 'lockblame-win' /proc/"$pid"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
[ -n "$win_tid" ] || bad "no lockblame-win thread in process $pid"
"$L" report --window 0 "$tmp/snap.db" >"$tmp/snap.txt" 2>&1 || bad "report --window 0 of the running program failed"
"$L" report "$tmp/snap.db" >/dev/null 2>"$tmp/hint" || bad "report of the running program's whole run failed"
grep -q 'no process of .* has ended yet; it wrote 1 time window' "$tmp/hint" ||
    bad "report of a running program does not point at its windows: $(cat "$tmp/hint")"
kill -0 "$pid" 2>/dev/null || bad "the program ended before the report (it waits for a file)"
touch "$tmp/go"
wait "$runner" || fail "run with a snapshot failed"
sed -n '1,12p' "$tmp/snap.txt"
grep -A1 '^Blame s' "$tmp/snap.txt" | grep -q 'spike_holder' ||
    bad "the snapshot's window does not show spike_holder on top"
[ "$(rows "$tmp/snap.db" "SELECT COUNT(*) FROM time_window WHERE reason = 'snapshot'")" = 1 ] ||
    bad "not one snapshot window"
[ "$(rows "$tmp/snap.db" "SELECT COUNT(*) FROM thread WHERE tid = ${win_tid:-0}")" = 0 ] ||
    bad "the lockblame-win thread (tid $win_tid) is a thread of the profile"
[ "$(rows "$tmp/snap.db" "SELECT COUNT(*) FROM thread")" = 4 ] ||
    bad "after a snapshot: $(rows "$tmp/snap.db" "SELECT COUNT(*) FROM thread") thread rows, want 4"
for db in s snap; do
    t=$([ $db = s ] && cat "$tmp/truth" || cat "$tmp/truth2")
    truth=$(awk '/^spike_wait_s/ {print $2}' <<<"$t")
    got=$(rows "$tmp/$db.db" "SELECT SUM(wait_s) FROM sync_object WHERE object = 'mutex'")
    python3 -c "
import sys
t, g = $truth, $got
print('$db: mutex wait %.3f s, the workload timed %.3f s' % (g, t))
sys.exit(0 if abs(g - t) <= 0.05 + 0.05 * t else 1)" || bad "$db: whole-run mutex wait against the truth"
done

# A process in a pid namespace of its own, named by the caller's numbers.
if unshare -pf --mount-proc true 2>/dev/null; then
    rm -f "$tmp/go"
    unshare -pf --mount-proc "$L" run --interval 0 -o "$tmp/ns.db" -- "$W" 3000 1000 2000 "$tmp/go" \
        >"$tmp/truth3" 2>"$tmp/err3" &
    runner=$!
    for _ in $(seq 600); do
        grep -q 'workers done' "$tmp/err3" && break
        sleep 0.1
    done
    pid=$(pgrep -f "^$W 3000 1000 2000 $tmp/go" | head -1) # the workload, not unshare or run
    inner=$(awk '/^NSpid:/ {print $NF}' "/proc/$pid/status" 2>/dev/null)
    echo "namespace: pid $pid here, $inner in its namespace"
    [ -n "$pid" ] && [ "$inner" != "$pid" ] || { touch "$tmp/go"; fail "no workload process in the namespace"; }
    "$L" snapshot "$pid" >"$tmp/snap3.out" 2>&1 || bad "snapshot of a process in a pid namespace failed: $(cat "$tmp/snap3.out")"
    cat "$tmp/snap3.out"
    touch "$tmp/go"
    wait "$runner" || fail "run in a pid namespace failed"
    [ "$(rows "$tmp/ns.db" "SELECT COUNT(*) FROM time_window WHERE reason = 'snapshot'")" = 1 ] ||
        bad "not one snapshot window from the process in a pid namespace"
else
    echo "  (no pid namespace here: the snapshot there not tried)"
fi

# --- 3. pprof per window --------------------------------------------------
"$L" report --format pprof --per-window "$tmp/pw" "$tmp/s.db" 2>/dev/null || bad "--per-window failed"
n=$(ls "$tmp/pw" | grep -c '^window-.*\.pb\.gz$' || true)
listed=$(("$(set +o pipefail; "$L" report --windows --format csv "$tmp/s.db" | wc -l)" - 1))
[ "$n" = "$listed" ] || bad "$n window profiles, $listed windows listed"
if command -v go >/dev/null 2>&1; then
    export HOME=$tmp/home PPROF_TMPDIR=$tmp/home GOTOOLCHAIN=local
    mkdir -p "$HOME"
    for seq in 0 "$spike_window"; do
        f=$(printf '%s/pw/window-%04d.pb.gz' "$tmp" "$seq")
        go tool pprof -raw "$f" >"$tmp/raw.$seq" 2>&1 || { cat "$tmp/raw.$seq"; bad "go tool pprof -raw $f"; continue; }
        # -top says the duration with its unit (-raw drops it)
        go tool pprof -top "$f" 2>/dev/null | grep '^Duration:' >>"$tmp/raw.$seq" || true
        range=$(awk -F, -v w="$seq" '$1 == w { printf "%s|%s", $4, $3 - $2 }' "$tmp/list.csv")
        python3 - "$tmp/raw.$seq" "$range" <<'PY' || bad "window $seq: pprof time range"
import datetime, re, sys
raw = open(sys.argv[1]).read()
start, dur = map(float, sys.argv[2].split("|"))
t = re.search(r"^Time: (\S+ \S+)", raw, re.M).group(1)
sec, frac = t.split(".") if "." in t else (t, "0")
got = datetime.datetime.strptime(sec, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp() + float("0." + frac)
m = re.search(r"^Duration: ([0-9.]+)(ms|us|s|mins|hrs),", raw, re.M)
d = float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "mins": 60, "hrs": 3600}[m.group(2)]
print("pprof time %.3f duration %.2f; window %.3f, %.2f" % (got, d, start, dur))
sys.exit(0 if abs(got - start) < 0.01 and abs(d - dur) < 0.02 else 1)
PY
    done
else
    skip_part "go (Debian: golang-go)"
fi

# --- 5. sums over other shapes ------------------------------------------------
for w in many_threads gt_pool_o2 prefork_sem; do
    need "$WORKLOADS_USER/$w"
    LOCKBLAME_INTERVAL=30ms LOCKBLAME_OUTPUT=$tmp/$w.db preloaded "$WORKLOADS_USER/$w" >/dev/null 2>&1 ||
        bad "$w under LOCKBLAME_INTERVAL=30ms exited $?"
    got=$(rows "$tmp/$w.db" "SELECT (SELECT COUNT(DISTINCT process) FROM time_window) || ' ' ||
      ((SELECT COUNT(*) FROM time_window) > (SELECT COUNT(DISTINCT process) FROM time_window))
      || ' ' ||
      (ROUND((SELECT SUM(idle_mutex_s + idle_cond_s + idle_sem_s + idle_join_s + idle_futex_s
                         + wait_s + work_s) FROM window_metric)
           - (SELECT SUM(idle_mutex_s + idle_cond_s + idle_sem_s + idle_join_s + idle_futex_s
                         + wait_s + work_s) FROM metric), 6)) || ' ' ||
      (ROUND((SELECT SUM(wait_s + blame_s) FROM window_object)
           - (SELECT SUM(wait_s + blame_s) FROM sync_object WHERE address IS NOT NULL), 6))")
    echo "$w: processes, several windows, windows less whole run (metric, objects): $got"
    case $got in
    *" 1 0.0 0.0" | *" 1 -0.0 0.0" | *" 1 0.0 -0.0" | *" 1 -0.0 -0.0") ;;
    *) bad "$w: windows do not add up to the whole run ($got)" ;;
    esac
done

# --- 4. the HTML timeline -------------------------------------------------
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
"$L" report --format html -o "$tmp/s.html" "$tmp/s.db" || bad "report --format html failed"
if [ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ]; then
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-dev-shm-usage --user-data-dir="$tmp/chromium-profile" --dump-dom \
        "file://$tmp/s.html" >"$tmp/s.dom" 2>"$tmp/chromium.log" || bad "chromium --dump-dom failed"
    python3 - "$tmp/s.dom" "$tmp/list.csv" "$from" "$to" <<'PY' || bad "the HTML timeline"
import collections, csv, html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
rows = {}
for r in csv.DictReader(open(sys.argv[2])):
    start = float(r["start_unix"])
    rows[int(r["window"])] = [int(r["window"]), start, start + float(r["end_s"]) - float(r["start_s"])]
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
bars = re.findall(r'<rect class="tl-bar" data-window="(\d+)" data-site="(\d+)" data-blame="([0-9.]+)"', dom)
legend = [html.unescape(t) for t in re.findall(r'<li data-site="\d+">.*?</span>\s*([^<]*)</li>', dom)]
per = collections.Counter()
for w, site, b in bars:
    per[int(w)] += float(b)
print("timeline: %d bars, legend %s, per window %s" % (len(bars), legend[:3], dict(per)))
tallest = max(per, key=per.get) if per else -1
ok = tallest in rows and rows[tallest][2] > t0 and rows[tallest][1] < t1
ok &= bool(legend) and legend[0].startswith("spike_holder")
sys.exit(0 if ok else 1)
PY
else
    skip_part "chromium"
fi
finish
