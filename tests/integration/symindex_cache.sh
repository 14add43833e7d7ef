#!/usr/bin/env bash
# The CLI's cache of symbol indexes (src/common/symindex_cache.h), over
# `lockblame run -- make` of a few C files, whose compilers (cc1: tens of
# thousands of symbols, a build id) leave their frames for run's merge to
# name:
#  1. a first run writes cc1's index to $XDG_CACHE_HOME/lockblame/symindex/
#     as <build id>.<table>; a second run reads it (the file is not written
#     again) and names every cc1 address both runs sampled as the first did;
#  2. LOCKBLAME_CACHE=0: no cache directory is made;
#  3. the library alone (plain LD_PRELOAD, the tree's root merging) makes
#     none either: a profiled program never writes the cache;
#  4. a cache that cannot be made (XDG_CACHE_HOME under a file): run
#     succeeds, names cc1's frames, and prints its summary's lines alone.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB"
command -v sqlite3 >/dev/null || skip "sqlite3"
command -v gcc >/dev/null && command -v make >/dev/null || skip "gcc and make"
command -v readelf >/dev/null || skip "readelf"
cc1=$(gcc -print-prog-name=cc1)
case $cc1 in /*) ;; *) skip "gcc's cc1 by its path" ;; esac
cc1=$(readlink -f "$cc1")
id=$(readelf -n "$cc1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
[ -n "$id" ] || skip "a build id in $cc1"

proj=$tmp/proj
mkdir -p "$proj"
objs=
for f in 0 1 2 3 4 5; do
    {
        for i in $(seq 0 80); do
            echo "int f${f}_$i(int *a, int n) { int s = 0; for (int i = 0; i < n; i++)"
            echo "  s += a[i] * $i + (a[i] >> ($i % 7)); return s; }"
        done
    } >"$proj/f$f.c"
    objs="$objs f$f.o"
done
printf 'all:%s\n%%.o: %%.c\n\t$(CC) -O2 -g -c -o $@ $<\n' "$objs" >"$proj/Makefile"

# build NAME [ENV...]: make the project under `lockblame run` with the
# given settings; its database $tmp/NAME.db, its stderr $tmp/NAME.err.
build() {
    local name=$1
    shift
    rm -f "$proj"/*.o
    env "$@" "$LOCKBLAME_CLI" run -o "$tmp/$name.db" -- make -s -j2 -C "$proj" \
        >/dev/null 2>"$tmp/$name.err" || bad "$name: run failed: $(cat "$tmp/$name.err")"
}
# cc1_names DB: "offset function" of each named cc1 frame, by offset.
cc1_names() {
    rows "$1" "SELECT f.offset || ' ' || f.function FROM frame f JOIN module m ON m.id = f.module_id
               WHERE m.build_id = '$id' AND f.function IS NOT NULL ORDER BY f.offset"
}

# 1. written, then read
build first XDG_CACHE_HOME="$tmp/cache"
[ "$(cc1_names "$tmp/first.db" | wc -l)" -gt 0 ] || fail "first: no cc1 frame named"
files=("$tmp/cache/lockblame/symindex/$id".*)
[ -f "${files[0]}" ] ||
    fail "first: no file for cc1 ($id) in the cache: $(ls -A "$tmp/cache/lockblame/symindex" 2>&1)"
before=$(stat -c '%i %Y.%y' "${files[0]}")
build second XDG_CACHE_HOME="$tmp/cache"
[ "$(stat -c '%i %Y.%y' "${files[0]}")" = "$before" ] || bad "second: cc1's file was written again"
common=$(join <(cc1_names "$tmp/first.db" | awk '{ print $1 }' | sort -u) \
    <(cc1_names "$tmp/second.db" | awk '{ print $1 }' | sort -u) | wc -l)
[ "$common" -gt 0 ] || bad "no cc1 address sampled in both runs"
# the same offset, named alike in both runs
differ=$(join <(cc1_names "$tmp/first.db" | sort -k1,1) <(cc1_names "$tmp/second.db" | sort -k1,1) |
    awk '$2 != $3 && n++ < 5')
[ -z "$differ" ] || bad "cc1 addresses named otherwise from the cache: $differ"
echo "# $common cc1 addresses in both runs, named alike"

# 2. off
build off XDG_CACHE_HOME="$tmp/off" LOCKBLAME_CACHE=0
[ ! -e "$tmp/off" ] || bad "LOCKBLAME_CACHE=0: $tmp/off made: $(find "$tmp/off" | tr '\n' ' ')"

# 3. the library alone
rm -f "$proj"/*.o
XDG_CACHE_HOME="$tmp/lib" LOCKBLAME_OUTPUT="$tmp/lib.db" LD_PRELOAD="$LOCKBLAME_LIB" \
    make -s -j2 -C "$proj" >/dev/null 2>"$tmp/lib.err" || bad "preload: make failed: $(cat "$tmp/lib.err")"
[ "$(cc1_names "$tmp/lib.db" | wc -l)" -gt 0 ] || bad "preload: no cc1 frame named"
[ ! -e "$tmp/lib" ] || bad "preload: the library made $tmp/lib: $(find "$tmp/lib" | tr '\n' ' ')"

# 4. a cache that cannot be made
echo x >"$tmp/blocker"
build blocked XDG_CACHE_HOME="$tmp/blocker/cache"
# (the summary's lines: the tree, the waits it could not see, the profile)
others=$(grep -Ev '^lockblame: ([0-9]+ processes profiled; |threads spent |profile )' "$tmp/blocked.err" || true)
[ -z "$others" ] || bad "blocked: lines besides the summary's: $others"
[ "$(cc1_names "$tmp/blocked.db" | wc -l)" -gt 0 ] || bad "blocked: no cc1 frame named"
finish
