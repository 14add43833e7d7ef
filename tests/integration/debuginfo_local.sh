#!/usr/bin/env bash
# Separate debug files are found on this machine only (common/debuginfo_find.c):
#   - a stripped binary whose debug file lies beside it (objcopy
#     --add-gnu-debuglink, how users ship release builds) gets its release
#     site's file:line from that file;
#   - a debug file of another build (different build id) under that name
#     is refused: no line from it;
#   - the exit write never loads libdebuginfod (libdw's network client,
#     which libdw 0.188 dlopens at the first module without a local debug
#     file), whatever DEBUGINFOD_URLS says.
source "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
for tool in cc objcopy strip readelf; do
    command -v $tool >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done
SRC=$ROOT/tests/workloads_user/stripped_locks.c
cd "$tmp"
cc -O2 -g -pthread -o full "$SRC"
cc -O1 -g -pthread -o other "$SRC" # another build: other code, other build id
objcopy --only-keep-debug full app.debug
objcopy --only-keep-debug other other.debug
[ "$(readelf -n full | awk '/Build ID/ { print $3 }')" != "$(readelf -n other | awk '/Build ID/ { print $3 }')" ] ||
    fail "the two builds share a build id"

mkdir good bad
for d in good bad; do
    cp full $d/app
    strip --strip-all $d/app
done
cp app.debug good/app.debug
objcopy --add-gnu-debuglink=good/app.debug good/app
cp other.debug bad/app.debug
(cd bad && objcopy --add-gnu-debuglink=../app.debug app) # the link names app.debug
cp other.debug bad/app.debug                             # ... and another build sits there

./full >names.out
read -r _ _ site _ <names.out
src_name=$(basename "$SRC")

for d in good bad; do
    DEBUGINFOD_URLS=http://127.0.0.1:9/ LD_DEBUG=files LOCKBLAME_OUTPUT=$tmp/$d.db \
        preloaded ./$d/app >/dev/null 2>"$d.err" || fail "$d/app failed: $(grep -v '^ *[0-9]*:' $d.err | head)"
    if grep -q 'libdebuginfod' "$d.err"; then
        fail "$d: the write loaded libdebuginfod: $(grep -m1 libdebuginfod $d.err)"
    fi
    "$LOCKBLAME_CLI" report -n 3 "$d.db" >"$d.report" || fail "report of $d failed"
done
echo "ok: libdebuginfod never loaded (DEBUGINFOD_URLS set, LD_DEBUG=files)"

grep -q "$site (.*$src_name:[0-9]*)" good.report ||
    fail "debug file beside the binary not used: want '$site ($src_name:N)' in: $(sed -n '10,14p' good.report)"
echo "ok: debuglink beside the binary: $(grep -m1 -o "$site (.*$src_name:[0-9]*)" good.report)"
if grep -q "$src_name:[0-9]" bad.report; then
    fail "a debug file of another build was used: $(grep -m1 "$src_name:" bad.report)"
fi
echo "ok: a debug file with another build id is refused"
echo "debuginfo_local: all checks passed"
