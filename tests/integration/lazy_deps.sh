#!/usr/bin/env bash
# The writer's and the PMU encoder's libraries are opened on first use
# (src/util/lazy_lib.h), not at every process start:
#   - liblockblame.so names none of them as DT_NEEDED and exports none of
#     their functions' stubs (util/lazy_deps.h: a program's own copy of
#     such a library keeps its calls);
#   - a process that records nothing (an exec wrapper, a short tool) never
#     maps SQLite, libdw, libelf, liblzma or libpfm4;
#   - a process that records writes a full profile (file:line from DWARF);
#   - the default event is chosen without libpfm4; a named PMU event loads
#     it (its error text reaches the one lockblame: line).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS/handoff_mutex"
LAZY='libsqlite3|libdw|libelf|liblzma|libpfm'

needed=$(readelf -d "$LOCKBLAME_LIB" | awk '/NEEDED/ { print $NF }' | tr -d '[]' | tr '\n' ' ')
if echo "$needed" | grep -Eq "$LAZY"; then
    fail "liblockblame.so links a lazily loaded library: $needed"
fi
echo "ok: DT_NEEDED: $needed"
stubs=$(nm -D --defined-only "$LOCKBLAME_LIB" | awk '{ print $NF }' |
    grep -E '^(sqlite3|dwfl|dwarf|elf|gelf|lzma|pfm)_' | tr '\n' ' ' || true)
[ -z "$stubs" ] || fail "liblockblame.so exports stubs of lazily loaded libraries: $stubs"
echo "ok: no stub is exported"

# A process inside a run that records nothing: its own mappings, printed
# by itself at the end, hold none of them. Once as the root of a run with
# an existing database (which it checks with SQLite: allowed to load it),
# and once as a child of a run (LOCKBLAME_RUN set: must not).
# It samples once a second of CPU, so that it records nothing by
# construction: at the default 1 ms a slow or busy machine's start-up
# (sh, the exec, cat) could take a sample and write a profile.
cd "$tmp"
LOCKBLAME_OUTPUT=$tmp/p.db LOCKBLAME_EVENT=timer@1000000000 preloaded sh -c 'cat /proc/self/maps' \
    > maps.child 2> err
if grep -Eq "$LAZY" maps.child; then
    fail "a child that records nothing mapped: $(grep -Eo "$LAZY" maps.child | sort -u | tr '\n' ' ')"
fi
[ ! -s err ] || fail "unexpected stderr: $(cat err)"
echo "ok: a child that records nothing maps none of them"

# A process that records: the profile is complete, with file:line.
LOCKBLAME_OUTPUT=$tmp/h.db preloaded "$WORKLOADS/handoff_mutex" > out 2> err || fail "workload failed: $(cat err)"
n=$(sqlite3 h.db "SELECT COUNT(*) FROM frame WHERE line > 0")
[ "${n:-0}" -gt 0 ] || fail "no frame with a line number in the profile"
"$LOCKBLAME_CLI" report h.db > report || fail "report failed"
grep -q 'handoff_mutex' report || fail "report does not name the workload: $(head -20 report)"
echo "ok: a recording process writes its profile ($n frames with file:line)"

# The default event never needs libpfm4; a named PMU event loads it
# (here it cannot open: no PMU on CI; any PMU error text comes from libpfm4).
LOCKBLAME_OUTPUT=$tmp/e.db LOCKBLAME_EVENT=NO_SUCH_EVENT_NAME preloaded "$WORKLOADS/handoff_mutex" > out 2> err ||
    fail "workload failed with a bad event name"
[ "$(grep -c '^lockblame: cannot sample NO_SUCH_EVENT_NAME' err)" = 1 ] ||
    fail "no single line about the named event: $(cat err)"
grep -q 'event not found' err || fail "libpfm4's own error text missing: $(cat err)"
echo "ok: a named event goes through libpfm4: $(grep -m1 '^lockblame: cannot sample' err)"
echo "lazy_deps: all checks passed"
