#!/usr/bin/env bash
# A Go program runs without lockblame, with one line (src/common/go_program.h):
# its locks and its exit bypass the C library, and a signal handler of
# lockblame's on a goroutine's stack crashed it. go_note carries the Go
# linker's build id note and contends on a mutex: preloaded, it prints what
# it prints natively, exits 0, says one line, and leaves no database nor
# any file beside one; go_note_plain, the same source without the note,
# is profiled (so the check is the note's doing). Where a Go toolchain is
# installed, a real cgo program (goroutines, sync.Mutex) runs 20 times
# preloaded with its native output and status each time.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/go_note" "$WORKLOADS_USER/go_note_plain"

native=$("$WORKLOADS_USER/go_note") || fail "go_note failed natively"
out=$(cd "$tmp" && LOCKBLAME_OUTPUT=$tmp/go.db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/go_note" 2>"$tmp/err") ||
    fail "go_note exited $? preloaded"
[ "$out" = "$native" ] || fail "output '$out', natively '$native'"
[ "$(grep -c '^lockblame:' "$tmp/err")" = 1 ] && grep -q "go_note is a Go program" "$tmp/err" ||
    fail "want one line naming the Go program: $(cat "$tmp/err")"
[ "$(ls "$tmp" | grep -c '^go\.db')" = 0 ] || fail "files left: $(ls "$tmp")"
echo "ok: a Go program runs unprofiled, one line"

LOCKBLAME_OUTPUT=$tmp/plain.db LD_PRELOAD=$LOCKBLAME_LIB "$WORKLOADS_USER/go_note_plain" >/dev/null 2>&1 ||
    fail "go_note_plain failed"
[ "$(rows "$tmp/plain.db" "SELECT COUNT(*) FROM run")" = 1 ] || fail "the plain build was not profiled"
echo "ok: the same program without the note is profiled"

command -v go >/dev/null 2>&1 || { echo "SKIP part: no Go toolchain for a cgo program"; exit 0; }
mkdir -p "$tmp/cg"
cat >"$tmp/cg/main.go" <<'GO'
package main

// #include <stdlib.h>
import "C"
import (
	"fmt"
	"sync"
)

func main() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 10000; k++ {
				mu.Lock()
				n += i
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	p := C.malloc(16)
	C.free(p)
	fmt.Println("result", n)
}
GO
printf 'module cg\n\ngo 1.18\n' >"$tmp/cg/go.mod"
if ! (cd "$tmp/cg" && HOME=$tmp GOCACHE=$tmp/gocache GOFLAGS=-mod=mod GOPROXY=off CGO_ENABLED=1 \
    go build -o cg . >"$tmp/gobuild" 2>&1); then
    echo "SKIP part: the cgo program does not build here: $(head -3 "$tmp/gobuild")"
    exit 0
fi
want=$("$tmp/cg/cg") || fail "the cgo program failed natively"
for i in $(seq 20); do
    got=$(LOCKBLAME_OUTPUT=$tmp/cg.db LD_PRELOAD=$LOCKBLAME_LIB "$tmp/cg/cg" 2>"$tmp/cgerr") ||
        fail "start $i: the cgo program exited $?: $(tail -3 "$tmp/cgerr")"
    [ "$got" = "$want" ] || fail "start $i: output '$got', natively '$want'"
done
echo "ok: a cgo program, 20 starts, as natively"
