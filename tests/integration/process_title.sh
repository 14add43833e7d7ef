#!/usr/bin/env bash
# A program that rewrites its argv for a process title (as redis-server
# does): the profile's command line is the one the process began with,
# not the title /proc/self/cmdline shows at exit
# (tests/workloads_user/process_title.c overwrites every argument). Its
# --by-thread view names the initial thread "main"; started through a
# symlink, its module is named by the link.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/process_title
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" --port 7777 'two words' || fail "workload exited $?"
cmd=$(sqlite3 "$tmp/out.db" "SELECT command FROM run") || fail "no run row"
echo "command in the database: $cmd"
[ "$cmd" = "$W --port 7777 two words" ] || fail "command is '$cmd'"
grep -q "^command: *$W --port 7777 two words\$" <("$LOCKBLAME_CLI" report "$tmp/out.db") ||
    fail "the report header does not show the command line"
# --by-thread names the initial thread "main" (no start routine), the other
# by its start routine
pid=$(sqlite3 "$tmp/out.db" "SELECT pid FROM run")
"$LOCKBLAME_CLI" report --by-thread --format json "$tmp/out.db" >"$tmp/threads.json" || fail "--by-thread exited $?"
python3 - "$tmp/threads.json" "$pid" <<'PY' || fail "--by-thread start routines"
import json, sys
rows, pid = json.load(open(sys.argv[1])), int(sys.argv[2])
starts = {r["tid"] == pid: r["start_routine"] for r in rows}
print("start routines:", [(r["tid"], r["start_routine"]) for r in rows])
sys.exit(0 if len(rows) == 2 and starts.get(True) == "main" and starts.get(False) == "other" else 1)
PY
# Started through a symlink of another name (redis-server ->
# redis-check-rdb): the main executable's frames are named by the link.
ln -s "$W" "$tmp/server_alias"
LOCKBLAME_OUTPUT=$tmp/alias.db preloaded "$tmp/server_alias" x || fail "workload via the link exited $?"
mods=$(sqlite3 "$tmp/alias.db" "SELECT group_concat(path, ' ') FROM module")
echo "modules: $mods"
case " $mods " in
    *" $tmp/server_alias "*) ;;
    *) fail "the main executable is not named by the link it was started through" ;;
esac
