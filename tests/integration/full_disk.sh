#!/usr/bin/env bash
# A profiled tree whose database lies on a file system that fills up
# while it runs (a 900 KiB tmpfs): the files the tree's processes map
# shared (the ledger of processes, common/ledger.h) have their blocks
# allocated when they are made (common/file_room.h), so no write through
# the mapping meets a full disk. Before, a fork child claiming its ledger
# slot on a page not yet allocated died of SIGBUS, and so did `lockblame
# run` counting the ledger.
#  1. plain LD_PRELOAD, forktree 600 2 0: the program's status (0) and
#     its own output, whatever lockblame could not write; the processes
#     whose write failed leave their line to the root's summary, which
#     counts them and says why once, the first of them saying its own too
#     (each said its own: 500 lines)
#  2. under lockblame run: run's status is the program's (0), its summary
#     is printed, and the merge says the pending profiles could not be
#     added once, not once a batch
#  3. a disk with no room left for the tree's ledger at the start (32 KiB
#     free): plain LD_PRELOAD and lockblame run each say so in one line
#     and run the program unprofiled, with its status and output (each
#     process said its own failed write, and run then said no process
#     had recorded anything); a link planted where the room's probe
#     would be named is not followed (its target was truncated)
#  4. a file size limit below the ledger's size (ulimit -f 32): one line,
#     the program unprofiled (the probe's allocation ended the process
#     with SIGXFSZ, lockblame run itself included)
#  5. lockblame run -o over an earlier run's database on that full disk:
#     the room it frees is the ledger's (it was asked for before the old
#     database was removed, and the run went unprofiled)
# Needs a tmpfs mount (root); skipped where mount is refused.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB" "$BUILD/bench/forktree"
fs=$tmp/fs
mkdir -p "$fs"
mount -t tmpfs -o size=900k tmpfs "$fs" 2>/dev/null || skip "a tmpfs mount (root)"
trap 'umount "$fs" 2>/dev/null; rm -rf "$tmp"' EXIT

echo "== 1. plain LD_PRELOAD"
st=0
LD_PRELOAD=$LOCKBLAME_LIB LOCKBLAME_OUTPUT=$fs/plain.db "$BUILD/bench/forktree" 600 2 0 \
    >"$tmp/plain.out" 2>"$tmp/plain.err" || st=$?
echo "  status $st; $(grep -c "disk is full" "$tmp/plain.err") lines saying the disk is full"
[ $st = 0 ] || bad "plain: forktree exited $st, not 0: $(grep -v '^lockblame: cannot write' "$tmp/plain.err" | head -c 600)"
grep -q "^per_child_ms " "$tmp/plain.out" || bad "plain: forktree's own output is missing: $(head -c 300 "$tmp/plain.out")"
grep -q "disk is full" "$tmp/plain.err" || bad "plain: the disk never filled up: the test proves nothing"
said=$(grep -c "^lockblame: cannot write profile" "$tmp/plain.err" || true)
[ "$said" -le 2 ] || bad "plain: $said lines say a profile could not be written, not the first failed process's and the root's alone"
grep -qE "^lockblame: [0-9]+ processes of the tree ended without writing their profile: their write failed \(database or disk is full, the first of them\)" "$tmp/plain.err" ||
    bad "plain: the root's summary does not count the failed writes and say why: $(grep 'ended without' "$tmp/plain.err")"
rm -rf "${fs:?}"/*

echo "== 2. under lockblame run"
st=0
"$LOCKBLAME_CLI" run -o "$fs/run.db" -- "$BUILD/bench/forktree" 600 2 0 >"$tmp/run.out" 2>"$tmp/run.err" || st=$?
not_added=$(grep -c "are not in it yet" "$tmp/run.err" || true)
echo "  status $st; $not_added lines saying the pending profiles are not added"
[ $st = 0 ] || bad "run: exited $st, not forktree's 0: $(grep -v '^lockblame: cannot write' "$tmp/run.err" | head -c 600)"
grep -q "^per_child_ms " "$tmp/run.out" || bad "run: forktree's own output is missing"
grep -qE "^lockblame: [0-9]+ process(es)? profiled" "$tmp/run.err" || bad "run: no summary: $(tail -c 600 "$tmp/run.err")"
[ "$not_added" -le 1 ] || bad "run: $not_added lines say the pending profiles are not added, not one"
rm -rf "${fs:?}"/*

echo "== 3. no room for the ledger at the start"
avail_kb=$(df -k --output=avail "$fs" | tail -1 | tr -d ' ')
head -c $(((avail_kb - 32) * 1024)) /dev/zero >"$fs/fill" 2>/dev/null || true
echo "  $(df -k --output=avail "$fs" | tail -1 | tr -d ' ') KiB free"
for mode in plain run; do
    st=0
    if [ $mode = plain ]; then
        LD_PRELOAD=$LOCKBLAME_LIB LOCKBLAME_OUTPUT=$fs/full.db "$BUILD/bench/forktree" 20 2 0 \
            >"$tmp/full.out" 2>"$tmp/full.err" || st=$?
    else
        "$LOCKBLAME_CLI" run -o "$fs/full.db" -- "$BUILD/bench/forktree" 20 2 0 \
            >"$tmp/full.out" 2>"$tmp/full.err" || st=$?
    fi
    lines=$(grep -c "^lockblame:" "$tmp/full.err" || true)
    echo "  $mode: status $st, $lines lockblame: lines"
    [ $st = 0 ] || bad "$mode, no room: forktree exited $st, not 0: $(head -c 600 "$tmp/full.err")"
    grep -q "^per_child_ms " "$tmp/full.out" || bad "$mode, no room: forktree's own output is missing"
    [ "$lines" = 1 ] || bad "$mode, no room: $lines lockblame: lines, not one: $(head -c 900 "$tmp/full.err")"
    grep -q "no room for the run's ledger of processes (No space left on device).*unprofiled\|no room for the run's ledger of processes (No space left on device); not profiling" "$tmp/full.err" ||
        bad "$mode, no room: the line does not say why and that the program runs unprofiled: $(cat "$tmp/full.err")"
    ! ls "$fs" | grep -q "procs" || bad "$mode, no room: a ledger or its probe was left behind: $(ls "$fs")"
done
echo data >"$tmp/victim"
bash -c 'ln -s "$1" "$2.db-procs.room.$$"; exec env LD_PRELOAD="$3" LOCKBLAME_OUTPUT="$2.db" "$4" 2 2 0' \
    linked "$tmp/victim" "$fs/linked" "$LOCKBLAME_LIB" "$BUILD/bench/forktree" >/dev/null 2>&1 || true
[ "$(cat "$tmp/victim")" = data ] || bad "no room: the probe followed a link planted at its name and wrote its target"
rm -rf "${fs:?}"/*

echo "== 4. a file size limit below the ledger's size"
for mode in plain run; do
    st=0
    if [ $mode = plain ]; then
        (ulimit -f 32 && LD_PRELOAD=$LOCKBLAME_LIB LOCKBLAME_OUTPUT=$fs/limit.db \
            "$BUILD/bench/forktree" 4 2 0) >"$tmp/limit.out" 2>"$tmp/limit.err" || st=$?
    else
        (ulimit -f 32 && "$LOCKBLAME_CLI" run -o "$fs/limit.db" -- "$BUILD/bench/forktree" 4 2 0) \
            >"$tmp/limit.out" 2>"$tmp/limit.err" || st=$?
    fi
    lines=$(grep -c "^lockblame:" "$tmp/limit.err" || true)
    echo "  $mode: status $st, $lines lockblame: lines"
    [ $st = 0 ] || bad "$mode, file size limit: exited $st, not forktree's 0: $(head -c 600 "$tmp/limit.err")"
    grep -q "^per_child_ms " "$tmp/limit.out" || bad "$mode, file size limit: forktree's own output is missing"
    [ "$lines" = 1 ] && grep -q "(File too large)" "$tmp/limit.err" ||
        bad "$mode, file size limit: not one line saying the file would be too large: $(head -c 900 "$tmp/limit.err")"
done
rm -rf "${fs:?}"/*

echo "== 5. run -o over an earlier database on a full disk"
"$LOCKBLAME_CLI" run -o "$fs/again.db" -- "$BUILD/bench/forktree" 3 2 0 >/dev/null 2>&1
sqlite3 "$fs/again.db" "CREATE TABLE pad(b BLOB); INSERT INTO pad VALUES(zeroblob(300000));" ||
    bad "cannot grow the earlier database"
avail_kb=$(df -k --output=avail "$fs" | tail -1 | tr -d ' ')
head -c $(((avail_kb - 32) * 1024)) /dev/zero >"$fs/fill" 2>/dev/null || true
st=0
"$LOCKBLAME_CLI" run -o "$fs/again.db" -- "$BUILD/bench/forktree" 8 2 0 >"$tmp/again.out" 2>"$tmp/again.err" || st=$?
echo "  status $st; $(grep -c "^lockblame:" "$tmp/again.err") lockblame: lines"
[ $st = 0 ] || bad "again: exited $st: $(head -c 600 "$tmp/again.err")"
grep -qE "^lockblame: [0-9]+ processes profiled" "$tmp/again.err" ||
    bad "again: the run did not profile the tree: $(head -c 900 "$tmp/again.err")"
[ "$(sqlite3 "$fs/again.db" "SELECT count(*) FROM sqlite_master WHERE name = 'pad'")" = 0 ] ||
    bad "again: the earlier database was not replaced"
finish
