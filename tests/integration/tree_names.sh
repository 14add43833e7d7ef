#!/usr/bin/env bash
# Names are paid once per module per run (report/writer/symcache.h): in a
# tree of processes running the same code, the first to write resolves
# the names and the database keeps them (tables symbol and
# module_function); the later processes take them from there. A shell
# runs prefork_sem twice (a parent and four forked workers each): every
# address that frames of several processes hold must read the same in all
# of them (function, file, line and the chain of inlined calls), the
# workload's own functions must be named with their source lines, and the
# caches must hold the program's addresses and libc's function table, and
# every libc address a frame holds as a chain of its own with the frame's
# name (a later process names it from one row, not the whole table).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/prefork_sem"
printf '#!/bin/sh\n"%s" >/dev/null\n"%s" >/dev/null\n' "$WORKLOADS_USER/prefork_sem" \
    "$WORKLOADS_USER/prefork_sem" >"$tmp/two.sh"
chmod +x "$tmp/two.sh"
db=$tmp/names.db
LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$tmp/two.sh" 2>"$tmp/err" || fail "two.sh failed"

n=$(rows "$db" "SELECT COUNT(*) FROM run")
[ "$n" -ge 8 ] || fail "expected the tree's processes in the database, found $n"
shared=$(rows "$db" "SELECT COUNT(*) FROM (SELECT m.path, f.offset FROM frame f
    JOIN module m ON m.id = f.module_id WHERE m.path LIKE '%prefork_sem'
    GROUP BY m.path, f.offset HAVING COUNT(DISTINCT m.id) > 1)")
[ "${shared:-0}" -gt 0 ] || fail "no program address in frames of more than one process"
differ=$(rows "$db" "WITH chain AS (
        SELECT m.path AS path, f.offset AS offset, m.id AS module,
               group_concat(COALESCE(f.function, '?') || '@' || COALESCE(f.file, '') || ':' ||
                            f.line, ' > ') AS names
        FROM (SELECT * FROM frame ORDER BY id) f JOIN module m ON m.id = f.module_id
        GROUP BY m.id, f.offset)
    SELECT path || '+' || offset FROM chain GROUP BY path, offset
    HAVING COUNT(DISTINCT names) > 1 LIMIT 5")
[ -z "$differ" ] || fail "addresses named differently in two processes: $differ"
echo "ok: $shared program addresses in several of $n processes, each named the same in all"

named=$(rows "$db" "SELECT COUNT(*) FROM frame WHERE function GLOB 'slow_release*' AND line > 0")
[ "${named:-0}" -gt 0 ] || fail "slow_release is not named with its line"
cached=$(rows "$db" "SELECT COUNT(*) FROM symbol WHERE path LIKE '%prefork_sem'")
[ "${cached:-0}" -gt 0 ] || fail "no name of the program in the symbol table"
libc=$(rows "$db" "SELECT COUNT(*) FROM module_function WHERE path LIKE '%/libc.so%'")
[ "${libc:-0}" = 1 ] || fail "libc's function table is not kept once: $libc rows"
libc_addrs=$(rows "$db" "SELECT COUNT(DISTINCT f.offset) FROM frame f JOIN module m
    ON m.id = f.module_id WHERE m.path LIKE '%/libc.so%' AND m.build_id IS NOT NULL")
[ "${libc_addrs:-0}" -gt 0 ] || fail "no libc address in the frames"
unkept=$(rows "$db" "SELECT DISTINCT m.path || '+' || f.offset FROM frame f
    JOIN module m ON m.id = f.module_id WHERE m.path LIKE '%/libc.so%' AND m.build_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM symbol s WHERE s.build_id = m.build_id AND s.path = m.path
                    AND s.offset = f.offset AND s.depth = 0 AND s.function IS f.function)
    LIMIT 5")
[ -z "$unkept" ] || fail "libc addresses not kept as chains with their frames' names: $unkept"
echo "ok: slow_release named with its line; $cached cached names of the program; libc's table kept once; its $libc_addrs addresses kept as chains"
echo PASS
