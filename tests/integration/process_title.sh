#!/usr/bin/env bash
# A program that rewrites its argv for a process title (as redis-server
# does): the profile's command line is the one the process began with,
# not the title /proc/self/cmdline shows at exit
# (tests/workloads_user/process_title.c overwrites every argument).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/process_title
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$W" --port 7777 'two words' || fail "workload exited $?"
cmd=$(sqlite3 "$tmp/out.db" "SELECT command FROM run") || fail "no run row"
echo "command in the database: $cmd"
[ "$cmd" = "$W --port 7777 two words" ] || fail "command is '$cmd'"
"$LOCKBLAME_CLI" report "$tmp/out.db" | grep -q "^command: *$W --port 7777 two words\$" ||
    fail "the report header does not show the command line"
