#!/usr/bin/env bash
# Every #include "..." in src/ goes the allowed way (docs/INTERNALS.md,
# "Layers"):
#     util, common  <-  core  <-  sampler  <-  blame  <-  locks  <-  interpose
#   - util and common include only themselves;
#   - report/writer may include library headers (util .. locks) and itself;
#     no layer includes report/writer: core reaches it through its hooks;
#   - report/cli may include only common/ and report/cli/, and
#     util/lazy_deps.h, the checks before the stand-ins it links (below).
# A header included without a directory must be a system one (<...>) or a
# sibling; quoted includes name their directory, so each is classified.
#
# The same direction at link level: each object's undefined symbols
# (nm -u), resolved against the global symbols the other objects of the
# same binary define (nm --defined-only), must lie in its own layer or a
# lower one. liblockblame.so is built from $BUILD/obj, lockblame from
# $BUILD/cli; symbols no object defines come from system libraries and
# are fine. The order is the include order with util below common:
#     util <- common <- core <- sampler <- blame <- locks <- interpose
#   - common calls into util only for a stand-in of a system library: the
#     hidden stubs that open SQLite, libdw, libelf, liblzma and libpfm4 on
#     first use (util/lazy_deps.h), i.e. only the names util/lazy_*.c
#     define other than lb_* (the system libraries' own);
#   - report/writer calls util .. locks, and no layer calls report/writer
#     (core runs it through its hooks); report/cli calls only common, and
#     util/lazy_*.o, the stand-ins lockblame links too (libpfm4's).
# Only objects whose source exists count (a stale object of a moved file
# is ignored); missing ones are built.
# Each checker first proves it can fail: it must reject planted upward
# includes in a copy of a small tree, and planted upward calls in objects
# compiled from one.
. "$(dirname "$0")/../lib/common.sh"

# rank DIR: the layer rank of a directory under src/, or "" if unknown.
rank() {
    case $1 in
        util | common) echo 0 ;;
        core) echo 1 ;;
        sampler) echo 2 ;;
        blame) echo 3 ;;
        locks) echo 4 ;;
        report/writer) echo 5 ;;
        interpose) echo 6 ;;
        *) echo "" ;;
    esac
}

# layer PATH: the layer of a path relative to src/ (report/* keeps 2 parts).
layer() {
    case $1 in
        report/*) echo "$1" | cut -d/ -f1-2 ;;
        *) echo "${1%%/*}" ;;
    esac
}

# check SRCDIR: print one line per include that goes the wrong way.
check() {
    local src=$1 file rel from inc to
    while IFS= read -r file; do
        rel=${file#"$src"/}
        from=$(layer "$rel")
        while IFS= read -r inc; do
            case $inc in */*) ;; *) continue ;; esac # sibling (e.g. check.h)
            to=$(layer "$inc")
            [ "$from" = "$to" ] && continue
            local ok=0 rf rt
            case $from in
                util | common) ok=0 ;;
                report/cli) [ "$to" = common ] || [ "$inc" = util/lazy_deps.h ] && ok=1 ;;
                *)
                    rf=$(rank "$from")
                    rt=$(rank "$to")
                    if [ -z "$rf" ] || [ -z "$rt" ]; then
                        ok=0
                    elif [ "$to" = report/writer ]; then
                        ok=0
                    elif [ "$rt" -lt "$rf" ]; then
                        ok=1
                    fi
                    # util and common are below everything, for every layer.
                    case $to in util | common) ok=1 ;; esac
                    ;;
            esac
            [ $ok = 1 ] || echo "$rel includes $inc ($from -> $to)"
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
    done < <(find "$src" -name '*.[ch]' | sort)
}

echo "== the checker rejects planted upward includes"
mkdir -p "$tmp/src/core" "$tmp/src/sampler" "$tmp/src/report/cli" "$tmp/src/util"
printf '#include "util/common.h"\n#include "sampler/cct.h"\n' >"$tmp/src/core/bad.c"
printf '#include "core/thread.h"\n#include "common/kinds.h"\n' >"$tmp/src/sampler/good.c"
printf '#include "common/kinds.h"\n#include "core/thread.h"\n#include "util/lazy_deps.h"\n' >"$tmp/src/report/cli/bad.c"
printf '#include "core/thread.h"\n' >"$tmp/src/util/bad.h"
printf '#include "util/clock.h"\n' >"$tmp/src/report/cli/bad2.c"
mkdir -p "$tmp/src/interpose" "$tmp/src/report/writer"
printf '#include "report/writer/writer.h"\n' >"$tmp/src/interpose/bad.c"
printf '#include "locks/monitored.h"\n#include "common/u64map.h"\n' >"$tmp/src/report/writer/good.c"
planted=$(check "$tmp/src")
echo "$planted" | sed 's/^/  /'
[ "$(grep -c . <<<"$planted")" -eq 5 ] || fail "expected exactly 5 planted violations"
grep -q 'report/cli/bad2.c includes util/clock.h' <<<"$planted" || fail "missed cli -> util"
grep -q 'core/bad.c includes sampler/cct.h' <<<"$planted" || fail "missed core -> sampler"
grep -q 'report/cli/bad.c includes core/thread.h' <<<"$planted" || fail "missed cli -> core"
grep -q 'util/bad.h includes core/thread.h' <<<"$planted" || fail "missed util -> core"
grep -q 'interpose/bad.c includes report/writer/writer.h' <<<"$planted" || fail "missed -> writer"

echo "== src/"
found=$(check "$ROOT/src")
n=$(grep -c . <<<"$found" || true)
echo "$n include(s) against the direction"
[ "$n" -eq 0 ] || { echo "$found" | sed 's/^/  /'; fail "$n include(s) go against the layer direction"; }
echo "include direction OK ($(find "$ROOT/src" -name '*.[ch]' | wc -l) files)"

# objects SRC OUT UNIT: the object path, one a line, of each .c under SRC in
# UNIT's build tree OUT: lib (every layer but report/cli) or cli (common,
# report/cli and libpfm4's stand-ins), as the Makefile builds them
# ($OUT/src/REL.o; CLI_SRCS).
objects() {
    local src=$1 out=$2 unit=$3 file rel
    while IFS= read -r file; do
        rel=${file#"$src"/}
        case $unit/$rel in
            lib/report/cli/*) continue ;;
            cli/common/* | cli/report/cli/* | cli/util/lazy_pfm.c | cli/util/lazy_lib.c) ;;
            cli/*) continue ;;
        esac
        echo "$out/src/${rel%.c}.o"
    done < <(find "$src" -name '*.c' | sort)
}

# symbols UNIT OBJECT...: "UNIT D|U LAYER SYMBOL OBJECT" for each global
# symbol an object defines (D) and each it leaves undefined (U).
symbols() {
    local unit=$1
    shift
    {
        nm -A -g --defined-only "$@" | sed 's/^/D /'
        nm -A -u "$@" | sed 's/^/U /'
    } | awk -v unit="$unit" '
        {
            i = index($2, ":")
            path = substr($2, 1, i - 1)
            rel = path
            sub(/.*\/src\//, "", rel)
            n = split(rel, part, "/")
            layer = part[1] == "report" ? part[1] "/" part[2] : part[1]
            print unit, $1, layer, $NF, rel
        }'
}

# check_links SRC OBJDIR CLIDIR IMPORTS: print one line per call that goes
# the wrong way, in liblockblame.so (OBJDIR) or lockblame (CLIDIR). IMPORTS
# is a file of the stand-ins' names (the system libraries' own).
check_links() {
    local src=$1 imports=$4 lib_objs cli_objs
    mapfile -t lib_objs < <(objects "$src" "$2" lib)
    mapfile -t cli_objs < <(objects "$src" "$3" cli)
    { sed 's/^/I /' "$imports"; symbols lib "${lib_objs[@]}"; symbols cli "${cli_objs[@]}"; } | awk '
        function rank(l) {
            return l == "util" ? 0 : l == "common" ? 1 : l == "core" ? 2 : l == "sampler" ? 3 : \
                   l == "blame" ? 4 : l == "locks" ? 5 : l == "report/writer" ? 6 : \
                   l == "interpose" ? 7 : -1
        }
        function allowed(from, to, sym, obj) {
            if (from == to)
                return 1
            if (to == "report/writer")
                return 0
            if (from == "report/cli")
                return to == "common" || obj ~ /^util\/lazy_/
            if (from == "common" && to == "util")
                return (sym in standin)
            return rank(from) >= 0 && rank(to) >= 0 && rank(to) < rank(from)
        }
        $1 == "I" { standin[$2] = 1; next }
        $2 == "D" { def[$1, $4] = def[$1, $4] " " $3 "=" $5; defined[$1, $4] = 1; next }
        { use[++n] = $0 }
        END {
            for (k = 1; k <= n; k++) {
                split(use[k], u, " ")
                if (!((u[1], u[4]) in defined))
                    continue # a system library
                m = split(def[u[1], u[4]], where, " ")
                own = 0
                for (j = 1; j <= m; j++)
                    if (substr(where[j], 1, index(where[j], "=") - 1) == u[3])
                        own = 1
                if (own)
                    continue
                for (j = 1; j <= m; j++) {
                    to = substr(where[j], 1, index(where[j], "=") - 1)
                    if (!allowed(u[3], to, u[4], substr(where[j], index(where[j], "=") + 1)))
                        printf "%s: %s calls %s in %s (%s -> %s)\n", u[1], u[5], u[4], \
                               substr(where[j], index(where[j], "=") + 1), u[3], to
                }
            }
        }' | sort -u
}

echo "== the link checker rejects planted upward calls"
plant=$tmp/links
# plant REL BODY: a source file src/REL of the planted tree.
plant() {
    mkdir -p "$(dirname "$plant/src/$1")"
    printf '%s\n' "$2" >"$plant/src/$1"
}
plant util/clock.c 'int lb_p_clock(void) { return 1; }'
plant util/bad.c 'int lb_p_lock(void); int lb_p_util_bad(void) { return lb_p_lock(); }'
plant util/stub.c 'int p_sys_open(void) { return 0; }'
plant common/kinds.c 'int p_sys_open(void); int lb_p_kinds(void) { return p_sys_open(); }'
plant common/bad.c 'int lb_p_clock(void); int lb_p_common_bad(void) { return lb_p_clock(); }'
plant core/thread.c 'int lb_p_clock(void); int lb_p_kinds(void); int lb_p_thread(void) { return lb_p_clock() + lb_p_kinds(); }'
plant core/bad.c 'int lb_p_writer(void); int lb_p_core_bad(void) { return lb_p_writer(); }'
plant locks/mutex.c 'int lb_p_thread(void); int lb_p_lock(void) { return lb_p_thread(); }'
plant interpose/exports.c 'int lb_p_lock(void); int p_exported(void) { return lb_p_lock(); }'
plant report/writer/writer.c 'int lb_p_lock(void); int lb_p_writer(void) { return lb_p_lock(); }'
plant common/upcall.c 'int lb_p_cli(void); int lb_p_upcall(void) { return lb_p_cli(); }'
plant report/cli/main.c 'int lb_p_kinds(void); int main(void) { return lb_p_kinds(); }'
plant report/cli/cli.c 'int lb_p_cli(void) { return 2; }'
plant util/lazy_pfm.c 'int lb_p_lazy_open(void) { return 1; }'
plant report/cli/opens.c 'int lb_p_lazy_open(void); int lb_p_opens(void) { return lb_p_lazy_open(); }'
plant common/lazy_call.c 'int lb_p_lazy_open(void); int lb_p_lazy_call(void) { return lb_p_lazy_open(); }'
while IFS= read -r file; do
    rel=${file#"$plant/src/"}
    for unit in obj cli; do
        mkdir -p "$(dirname "$plant/$unit/src/$rel")"
        cc -c -w "$file" -o "$plant/$unit/src/${rel%.c}.o" || fail "cannot compile $rel"
    done
done < <(find "$plant/src" -name '*.c')
echo p_sys_open >"$plant/imports"
planted=$(check_links "$plant/src" "$plant/obj" "$plant/cli" "$plant/imports")
echo "$planted" | sed 's/^/  /'
[ "$(grep -c . <<<"$planted")" -eq 6 ] || fail "expected exactly 6 planted upward calls"
# the CLI's stand-ins are among its objects: common's call into one by a
# name no system library has is caught there, report/cli's is allowed
grep -q 'cli: common/lazy_call.o calls lb_p_lazy_open in util/lazy_pfm.o (common -> util)' \
    <<<"$planted" || fail "missed common -> util in the CLI's stand-ins"
grep -q 'lib: common/lazy_call.o calls lb_p_lazy_open in util/lazy_pfm.o (common -> util)' \
    <<<"$planted" || fail "missed common -> util in the library's stand-ins"
! grep -q 'opens.o' <<<"$planted" || fail "report/cli's call into a stand-in was refused"
grep -q 'lib: util/bad.o calls lb_p_lock in locks/mutex.o (util -> locks)' <<<"$planted" ||
    fail "missed util -> locks"
grep -q 'lib: common/bad.o calls lb_p_clock in util/clock.o (common -> util)' <<<"$planted" ||
    fail "missed common -> util (not a stand-in)"
grep -q 'lib: core/bad.o calls lb_p_writer in report/writer/writer.o (core -> report/writer)' \
    <<<"$planted" || fail "missed core -> report/writer"
grep -q 'cli: common/upcall.o calls lb_p_cli in report/cli/cli.o (common -> report/cli)' \
    <<<"$planted" || fail "missed common -> report/cli"

echo "== liblockblame.so and lockblame"
mapfile -t wanted < <(objects "$ROOT/src" "$BUILD/obj" lib; objects "$ROOT/src" "$BUILD/cli" cli)
missing=0
for o in "${wanted[@]}" "$BUILD/lockblame"; do [ -e "$o" ] || missing=$((missing + 1)); done
if [ $missing -gt 0 ]; then
    echo "$missing file(s) not built yet: make all"
    make -C "$ROOT" -s BUILD="$BUILD" all >"$tmp/make.log" 2>&1 || fail "make all failed: $(tail -5 "$tmp/make.log")"
fi
nm -g --defined-only "$BUILD"/obj/src/util/lazy_*.o | awk 'NF == 3 && $3 !~ /^lb_/ { print $3 }' |
    sort -u >"$tmp/imports"
grep -qx sqlite3_open_v2 "$tmp/imports" || fail "no stand-in for sqlite3_open_v2"
grep -qx pfm_get_os_event_encoding "$tmp/imports" || fail "no stand-in for pfm_get_os_event_encoding"
found=$(check_links "$ROOT/src" "$BUILD/obj" "$BUILD/cli" "$tmp/imports")
n=$(grep -c . <<<"$found" || true)
echo "$n call(s) against the direction"
[ "$n" -eq 0 ] || { echo "$found" | sed 's/^/  /'; fail "$n call(s) go against the layer direction"; }
echo "link direction OK (${#wanted[@]} objects)"
