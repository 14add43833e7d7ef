#!/usr/bin/env bash
# The variables a fork child writes (LB_FORK_WRITTEN, util/common.h) lie
# on one page of their own (src/liblockblame.ld aligns the section): a
# forking parent then copies one page after each fork, and a child one,
# whatever else moves in the library's data. Fails when the section is
# not page-aligned, or has grown past a page, or when the C runtime's
# exit flag lies outside it.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB"
line=$(readelf -S -W "$LOCKBLAME_LIB" | awk '$2 == "lb_fork_written" { print $4, $6 }')
[ -n "$line" ] || fail "no lb_fork_written section in $LOCKBLAME_LIB"
read -r addr size <<< "$line"
addr=$((16#$addr))
size=$((16#$size))
[ $((addr % 4096)) -eq 0 ] || fail "lb_fork_written starts at $(printf %#x $addr), not on a page"
[ "$size" -le 4096 ] || fail "lb_fork_written holds $size bytes: over a page"
echo "ok: lb_fork_written at $(printf %#x $addr), $size bytes, one page"
# The C runtime's flag every exit writes (crtbeginS.o's completed.0) lies
# there too (src/liblockblame.ld), where the symbol table names it.
flag=$(nm "$LOCKBLAME_LIB" 2>/dev/null | awk '$3 == "completed.0" { print $1 }')
if [ -n "$flag" ]; then
    flag=$((16#$flag))
    [ "$flag" -ge "$addr" ] && [ "$flag" -lt $((addr + size)) ] ||
        fail "completed.0 at $(printf %#x $flag), outside lb_fork_written"
    echo "ok: completed.0 in lb_fork_written"
fi
echo "fork_written_layout: all checks passed"
