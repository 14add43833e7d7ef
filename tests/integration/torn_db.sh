#!/usr/bin/env bash
# The run's own database, not (yet) an SQLite database: its first page not
# written yet by the process of the run that makes it (a big first commit
# spills pages beyond the first), or torn by a write that failed (a full
# disk). An image started meanwhile (a compiler that make runs) read the
# file's head at its start and, finding no SQLite header, said "exists and
# is not a lockblame database; not overwriting it, not profiling" about
# the run's own file, and ran unprofiled with its whole subtree. Inside a
# run, a file at the path that is no SQLite database is the run's own
# when the run's ledger beside it (common/ledger.h) was made for this run:
# its maker made it after the path passed the run's check.
#  1. plain LD_PRELOAD and lockblame run: a shell script tears the run's
#     database (6 bytes, a zeroed first page of 8 KiB, or a header whole
#     over a page of garbage), then runs a program that execs itself and
#     one that exits 6: no "not a lockblame database" line, the programs'
#     output and the status (6) unchanged, the file left as it was, and
#     the failed write said by the tree's summary (file is not a
#     database; database disk image is malformed)
#  2. a foreign file planted at the path before the run is still refused
#     with its one line and never written: plain, under run (-o, and the
#     default name lockblame.PROG.PID.db, whose PID a pid namespace makes
#     known), and inside a run by a subtree whose LOCKBLAME_OUTPUT names
#     it, a ledger of another run beside it
#  3. make -j4 of 31 C files on a 600 KiB tmpfs (root; skipped where mount
#     is refused): no "not a lockblame database" line
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI" "$LOCKBLAME_LIB"
command -v cc >/dev/null || skip "a C compiler (cc)"
L=$LOCKBLAME_CLI
W=$tmp/tree_work
cc -O2 -g -pthread -o "$W" "$ROOT/tests/trees/tree_work.c" || fail "cannot build tree_work"
foreign='not a lockblame database'

# A lockblame database whose header is whole and whose second page, the
# root of its meta table, is garbage.
python3 - "$tmp/corrupt.db" <<'PY' || fail "cannot make a corrupt database"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1] + ".whole")
con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value)")
con.execute("INSERT INTO meta VALUES ('schema_version', '9')")
for i in range(20):
    con.execute(f"CREATE TABLE t{i}(a, b)")
con.commit()
con.close()
image = bytearray(open(sys.argv[1] + ".whole", "rb").read())
image[4096:8192] = b"\xff" * 4096
open(sys.argv[1], "wb").write(image)
PY
export CORRUPT=$tmp/corrupt.db

# tear DB HOW: the run's database as a failed write leaves it
tear() {
    case $2 in
    short) printf 'SQLite' >"$1" ;;
    zero) head -c 8192 /dev/zero >"$1" ;;
    corrupt) cp "$CORRUPT" "$1" ;;
    esac
}
export -f tear

echo "== 1. the run's own database torn while the tree runs"
for how in short zero corrupt; do
    for mode in preload run; do
        dir=$tmp/$mode.$how
        mkdir "$dir"
        db=$dir/t.db
        script="tear '$db' $how; cp '$db' '$dir/torn'; '$W' exec; '$W' _exit 6"
        st=0
        if [ $mode = preload ]; then
            (cd "$dir" && LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB bash -c "$script" >out 2>err) || st=$?
        else
            (cd "$dir" && "$L" run -o "$db" -- bash -c "$script" >out 2>err) || st=$?
        fi
        sed "s/^/  $mode $how: /" "$dir/err"
        [ $st = 6 ] || bad "$mode $how: status $st, not the program's 6"
        [ "$(grep -c '^contended' "$dir/out")" = 3 ] || bad "$mode $how: the programs' output is not theirs: $(cat "$dir/out")"
        grep -q "$foreign" "$dir/err" && bad "$mode $how: the run's own database called foreign"
        cmp -s "$db" "$dir/torn" || bad "$mode $how: the torn database was written"
        [ "$(grep -c "^lockblame: [0-9]* process.* ended without writing .*(\(file is not a database\|database disk image is malformed\)" "$dir/err")" = 1 ] ||
            bad "$mode $how: not one summary line that says the writes failed"
    done
done

echo "== 2. a foreign file at the path: refused, never written"
dir=$tmp/foreign
mkdir "$dir"
echo precious >"$dir/notes.db"
(cd "$dir" && LOCKBLAME_OUTPUT=$dir/notes.db LD_PRELOAD=$LOCKBLAME_LIB "$W" exec >out 2>err) || bad "foreign: the program failed"
sed 's/^/  plain: /' "$dir/err"
[ "$(grep -c '^lockblame:' "$dir/err")" = 1 ] && grep -q "notes.db exists and is $foreign" "$dir/err" ||
    bad "foreign, plain: want one line refusing it"
[ "$(grep -c '^contended' "$dir/out")" = 2 ] || bad "foreign, plain: the program did not run"
rc=0
(cd "$dir" && "$L" run -o notes.db -- "$W" exec >out 2>err) || rc=$?
sed 's/^/  run: /' "$dir/err"
[ $rc = 0 ] && grep -q "notes.db exists and is $foreign" "$dir/err" || bad "foreign, run: rc $rc, or no line refusing it"
# run's default name: the program's pid is 2 in a pid namespace of its own
if unshare -pf --mount-proc true 2>/dev/null; then
    echo precious >"$dir/lockblame.tree_work.2.db"
    rc=0
    (cd "$dir" && unshare -pf --mount-proc "$L" run -- "$W" exec >out 2>err) || rc=$?
    sed 's/^/  run, the default name: /' "$dir/err"
    [ $rc = 0 ] && grep -q "lockblame.tree_work.2.db exists and is $foreign" "$dir/err" ||
        bad "foreign, run's default name: rc $rc, or no line refusing it"
    [ "$(cat "$dir/lockblame.tree_work.2.db")" = precious ] || bad "foreign, run's default name: the file was written"
else
    echo "  (no pid namespace here: run's default name not tried)"
fi
# another run's ledger beside it (a tree killed before its end left it)
head -c 65600 /dev/urandom >"$dir/notes.db-procs"
rc=0
(cd "$dir" && "$L" run -o run.db -- bash -c "LOCKBLAME_OUTPUT=$dir/notes.db '$W' exec" >out 2>err) || rc=$?
sed 's/^/  inside a run: /' "$dir/err"
[ $rc = 0 ] && [ "$(grep -c 'notes.db' "$dir/err")" = 1 ] && grep -q "notes.db exists and is $foreign" "$dir/err" ||
    bad "foreign, inside a run: rc $rc, or not one line refusing it"
[ "$(grep -c '^contended' "$dir/out")" = 2 ] || bad "foreign, inside a run: the program did not run"
[ "$(cat "$dir/notes.db")" = precious ] || bad "foreign: the file was written"

echo "== 3. make -j4 on a full disk"
fs=$tmp/fs
mkdir "$fs"
if ! command -v make >/dev/null; then
    skip_part "make"
elif ! mount -t tmpfs -o size=600k tmpfs "$fs" 2>/dev/null; then
    skip_part "a tmpfs mount (root)"
else
    trap 'umount "$fs" 2>/dev/null; rm -rf "$tmp"' EXIT
    for i in $(seq 1 31); do printf 'int f%d(int x) { return x * %d; }\n' $i $i >"$fs/f$i.c"; done
    printf 'all: $(patsubst %%.c,%%.o,$(wildcard *.c))\n%%.o: %%.c\n\tcc -c $< -o $@\n' >"$fs/Makefile"
    st=0
    (cd "$fs" && LOCKBLAME_OUTPUT=$fs/m.db LD_PRELOAD=$LOCKBLAME_LIB make -j4 >"$tmp/make.out" 2>"$tmp/make.err") || st=$?
    grep '^lockblame:' "$tmp/make.err" | sort | uniq -c | sed 's/^/  /'
    echo "  make's status $st (its compilers meet the full disk too)"
    grep -q "$foreign" "$tmp/make.err" && bad "make: the run's own database called foreign"
fi
finish
