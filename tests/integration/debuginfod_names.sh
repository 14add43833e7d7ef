#!/usr/bin/env bash
# Names for stripped binaries from a real debuginfod server, at report time.
# Two programs built -O2 -g as users build them, their debug files split off
# (objcopy --only-keep-debug, build id kept) and the binaries stripped:
#   plain  tests/workloads_user/stripped_locks.c: release site
#          hold_and_release, a static function
#   queue  tests/workloads_user/gt_queue_o2.c: queue_unlock, inlined into
#          queue_flush, releases (the inlined call is a frame of its own)
# They are profiled with no debug file anywhere the writer looks. Debian's
# debuginfod serves the debug files from a directory on a free loopback port,
# with its own database here. Then:
#   1. the database stores each module's build id (module.build_id);
#   2. without DEBUGINFOD_URLS the report shows offsets, and the table's
#      header a names: line saying how to get names;
#   3. with DEBUGINFOD_URLS the report names the sites as the unstripped
#      builds' reports do (function, file, line; queue_unlock below
#      queue_flush), with one "fetching" line on stderr and no names: line;
#      a database without the build_id column (schema 5) gets the build id
#      from the module's file;
#   4. a database whose frames have names reads the same with and without
#      the server;
#   5. with the server stopped (its port closed) the report still ends, with
#      offsets and the names: line (timeout 60 guards against a hang).
# Each client run has its own DEBUGINFOD_CACHE_PATH under $tmp.
source "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/gt_queue_o2"
command -v debuginfod >/dev/null || skip "debuginfod (scripts/install-deps.sh)"
for tool in cc objcopy strip readelf sqlite3 timeout; do
    command -v $tool >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
cd "$tmp"

cc -O2 -g -pthread -o full "$ROOT/tests/workloads_user/stripped_locks.c"
cp "$WORKLOADS_USER/gt_queue_o2" queue_full
mkdir srv
split_debug() { # FULL STRIPPED: srv/STRIPPED.debug and a stripped copy
    objcopy --only-keep-debug "$1" "srv/$2.debug"
    cp "$1" "$2"
    strip --strip-all "$2"
}
split_debug full plain
split_debug queue_full queue
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
plain_id=$(build_id plain)
queue_id=$(build_id queue)
[ -n "$plain_id" ] && [ -n "$queue_id" ] || fail "no build id in the workloads"

./full >names.out
read -r _ _ site _ <names.out
for b in full plain; do
    LOCKBLAME_OUTPUT=$tmp/$b.db preloaded ./$b >/dev/null 2>"$b.err" || fail "$b exited $?"
done
for b in queue_full queue; do
    # long enough that queue_flush's hold is waited for on a loaded machine too
    LOCKBLAME_OUTPUT=$tmp/$b.db preloaded ./$b 4 1500 >/dev/null 2>"$b.err" || fail "$b exited $?"
done

# 1. build ids in the database
stored=$(rows plain.db "SELECT build_id FROM module WHERE path LIKE '%/plain'")
echo "plain: build id $plain_id, stored $stored"
[ "$stored" = "$plain_id" ] || bad "module.build_id of plain is '$stored', not $plain_id"

# json_rows REPORT.json FUNCTION: its rows ("*": all) as function|file|line|callers
json_rows() {
    python3 - "$1" "$2" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    if r["function"] == sys.argv[2] or sys.argv[2] == "*":
        print("%s|%s|%s|%s" % (r["function"], r.get("file") or "", r.get("line") or 0,
                               ";".join(r.get("callers") or [])))
PY
}
top_row() { json_rows "$1" "*" | sed -n 1p; }
report() { "$LOCKBLAME_CLI" report --by-release-site "$@"; }

# 2. no DEBUGINFOD_URLS: offsets, and the header says how to get names
report --format json plain.db >plain.json || fail "report exited $?"
report plain.db >plain.txt 2>&1 || fail "report exited $?"
echo "without DEBUGINFOD_URLS: $(top_row plain.json)"
grep '^names:' plain.txt || bad "no names: line in the header"
case $(top_row plain.json) in plain+0x*) ;; *) bad "plain's top site is named without debug info" ;; esac
grep -q '^names:    no debug info for plain.*-dbgsym.*DEBUGINFOD_URLS' plain.txt ||
    bad "the names: line does not say no debug info for plain, -dbgsym and DEBUGINFOD_URLS"

# The server: a free loopback port, its database here, the debug files
# scanned once; ready when it serves both build ids.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F srv -p "$port" -d "$tmp/debuginfod.sqlite" -t0 -g0 >debuginfod.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$tmp"' EXIT
url=http://127.0.0.1:$port
python3 - "$url" "$plain_id" "$queue_id" <<'PY' || { cat debuginfod.log; fail "debuginfod did not serve the debug files"; }
import sys, time, urllib.request
url, ids = sys.argv[1], sys.argv[2:]
for _ in range(600):  # a hang guard of 60 s, not a timing check
    try:
        for i in ids:
            urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, i), timeout=5).read(4)
        sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit(1)
PY
echo "debuginfod serves both debug files on port $port"

# 3. names through debuginfod, as the unstripped builds have them
served() { DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache timeout 60 "$@"; }
report --format json full.db >full.json
served "$LOCKBLAME_CLI" report --by-release-site --format json plain.db >plain.named.json 2>fetch.err ||
    fail "report with debuginfod exited $?"
cat fetch.err
want=$(json_rows full.json "$site" | sed -n 1p)
got=$(json_rows plain.named.json "$site" | sed -n 1p)
echo "unstripped: $want"
echo "debuginfod: $got"
[ -n "$want" ] || fail "the unstripped build's report has no $site row"
[ "$(top_row plain.named.json | cut -d'|' -f1-3)" = "$(echo "$want" | cut -d'|' -f1-3)" ] ||
    bad "plain's top site with debuginfod is not $want"
grep -q "fetching debug info for plain from debuginfod" fetch.err || bad "no fetching line on stderr"
served "$LOCKBLAME_CLI" report --by-release-site plain.db >plain.named.txt 2>/dev/null
grep -q '^names:' plain.named.txt && bad "a names: line though every module has names now"
grep -q "$site" plain.named.txt || bad "the table does not name $site"

report --format json queue_full.db >queue_full.json
served "$LOCKBLAME_CLI" report --by-release-site --format json queue.db >queue.named.json 2>/dev/null
want=$(json_rows queue_full.json queue_unlock | sed -n 1p)
got=$(json_rows queue.named.json queue_unlock | sed -n 1p)
echo "inlined, unstripped: $want"
echo "inlined, debuginfod: $got"
[ -n "$want" ] || fail "the unstripped queue's report has no queue_unlock row"
[ "$(echo "$got" | cut -d'|' -f1-3)" = "$(echo "$want" | cut -d'|' -f1-3)" ] ||
    bad "queue_unlock (inlined) is not named as in the unstripped build"
case $got in *"|queue_flush ("*) ;; *) bad "queue_unlock's caller is not queue_flush: $got" ;; esac

cp plain.db old.db
sqlite3 old.db "ALTER TABLE module DROP COLUMN build_id; UPDATE meta SET value = '5' WHERE key = 'schema_version'"
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache_old timeout 60 \
    "$LOCKBLAME_CLI" report --by-release-site --format json old.db >old.json 2>/dev/null ||
    fail "report of a schema-5 database exited $?"
echo "schema 5, build id from the file: $(top_row old.json)"
[ "$(top_row old.json | cut -d'|' -f1)" = "$site" ] || bad "a schema-5 database is not named"

# 4. named frames: the same report with and without the server
report full.db >full.txt 2>full.err
served "$LOCKBLAME_CLI" report --by-release-site full.db >full.served.txt 2>full.served.err
diff full.txt full.served.txt || bad "a named database reads differently with DEBUGINFOD_URLS"
grep fetching full.served.err && bad "a named database has debug info fetched"
grep -q '^names:' full.txt && bad "a names: line for a database with names"

# 5. the server gone: the report still ends, with offsets and the note
kill "$server"
wait "$server" 2>/dev/null || true
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache_stopped timeout 60 \
    "$LOCKBLAME_CLI" report --by-release-site plain.db >stopped.txt 2>stopped.err
rc=$?
cat stopped.err
grep '^names:' stopped.txt
[ $rc -eq 0 ] || bad "report with the server stopped exited $rc"
grep -q 'plain+0x' stopped.txt || bad "no offsets with the server stopped"
grep -q '^names:.*plain' stopped.txt || bad "no names: line with the server stopped"
finish
