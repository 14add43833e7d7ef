#!/usr/bin/env bash
# The library binds every symbol it imports when it is loaded (linked
# -z now): with lazy binding, the first call of a libc function through
# its PLT enters the dynamic linker, which looks the name up in every
# loaded module (a page fault on each module's hash table in a fork
# child), and that first call can be in the sampling signal handler (the
# unwinder's first CIE parsed: strnlen) or in a fork child's exit write.
# Fails when the dynamic section lacks BIND_NOW, or when a fork child
# still binds a symbol of the library's lazily (LD_DEBUG=bindings after
# the program's start).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/spool_tree"
# A program that forks children which lock, wait and exit, profiled: no
# binding of the library's imports happens after its start.
LD_DEBUG=bindings LD_DEBUG_OUTPUT=$tmp/bind LOCKBLAME_OUTPUT=$tmp/p.db \
    LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/spool_tree" tree 3 1 0 >"$tmp/out" 2>"$tmp/err" ||
    fail "workload failed: $(cat "$tmp/err")"
lib=$(basename "$LOCKBLAME_LIB")
ls "$tmp"/bind.* >/dev/null 2>&1 || fail "LD_DEBUG wrote nothing"
grep -q 'transferring control' "$tmp"/bind.* || fail "LD_DEBUG: no start of the program seen"
# the bindings made at load come before the program's "transferring
# control" (the fork children write to their parent's file, after it);
# any of the library's after it are lazy
# (the library's own dlsym(RTLD_NEXT) of a function it wraps shows as a
# binding too: names the library defines are those, not its imports)
nm -D --defined-only "$LOCKBLAME_LIB" | awk '{ print $3 }' | sed 's/@.*//' | sort -u >"$tmp/defined"
late=$(awk -v lib="$lib" 'FILENAME == ARGV[1] { defined[$1] = 1; next }
    FNR == 1 { started = 0 }
    /transferring control/ { started = 1 }
    started && match($0, /binding file [^ ]+ /) && index(substr($0, RSTART, RLENGTH), lib) {
        name = $0; sub(/.*symbol `/, "", name); sub(/'"'"'.*/, "", name)
        if (!(name in defined)) print FILENAME ": " $0 }' "$tmp/defined" "$tmp"/bind.* | head -5)
[ -z "$late" ] || fail "the library bound symbols after the start: $late"
flags=$(readelf -d "$LOCKBLAME_LIB" | awk '$2 == "(FLAGS)" || $2 == "(FLAGS_1)"')
grep -q BIND_NOW <<< "$flags" || grep -q 'Flags:.*NOW' <<< "$flags" ||
    fail "$LOCKBLAME_LIB is not linked with BIND_NOW: $flags"
echo "bind_now: all checks passed"
