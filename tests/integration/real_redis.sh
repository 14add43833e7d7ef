#!/usr/bin/env bash
# Redis under `lockblame run`, its jemalloc background thread an idle
# helper (docs/DESIGN.md rule 6): start redis-server with two I/O threads
# on a free loopback port, a bounded redis-benchmark load (set, get,
# lpush; 50 clients), then `redis-cli shutdown nosave`. Checks: run exits
# 0 and writes a profile; the top row of the default release-site view is
# not in libjemalloc (its background thread's early wake-up, which ranked
# first with nearly all the blame before idle helpers were told apart);
# every cond row of libjemalloc with blame is structural, and where the
# helper was woken at all those rows add up to its cond's blame.
# Skipped (exit 77) without redis-server, redis-benchmark, redis-cli or
# sqlite3, or when redis-server does not use jemalloc.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"

for p in redis-server redis-benchmark redis-cli sqlite3; do
    command -v "$p" >/dev/null 2>&1 || skip "$p"
done
redis-server --version | grep -q 'malloc=jemalloc' || skip "redis-server is not built with jemalloc"

REQUESTS=20000

server= # lockblame run
redis=  # the redis-server it runs (SIGKILL to run would leave it running)
# stop_all: SIGKILL the redis-server that run started, then run.
stop_all() {
    [ -n "$server" ] && [ -z "$redis" ] && redis=$(pgrep -P "$server" | head -n 1)
    [ -z "$redis" ] || kill -KILL "$redis" 2>/dev/null || true
    if [ -n "$server" ]; then
        kill -KILL "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    server= redis=
}
cleanup() {
    stop_all
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

listening() { redis-cli -h 127.0.0.1 -p "$1" ping >/dev/null 2>&1; }

# start_server: `lockblame run` redis-server on a free port in 20000-40000
# (retrying on a lost race for the port); sets server and port.
start_server() {
    local try i
    for try in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 20001))
        listening "$port" && continue
        "$LOCKBLAME_CLI" run -o "$tmp/out.db" -- redis-server --bind 127.0.0.1 --port "$port" \
            --io-threads 2 --save '' --appendonly no >"$tmp/server.out" 2>"$tmp/server.err" &
        server=$!
        for i in $(seq 100); do # up to ~10 s
            if listening "$port"; then
                redis=$(redis-cli -h 127.0.0.1 -p "$port" info server | tr -d '\r' \
                    | sed -n 's/^process_id://p')
                return 0
            fi
            kill -0 "$server" 2>/dev/null || break
            sleep 0.1
        done
        stop_all
        rm -f "$tmp/out.db"
        echo "  redis-server did not come up on port $port (try $try):"
        sed 's/^/    /' "$tmp/server.out" "$tmp/server.err" | tail -5
    done
    fail "redis-server never accepted connections"
}

start_server
echo "redis-server pid $redis on port $port"
# Bounded: a server that stops answering fails the test, not the suite.
timeout 300 redis-benchmark -h 127.0.0.1 -p "$port" -q -n "$REQUESTS" -c 50 -t set,get,lpush \
    2>&1 | tr '\r' '\n' | grep 'requests per second' || fail "redis-benchmark failed or timed out"
timeout 10 redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
for i in $(seq 300); do # up to ~30 s
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
kill -0 "$server" 2>/dev/null && fail "redis-server still running 30 s after shutdown nosave"
rc=0
wait "$server" || rc=$?
server= redis=
sed 's/^/  /' "$tmp/server.err"
[ "$rc" -eq 0 ] || fail "lockblame run redis-server exited $rc"
need "$tmp/out.db"
"$LOCKBLAME_CLI" report --by-release-site -n 8 "$tmp/out.db" || fail "report exited $?"
"$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" >"$tmp/report.json" \
    || fail "json report exited $?"

python3 - "$tmp/report.json" "$tmp/out.db" <<'PY' || fail "jemalloc's background thread is ranked as contention"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
jem = lambda r: "jemalloc" in (r.get("module") or "")
acts = [r for r in rows if not r["structural"] and r["blame_s"] > 0]
top = acts[0] if acts else None
print("top default row:", top and (top["function"], top["module"], top["object"], top["blame_s"]))
ok = top is None or not jem(top)
stray = [(r["function"], r["blame_s"]) for r in acts if jem(r) and r["object"] == "cond"]
apart = sum(r["blame_s"] for r in rows if r["structural"] and jem(r) and r["object"] == "cond")
print("libjemalloc cond rows in the default view:", stray, "; apart (structural):", round(apart, 6))
ok = ok and not stray
# The helper's cond: the one whose blame libjemalloc's signals collected.
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
helper = con.execute("""SELECT TOTAL(s.blame_s) FROM structural_wait s JOIN node n ON n.id = s.node_id
    JOIN frame f ON f.id = n.frame_id JOIN module m ON m.id = f.module_id
    WHERE NOT s.open AND s.object = 'cond' AND m.path LIKE '%jemalloc%'""").fetchone()[0]
print(f"structural blame at libjemalloc's signals: {helper:.6f} s")
if apart == 0:
    print("(the background thread was not woken early in this run: nothing to move)")
sys.exit(0 if ok else 1)
PY
finish
