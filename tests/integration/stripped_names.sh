#!/usr/bin/env bash
# Names for stripped binaries. tests/workloads_user/stripped_locks.c is built
# -O2 -g as users build, then stripped four ways:
#   mdi    stripped, with MiniDebugInfo (.gnu_debugdata, Fedora's recipe)
#   bid    stripped; its debug file in DEBUG_ROOT/.build-id/xx/yyyy.debug
#   dyn    linked -rdynamic, stripped: only .dynsym names are left
#   plain  stripped, nothing left
# 1. The fallback alone (tests/unit/symbols_fallback with $LB_FALLBACK_CASES)
#    names an address inside each function as the unstripped binary's nm
#    does, and nothing in `plain`.
# 2. End to end under the preload: the report names the release site of
#    `mdi` (libdwfl or the fallback) as the program says it is, and the
#    unnamed frames of `plain` group as one "[plain]" row in --flat.
source "$(dirname "$0")/../lib/common.sh"
FALLBACK=$BUILD/tests/unit/symbols_fallback
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$FALLBACK"
for tool in cc objcopy strip xz nm readelf; do
    command -v $tool >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done
SRC=$ROOT/tests/workloads_user/stripped_locks.c
cd "$tmp"
cc -O2 -g -pthread -o full "$SRC"
cc -O2 -g -pthread -rdynamic -o dynfull "$SRC"

# MiniDebugInfo: the function symbols that .dynsym lacks, in an xz'd ELF.
nm -D full --format=posix --defined-only | awk '{ print $1 }' | sort >dynsyms
nm full --format=posix --defined-only | awk '$2 ~ /^[TtD]$/ { print $1 }' | sort >funcsyms
comm -13 dynsyms funcsyms >keep_symbols
objcopy --only-keep-debug full full.debug
objcopy -S --remove-section .gdb_index --remove-section .comment \
    --keep-symbols=keep_symbols full.debug mini_debuginfo
cp full mdi
strip --strip-all -R .comment mdi
xz -f mini_debuginfo
objcopy --add-section .gnu_debugdata=mini_debuginfo.xz mdi
readelf -S mdi >mdi.sections
grep -q gnu_debugdata mdi.sections || fail "objcopy did not add .gnu_debugdata"
# build-id debug file under our own debug root
cp full bid
strip --strip-all bid
id=$(readelf -n full | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || fail "no build id in the workload"
mkdir -p "dbg/.build-id/${id:0:2}"
cp full.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
# .dynsym only, and nothing
cp dynfull dyn
strip --strip-all dyn
cp full plain
strip --strip-all plain
nm mdi >mdi.nm 2>&1 || true
grep -q hold_and_release mdi.nm && fail "mdi still has a symbol table"

# The names the program itself says its release site and caller have.
./full >names.out
read -r _ _ site caller <names.out
addr_of() { printf '%x' $((0x$(nm "$1" | awk -v f="$2" '$3 == f { print $1 }') + 4)); }
{
    echo "$tmp/mdi $(addr_of full "$site") $site /nonexistent"
    echo "$tmp/bid $(addr_of full "$site") $site $tmp/dbg"
    echo "$tmp/bid $(addr_of full "$site") - /nonexistent"
    echo "$tmp/dyn $(addr_of dynfull "$caller") $caller /nonexistent"
    echo "$tmp/plain $(addr_of full "$site") - /nonexistent"
} >cases
LB_FALLBACK_CASES=$tmp/cases "$FALLBACK" test_cases_file || fail "the fallback misnamed a stripped function"

for b in full mdi plain; do
    LOCKBLAME_OUTPUT=$tmp/$b.db preloaded ./$b >/dev/null 2>"$b.err"
    "$LOCKBLAME_CLI" report --format json "$b.db" >"$b.json"
    "$LOCKBLAME_CLI" report --flat --format json "$b.db" >"$b.flat.json"
done
echo "mdi report:"; "$LOCKBLAME_CLI" report -n 2 mdi.db | sed -n '8,11p'
echo "plain report:"; "$LOCKBLAME_CLI" report -n 2 plain.db | sed -n '8,11p'
python3 - "$tmp" "$site" <<'PY'
import json, sys
d, site = sys.argv[1], sys.argv[2]
ok = True
for b in ("full", "mdi"):
    rows = json.load(open("%s/%s.json" % (d, b)))
    top = max(rows, key=lambda r: r["blame_s"])
    print(b, "top release site:", top["function"], top["blame_s"])
    ok &= top["function"] == site and top["blame_s"] > 0
rows = json.load(open(d + "/plain.json"))
top = max(rows, key=lambda r: r["blame_s"])
print("plain top release site:", top["function"])
ok &= top["function"].startswith("plain+0x")
flat = json.load(open(d + "/plain.flat.json"))
names = [r["function"] for r in flat]
print("plain --flat procedures:", names[:6])
ok &= "[plain]" in names and not any(n.startswith("plain+0x") for n in names)
sys.exit(0 if ok else 1)
PY
