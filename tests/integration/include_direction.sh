#!/usr/bin/env bash
# Every #include "..." in src/ goes the allowed way (docs/INTERNALS.md,
# "Layers"):
#     util, common  <-  core  <-  sampler  <-  blame  <-  locks  <-  interpose
#   - util and common include only themselves;
#   - report/writer may include library headers (util .. locks) and itself;
#     no layer includes report/writer: core reaches it through its hooks;
#   - report/cli may include only common/ and report/cli/.
# A header included without a directory must be a system one (<...>) or a
# sibling; quoted includes name their directory, so each is classified.
# The checker first proves it can fail: it must reject a planted upward
# include in a copy of a small tree.
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
                report/cli) [ "$to" = common ] && ok=1 ;;
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
printf '#include "common/kinds.h"\n#include "core/thread.h"\n' >"$tmp/src/report/cli/bad.c"
printf '#include "core/thread.h"\n' >"$tmp/src/util/bad.h"
mkdir -p "$tmp/src/interpose" "$tmp/src/report/writer"
printf '#include "report/writer/writer.h"\n' >"$tmp/src/interpose/bad.c"
printf '#include "locks/monitored.h"\n#include "common/u64map.h"\n' >"$tmp/src/report/writer/good.c"
planted=$(check "$tmp/src")
echo "$planted" | sed 's/^/  /'
[ "$(grep -c . <<<"$planted")" -eq 4 ] || fail "expected exactly 4 planted violations"
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
