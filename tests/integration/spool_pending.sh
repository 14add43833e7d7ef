#!/usr/bin/env bash
# Pending profiles (common/spool.h): a process whose profile names nothing
# the run's database lacks leaves it in <db>-spool as a record, and the
# next commit (another process's, the tree's root's at its end, run's, or
# the CLI's before it reads) adds it. spool_tree says what it forked, with
# pids and which exec'd; every process it profiles has 3 threads and
# waits on a condition variable (tests/workloads_user/spool_tree.c).
#  1. a tree of 12 children, default and LOCKBLAME_SPOOL=0: the same
#     processes, thread counts and names of the functions on the waits'
#     call paths; no spool left; only the root's summary on stderr. A tree
#     of 24 whose root waits before it ends shows the records there: the
#     children not yet in the database, each a record naming its own pid,
#     and none with LOCKBLAME_SPOOL=0. A child that commits then adds
#     the oldest records, not all. With time windows, and with a root
#     that records nothing, the same processes and no spool left
#  2. the root SIGKILLs itself after its children ended: their records
#     wait in the spool, and a report adds them, lists every child, names
#     the frames on their waits' paths (the children after the first call
#     their episode from later_child, which only the report's merge
#     names), and leaves no record or claim
#  3. a child that ends after the root: it adds its own profile
#  4. a child that execs: both images in run, exec_gen 0 and 1, also in a
#     pid namespace under the host's /proc (where /proc/PID is another
#     process); with the root killed, a report adds the images left
#     pending and names the frames on their waits' paths
#  5. a record that is not a row log: one line, renamed .bad, nothing
#     added; records an earlier build wrote are added, one with another
#     row log magic renamed .bad
#  6. LOCKBLAME_SPOOL=yes: one line, read as 1; the program's output and
#     status its own
#  7. under lockblame run, also with the root killed: every process in
#     the database, the frames on the children's waits' paths named, no
#     spool left
# Where the records are counted, the tree runs with LOCKBLAME_EVENT=none:
# a sample names the address it lands on, so with sampling a child may
# name something new and add its profile (and the pending ones) itself;
# with waits alone the names are the same in every child after the first.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/spool_tree"
command -v sqlite3 >/dev/null || skip "sqlite3"
prog=$WORKLOADS_USER/spool_tree

# tree_pids OUT: the pids a run of spool_tree printed, sorted.
tree_pids() { awk '$1 == "root" { print $2 } $1 == "child" { print $3 }' "$1" | sort -n; }
child_pids() { awk '$1 == "child" { print $3 }' "$1" | sort -n; }
db_pids() { rows "$1" "SELECT pid FROM run ORDER BY pid"; }
# records DB [SUFFIX]: the spool's file names ending in SUFFIX (the run's
# log, .lblog, and pending files: sealed logs, .lbframes, and records of
# an earlier build, .lbrec).
records() { ls -1 "$1-spool" 2>/dev/null | grep -E "${2:-\.(lbrec|lbframes|lblog)}\$" || true; }
# magic NAME: the row log magic src/common/rowlog.h defines as NAME
# (LB_ROWLOG_MAGIC, this build's; LB_ROWLOG_MAGIC_BEFORE, the one before).
magic() { sed -nE "s/^#define $1 +\"([^\"]+)\"\$/\1/p" "$ROOT/src/common/rowlog.h"; }
MAGIC=$(magic LB_ROWLOG_MAGIC)
MAGIC_BEFORE=$(magic LB_ROWLOG_MAGIC_BEFORE)
[ ${#MAGIC} = 7 ] && [ ${#MAGIC_BEFORE} = 7 ] || fail "no row log magic in src/common/rowlog.h"
# the schema version src/common/schema.h defines: a row log's header holds it
SCHEMA=$(sed -nE 's/^#define LB_SCHEMA_VERSION +([0-9]+)$/\1/p' "$ROOT/src/common/schema.h")
[ -n "$SCHEMA" ] || fail "no LB_SCHEMA_VERSION in src/common/schema.h"
# pending_runs DB: "pid threads run_key" of the run row of each record
# pending in the spool, oldest first. The run's log and the sealed logs
# hold frames (src/common/spool.h): a 24-byte header ("LBFRAME1", the
# length, a checksum), then a row log; a .lbrec file, as an earlier build
# wrote them, is one row log whole. A row log's layout (src/common/rowlog.h):
# a 16-byte header, $MAGIC and a 0 byte, the schema version, 0; rows of a
# kind byte, then (index, type, value) until a 0 index. The run row is
# kind 8; its parameters 3, 11 and 17 are pid, threads and run_key.
pending_runs() {
    python3 - "$1-spool" "$MAGIC" <<'PY'
import os, struct, sys
spool, magic = sys.argv[1], sys.argv[2].encode() + b'\0'
def runs(b):
    assert b[:8] == magic, 'not a row log of this build'
    p, found = 16, []
    while p < len(b):
        kind, p, vals = b[p], p + 1, {}
        while True:
            i, p = b[p], p + 1
            if i == 0:
                break
            t, p = b[p], p + 1
            if t in (1, 2):
                vals[i] = struct.unpack_from('<q' if t == 1 else '<d', b, p)[0]
                p += 8
            else:
                n = struct.unpack_from('<I', b, p)[0]
                vals[i] = b[p + 4:p + 4 + n].decode()
                p += 4 + n
        if kind == 8:
            found.append('%s %s %s' % (vals.get(3), vals.get(11), vals.get(17)))
    return found or ['?']
names = os.listdir(spool) if os.path.isdir(spool) else []
# pending files by name (their time), the open log last
names = sorted((n for n in names if n.endswith(('.lbrec', '.lbframes', '.lblog'))), key=lambda n: (n.endswith('.lblog'), n))
out = []
for name in names:
    b = open(os.path.join(spool, name), 'rb').read()
    if name.endswith('.lbrec'):
        out += runs(b)
        continue
    p = 0
    while p < len(b):
        assert b[p:p + 8] == b'LBFRAME1', 'a damaged frame in ' + name
        n = struct.unpack_from('<Q', b, p + 8)[0]
        out += runs(b[p + 24:p + 24 + n])
        p += 24 + n
print('\n'.join(out))
PY
}
# record_pids DB: the pids of the records pending, sorted.
record_pids() { pending_runs "$1" | awk '{ print $1 }' | sort -n; }
joined() { tr '\n' ' ' | sed 's/ $//'; }
# sigkilled ERR CMD...: run CMD (stderr to ERR), which dies of a signal,
# without the shell's line about it; its status in st.
sigkilled() {
    local err=$1
    shift
    { "$@" 2>"$err"; } 2>/dev/null && st=0 || st=$?
}

# no_spool NAME DB: nothing of the spool left, not even its directory.
no_spool() {
    [ ! -e "$2-spool" ] || bad "$1: $2-spool left: $(ls -A "$2-spool" | joined)"
}

# waits_named NAME DB PID...: the merge named each process's waits' paths:
# they hold episode and waiter, and every frame of spool_tree on them
# has a function.
waits_named() {
    local name=$1 db=$2 pid functions unnamed
    shift 2
    [ $# -gt 0 ] || bad "$name: no process to look at"
    for pid in "$@"; do
        functions=$(waits_functions "$db" "$pid")
        [[ " $functions " == *" episode "* && " $functions " == *" waiter "* ]] ||
            bad "$name: process $pid's waits' paths lack episode or waiter: '$functions'"
        unnamed=$(rows "$db" "$(path_nodes "r.pid = $pid AND m.wait_s > 0")
            SELECT COUNT(*) || coalesce(': ' || group_concat(f.offset, ' '), '') FROM n
              JOIN node ON node.id = n.id JOIN frame f ON f.id = node.frame_id
              JOIN module mo ON mo.id = f.module_id
            WHERE mo.path LIKE '%/spool_tree' AND f.function IS NULL")
        [ "$unnamed" = 0 ] || bad "$name: process $pid: frames of spool_tree without a function on its waits' paths: $unnamed"
    done
}

# tree_holds NAME DB OUT: the database holds each process OUT names once,
# exec_gen 0, with its 3 threads (run.threads and thread rows), and no other.
tree_holds() {
    local name=$1 db=$2 out=$3
    local want; want=$(tree_pids "$out" | joined)
    local got; got=$(db_pids "$db" | joined)
    [ -n "$want" ] && [ "$got" = "$want" ] || bad "$name: run's pids '$got', the tree's '$want'"
    local wrong; wrong=$(rows "$db" "SELECT group_concat(pid, ' ') FROM run r WHERE exec_gen != 0
        OR threads != 3 OR (SELECT COUNT(*) FROM thread t WHERE t.run_id = r.id) != 3")
    [ -z "$wrong" ] || bad "$name: processes without exec_gen 0 and 3 threads: $wrong"
}

echo "== 1. a tree of 12 children, 3 at a time: spooling on and off"
for mode in on off; do
    spool=(); [ $mode = off ] && spool=(LOCKBLAME_SPOOL=0)
    env "${spool[@]}" LOCKBLAME_OUTPUT="$tmp/$mode.db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$prog" tree 12 3 0 >"$tmp/$mode.out" 2>"$tmp/$mode.err" ||
        fail "$mode: spool_tree exited $?: $(cat "$tmp/$mode.err")"
    echo "  $mode: $(grep -c . "$tmp/$mode.out") processes, $(rows "$tmp/$mode.db" "SELECT COUNT(*) FROM run") run rows"
    [ "$(child_pids "$tmp/$mode.out" | wc -l)" = 12 ] || bad "$mode: spool_tree did not fork 12 children"
    tree_holds "$mode" "$tmp/$mode.db" "$tmp/$mode.out"
    no_spool "$mode" "$tmp/$mode.db"
    tree_summary_only "$mode" "$tmp/$mode.err" 13
done
# the same functions on each process's wait paths, process by process
declare -A on_pid off_pid
while read -r _ i pid _; do on_pid[$i]=$pid; done < <(grep '^child ' "$tmp/on.out")
while read -r _ i pid _; do off_pid[$i]=$pid; done < <(grep '^child ' "$tmp/off.out")
on_pid[root]=$(awk '$1 == "root" { print $2 }' "$tmp/on.out")
off_pid[root]=$(awk '$1 == "root" { print $2 }' "$tmp/off.out")
for i in "${!on_pid[@]}"; do
    a=$(waits_functions "$tmp/on.db" "${on_pid[$i]}")
    b=$(waits_functions "$tmp/off.db" "${off_pid[$i]:-0}")
    [ "$a" = "$b" ] || bad "process $i: functions on its waits' paths '$a', with LOCKBLAME_SPOOL=0 '$b'"
    [[ " $a " == *" episode "* && " $a " == *" waiter "* ]] ||
        bad "process $i: its waits' paths lack episode or waiter: '$a'"
done
echo "  child 0's waits' functions: $(waits_functions "$tmp/on.db" "${on_pid[0]}")"

echo "== 1. a tree of 24 children whose root waits before it ends"
for mode in on off; do
    db=$tmp/gate-$mode.db gate=$tmp/gate-$mode
    spool=(); [ $mode = off ] && spool=(LOCKBLAME_SPOOL=0)
    env "${spool[@]}" LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$prog" tree 24 1 0 "$gate" >"$tmp/gate-$mode.out" 2>"$tmp/gate-$mode.err" &
    root=$!
    while [ ! -e "$gate.ready" ] && kill -0 $root 2>/dev/null; do sleep 0.05; done
    [ -e "$gate.ready" ] || fail "$mode: spool_tree ended before its gate: $(cat "$tmp/gate-$mode.err")"
    children=$(child_pids "$tmp/gate-$mode.out" | joined)
    spooled=$(record_pids "$db" | joined)
    committed=$(db_pids "$db" | joined)
    both=$(printf '%s\n' $spooled $committed | sort -n | joined)
    echo "  $mode, before the root ends: $(wc -w <<<"$committed") children in the database, $(wc -w <<<"$spooled") records"
    [ "$both" = "$children" ] ||
        bad "$mode: the records' pids ($spooled) and the database's ($committed) are not the children ($children) once each"
    if [ $mode = on ]; then
        [ -n "$spooled" ] || bad "on: no child left its profile pending"
        key=$(rows "$db" "SELECT run_key FROM run LIMIT 1")
        for r in $(records "$db"); do
            [[ $r =~ ^${key//./\\.}(\.[0-9]{20}\.[0-9]+\.lbframes|\.lblog)$ ]] ||
                bad "on: pending file '$r' is not named <run key $key>.lblog or <run key>.<20 digits>.<pid>.lbframes"
        done
        while read -r pid threads run_key; do
            [ "$threads $run_key" = "3 $key" ] ||
                bad "on: the record of $pid holds run rows '$pid $threads $run_key', not 3 threads and the run key"
        done < <(pending_runs "$db")
    else
        [ -z "$(records "$db")" ] || bad "off: records with LOCKBLAME_SPOOL=0: $(records "$db" | joined)"
    fi
    touch "$gate"
    wait $root || bad "$mode: spool_tree exited $?"
    tree_holds "$mode, after the root" "$db" "$tmp/gate-$mode.out"
    if [ $mode = on ] && [ -n "$spooled" ]; then
        # oldest first: the children ended one after another, in the order they printed
        ended=$(awk '$1 == "child" { print $3 }' "$tmp/gate-$mode.out" |
            { grep -Fx -f <(tr ' ' '\n' <<<"$spooled") || true; } | joined)
        added=$(rows "$db" "SELECT pid FROM run WHERE pid IN (${spooled// /,}) ORDER BY id" | joined)
        [ "$added" = "$ended" ] || bad "on: the pending profiles were added in the order '$added', the children ended '$ended'"
    fi
    no_spool "$mode, after the root" "$db"
    tree_summary_only "$mode, gated" "$tmp/gate-$mode.err" 25
done

echo "== 1. a child that commits after 39 pending profiles adds the oldest, not all"
db=$tmp/cap.db gate=$tmp/cap
LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$prog" cap 40 "$gate" \
    >"$tmp/cap.out" 2>"$tmp/cap.err" &
root=$!
while [ ! -e "$gate.ready" ] && kill -0 $root 2>/dev/null; do sleep 0.05; done
[ -e "$gate.ready" ] || fail "cap: spool_tree ended before its gate: $(cat "$tmp/cap.err")"
namer=$(awk '$1 == "namer" { print $2 }' "$tmp/cap.out")
# the children in the order they ended, the first (which named all) left out
later=$(awk '$1 == "child" && $2 > 0 { print $3 }' "$tmp/cap.out" | joined)
added=$(awk '$1 == "child" && $2 > 0 { print $3 }' "$tmp/cap.out" |
    { grep -Fx -f <(db_pids "$db") || true; } | joined)
left=$(record_pids "$db" | { grep -Fx -f <(tr ' ' '\n' <<<"$later") || true; } | joined)
left_ordered=$(tr ' ' '\n' <<<"$later" | { grep -Fx -f <(tr ' ' '\n' <<<"$left") || true; } | joined)
echo "  the namer added $(wc -w <<<"$added") of $(wc -w <<<"$later") pending; $(wc -w <<<"$left") left"
[ -n "$namer" ] && grep -qx "$namer" <(db_pids "$db") || bad "cap: the namer ($namer) is not in the database"
[ -n "$left" ] && [ "$(echo $added $left_ordered)" = "$later" ] ||
    bad "cap: the namer added '$added' and left '$left_ordered', not the oldest of '$later' and not all"
touch "$gate"
wait $root || bad "cap: spool_tree exited $?"
[ "$(db_pids "$db" | joined)" = "$( (tree_pids "$tmp/cap.out"; echo "$namer") | sort -n | joined)" ] ||
    bad "cap: after the root, run's pids are '$(db_pids "$db" | joined)'"
no_spool cap "$db"

echo "== 1. time windows every 20 ms: a window's commit adds what is pending"
db=$tmp/windows.db
LOCKBLAME_INTERVAL=20ms LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$prog" tree 12 3 0 \
    >"$tmp/windows.out" 2>"$tmp/windows.err" || bad "windows: spool_tree exited $?: $(cat "$tmp/windows.err")"
[ "$(db_pids "$db" | joined)" = "$(tree_pids "$tmp/windows.out" | joined)" ] ||
    bad "windows: run's pids '$(db_pids "$db" | joined)', the tree's '$(tree_pids "$tmp/windows.out" | joined)'"
echo "  windows: $(rows "$db" "SELECT COUNT(*) FROM run") processes, windows of $(rows "$db" "SELECT COUNT(DISTINCT pid) FROM time_window")"
no_spool windows "$db"
grep -q '^lockblame: 13 processes profiled; ' "$tmp/windows.err" ||
    bad "windows: the root's summary does not count 13 processes: $(head -c 600 "$tmp/windows.err")"

echo "== 1. a root that records nothing adds its 8 children's records"
db=$tmp/bare.db
LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$prog" bare 8 >"$tmp/bare.out" \
    2>"$tmp/bare.err" || bad "bare: spool_tree exited $?: $(cat "$tmp/bare.err")"
children=$(child_pids "$tmp/bare.out" | joined)
[ "$(wc -w <<<"$children")" = 8 ] || bad "bare: spool_tree did not fork 8 children"
[ "$(db_pids "$db" | joined)" = "$children" ] ||
    bad "bare: run's pids '$(db_pids "$db" | joined)', the children '$children'"
no_spool bare "$db"
tree_summary_only bare "$tmp/bare.err" 8

echo "== 2. the root killed after its 12 children ended"
db=$tmp/killed.db
sigkilled "$tmp/killed.err" env LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
    "$prog" killed 12 >"$tmp/killed.out"
[ $st = 137 ] || bad "killed: spool_tree exited $st, not 137 (SIGKILL)"
children=$(child_pids "$tmp/killed.out" | joined)
spooled=$(record_pids "$db" | joined)
committed=$(db_pids "$db" | joined)
echo "  $(wc -w <<<"$committed") children in the database, $(wc -w <<<"$spooled") records"
[ -f "$db" ] || bad "killed: no database: no child added its profile"
[ -n "$spooled" ] || bad "killed: no record in the spool"
[ "$(printf '%s\n' $spooled $committed | sort -n | joined)" = "$children" ] ||
    bad "killed: the records' pids ($spooled) and the database's ($committed) are not the children ($children) once each"
"$LOCKBLAME_CLI" report --by-process "$db" >"$tmp/killed.report" 2>"$tmp/killed.report.err" ||
    bad "killed: lockblame report --by-process exited $?: $(cat "$tmp/killed.report.err")"
[ ! -s "$tmp/killed.report.err" ] || bad "killed: the report said $(cat "$tmp/killed.report.err")"
for pid in $children; do
    grep -qE "^ *$pid +[0-9]+ +0 +3 " "$tmp/killed.report" ||
        bad "killed: the report lists no row of child $pid (3 threads, exec 0)"
done
[ -z "$(records "$db" '\.(lbrec|lbframes|lblog|claim)')" ] ||
    bad "killed: left after the report: $(records "$db" '\.(lbrec|lbframes|lblog|claim)' | joined)"
[ "$(db_pids "$db" | joined)" = "$children" ] ||
    bad "killed: after the report run's pids are '$(db_pids "$db" | joined)', the children '$children'"
# an empty spool left behind (its root killed once the last record was
# added) goes with the next report
mkdir -p "$db-spool"
"$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>&1 || bad "killed: a second report exited $?"
no_spool "killed, an empty spool" "$db"
waits_named killed "$db" $children
for pid in $(awk '$1 == "child" && $2 > 0 { print $3 }' "$tmp/killed.out"); do
    [[ " $(waits_functions "$db" "$pid") " == *" later_child "* ]] ||
        bad "killed: child $pid's waits' paths lack later_child: '$(waits_functions "$db" "$pid")'"
done
echo "  a pending child's waits' functions: $(waits_functions "$db" "${spooled%% *}")"

echo "== 1. children with a small file size limit (RLIMIT_FSIZE)"
# a log of many records outgrows a limit that one record stays within: a
# record that would take it past the limit goes to a new log, and no
# process is ended by SIGXFSZ
db=$tmp/fsize.db
SPOOL_TREE_FSIZE=30000 LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
    "$prog" tree 40 1 0 >"$tmp/fsize.out" 2>"$tmp/fsize.err" ||
    bad "fsize: spool_tree exited $?: $(head -c 600 "$tmp/fsize.err")"
tree_holds fsize "$db" "$tmp/fsize.out"
no_spool fsize "$db"
tree_summary_only fsize "$tmp/fsize.err" 41
echo "  $(rows "$db" "SELECT COUNT(*) FROM run") processes in the database"

echo "== 2. a write to the log cut short"
# the first frame of the log cut to half its record (a writer killed, or
# the disk full, inside its write): the report adds the records after it,
# says so in one line and keeps the log as .bad
db=$tmp/torn.db
sigkilled "$tmp/torn.err" env LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
    "$prog" killed 6 >"$tmp/torn.out"
key=$(rows "$db" "SELECT run_key FROM run LIMIT 1")
log=$db-spool/$key.lblog
spooled=$(record_pids "$db" | joined)
torn=$(pending_runs "$db" | awk 'NR == 1 { print $1 }')
if [ ! -f "$log" ] || [ "$(wc -w <<<"$spooled")" -lt 2 ]; then
    bad "torn: the log holds no two records to cut (spool: $(ls -A "$db-spool" 2>/dev/null | joined))"
else
    python3 - "$log" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
n = struct.unpack_from('<Q', b, 8)[0]
open(sys.argv[1], 'wb').write(b[:24 + n // 2] + b[24 + n:])
PY
    "$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>"$tmp/torn.report.err" ||
        bad "torn: report exited $?"
    grep -q "^lockblame: 1 pending profile(s) of .* could not be read; kept as \*.bad" "$tmp/torn.report.err" &&
        [ "$(grep -c . "$tmp/torn.report.err")" = 1 ] ||
        bad "torn: the report said '$(cat "$tmp/torn.report.err")', not one line for one record"
    want=$(child_pids "$tmp/torn.out" | grep -vx "$torn" | joined)
    [ "$(db_pids "$db" | joined)" = "$want" ] ||
        bad "torn: run's pids '$(db_pids "$db" | joined)', want every child but $torn: '$want'"
    [ "$(ls -A "$db-spool" | joined)" = "$(basename "$(ls "$db-spool"/*.bad)")" ] &&
        [[ $(ls -A "$db-spool") == "$key".*.lbframes.bad ]] ||
        bad "torn: the spool holds '$(ls -A "$db-spool" | joined)', not the log kept as .bad"
    echo "  $(wc -w <<<"$spooled") records, the first cut: $(db_pids "$db" | wc -l) children in the database"
fi

echo "== 3. a child that ends after the root"
db=$tmp/late.db
# the pipe ends when the child does: it holds the write end
# late_holds NAME DB OUT: the root, its 3 children and the late child, once each
late_holds() {
    local name=$1 db=$2 out=$3
    local late; late=$(awk '$1 == "late" { print $3 }' "$out")
    [ -n "$late" ] || { bad "$name: no late child said it ended: '$(cat "$out")'"; return; }
    local want; want=$( (tree_pids "$out"; echo "$late") | sort -n | joined)
    local got; got=$(db_pids "$db" | joined)
    echo "  $name: run's pids $got; the late child $late"
    [ "$got" = "$want" ] || bad "$name: run's pids '$got', the tree's '$want' (the late child $late)"
    [ -z "$(records "$db" '\.(lbrec|lbframes|lblog|claim)')" ] || bad "$name: left: $(records "$db" '\.(lbrec|lbframes|lblog|claim)' | joined)"
}
LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$prog" late 2>"$tmp/late.err" |
    cat >"$tmp/late.out" || bad "late: spool_tree exited non-zero"
late_holds late "$db" "$tmp/late.out"
tree_summary_only late "$tmp/late.err" 4

echo "== 4. children that exec the program again"
# exec_holds NAME DB OUT COMMAND: each child once, an exec'd one twice:
# exec_gen 0 with the root's COMMAND and 1 with the image's; nothing else
exec_holds() {
    local name=$1 db=$2 out=$3 command=$4 n=0 execs=0 i pid how want got
    while read -r _ i pid how; do
        n=$((n + 1))
        want="0 $command"
        if [ "$how" = exec ]; then
            execs=$((execs + 1))
            grep -q "^image1 $pid\$" "$out" || bad "$name: child $i ($pid) exec'd but its image did not say so"
            want="0 $command,1 spool_tree image1"
        fi
        got=$(rows "$db" "SELECT group_concat(exec_gen || ' ' || command, ',') FROM
            (SELECT exec_gen, command FROM run WHERE pid = $pid ORDER BY exec_gen)")
        got=${got//$prog/spool_tree}
        [ "$got" = "$want" ] || bad "$name: child $i ($pid, $how): run rows '$got', not '$want'"
    done < <(grep '^child ' "$out")
    [ $n = 8 ] && [ $execs = 4 ] || bad "$name: $n children, $execs exec'd, not 8 and 4"
    local rows_all; rows_all=$(rows "$db" "SELECT COUNT(*) FROM run WHERE pid IN ($(child_pids "$out" | tr '\n' ',')0)")
    [ "$rows_all" = $((n + execs)) ] || bad "$name: $rows_all run rows of the children, not $((n + execs))"
    echo "  $name: $rows_all run rows of the children, $(rows "$db" "SELECT COUNT(*) FROM run WHERE exec_gen = 1") of exec'd images"
}
db=$tmp/exec.db
LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$db LD_PRELOAD=$LOCKBLAME_LIB "$prog" exec 8 >"$tmp/exec.out" \
    2>"$tmp/exec.err" || bad "exec: spool_tree exited $?: $(cat "$tmp/exec.err")"
exec_holds exec "$db" "$tmp/exec.out" "spool_tree exec 8"
[ "$(rows "$db" "SELECT COUNT(*) FROM run")" = 13 ] || bad "exec: not 13 run rows (the root's too)"
no_spool exec "$db"
# In a pid namespace with the host's /proc (unshare without --mount-proc)
# /proc/PID is another process: a child's start is then what its exec'd
# image reads there too, not the one its fork gave it, so that its two
# images stay one process (util/proc_numbers.h).
if unshare --pid --fork true 2>/dev/null; then
    db=$tmp/exec-ns.db
    LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT=$db unshare --pid --fork \
        env LD_PRELOAD="$LOCKBLAME_LIB" "$prog" exec 8 >"$tmp/exec-ns.out" 2>"$tmp/exec-ns.err" ||
        bad "exec in a pid namespace: spool_tree exited $?: $(cat "$tmp/exec-ns.err")"
    exec_holds "exec in a pid namespace" "$db" "$tmp/exec-ns.out" "spool_tree exec 8"
else
    skip_part "a pid namespace (unshare --pid --fork is refused here)"
fi
# the root killed: the exec'd images left pending get their generation
# when a report adds them
db=$tmp/exec-killed.db
sigkilled "$tmp/exec-killed.err" env LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
    "$prog" exec 8 kill >"$tmp/exec-killed.out"
[ $st = 137 ] || bad "exec, killed: spool_tree exited $st, not 137"
images=$(awk '$1 == "image1" { print $2 }' "$tmp/exec-killed.out" | sort -n | joined)
pending_images=$(record_pids "$db" | grep -Fx -f <(tr ' ' '\n' <<<"$images") || true)
echo "  root killed: exec'd images pending: $(wc -w <<<"$pending_images") of $(wc -w <<<"$images")"
[ -n "$pending_images" ] || bad "exec, killed: no exec'd image left its profile pending"
"$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>"$tmp/exec-killed.report.err" ||
    bad "exec, killed: report exited $?: $(cat "$tmp/exec-killed.report.err")"
exec_holds "exec, killed" "$db" "$tmp/exec-killed.out" "spool_tree exec 8 kill"
waits_named "exec, killed" "$db" $images
[ -z "$(records "$db" '\.(lbrec|lbframes|lblog|claim)')" ] || bad "exec, killed: left: $(records "$db" '\.(lbrec|lbframes|lblog|claim)' | joined)"

echo "== 5. a record that is not a row log"
db=$tmp/on.db
key=$(rows "$db" "SELECT run_key FROM run LIMIT 1")
before=$(rows "$db" "SELECT COUNT(*) FROM run")
mkdir "$db-spool"
junk=$key.00000000000000000001.$$.lbrec
for i in $(seq 64); do printf 'not a lockblame profile\n'; done >"$db-spool/$junk"
"$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>"$tmp/junk.err" || bad "junk: report exited $?"
echo "  report: $(cat "$tmp/junk.err")"
[ "$(grep -c . "$tmp/junk.err")" = 1 ] && grep -q '^lockblame' "$tmp/junk.err" ||
    bad "junk: the report said '$(cat "$tmp/junk.err")', not one lockblame line"
[ -f "$db-spool/$junk.bad" ] && [ ! -e "$db-spool/$junk" ] ||
    bad "junk: the spool holds '$(ls -A "$db-spool" | joined)', not $junk.bad"
[ "$(rows "$db" "SELECT COUNT(*) FROM run")" = "$before" ] ||
    bad "junk: $(rows "$db" "SELECT COUNT(*) FROM run") run rows after the report, $before before"
"$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>"$tmp/junk2.err" || bad "junk: second report exited $?"
[ ! -s "$tmp/junk2.err" ] || bad "junk: the second report said '$(cat "$tmp/junk2.err")'"

echo "== 5. records an earlier build wrote (an SQLite file, a row log), then a row log"
# A run that a library upgrade splits leaves records of the earlier
# formats: one SQLite file of the profile's tables, or a row log with the
# magic before this build's. All are added, in name order in one batch. A
# row log with another magic (a later build's) is renamed .bad: a merger
# that would not know what such a log leaves to it keeps it out.
old=$key.00000000000000000002.999991.lbrec
for t in meta run module frame node thread metric site sync_object object_blame structural_wait \
    symbol module_function; do
    rows "$db" "SELECT sql || ';' FROM sqlite_master WHERE type = 'table' AND name = '$t'"
done >"$tmp/profile.sql"
sqlite3 "$db-spool/$old" <"$tmp/profile.sql" || bad "old: cannot make the SQLite record"
sqlite3 "$db-spool/$old" "INSERT INTO meta VALUES('schema_version', '$SCHEMA');
    INSERT INTO run(id, command, executable, pid, exit_reason, exec_gen, proc_start, run_key,
                    start_unix, duration_s, threads) VALUES(1, 'old', '/old', 999991, 'exit', 0, 1,
                    '$key', 1.0, 0.5, 1);
    INSERT INTO thread(id, tid, run_id, start_s, end_s, cpu_s) VALUES(1, 999991, 1, 0, 0.5, 0.1)" ||
    bad "old: cannot fill the SQLite record"
# forge_log FILE PID COMMAND MAGIC: a row log of a run row (kind 8:
# command, pid, start_unix, duration_s, threads, run_key) and the
# schema_version meta row (kind 13), sealed, with MAGIC
forge_log() {
    python3 - "$1" "$key" "$2" "$3" "$4" "$SCHEMA" <<'PY'
import struct, sys
path, key, pid, command, magic, schema = sys.argv[1:]
def value(i, v):
    if isinstance(v, int):
        return bytes([i, 1]) + struct.pack('<q', v)
    if isinstance(v, float):
        return bytes([i, 2]) + struct.pack('<d', v)
    b = v.encode()
    return bytes([i, 3]) + struct.pack('<I', len(b)) + b
def row(kind, vals):
    return bytes([kind]) + b''.join(value(i, v) for i, v in vals) + b'\0'
body = row(8, [(1, command), (3, int(pid)), (9, 2.0), (10, 0.5), (11, 1), (17, key)])
body += row(13, [(1, 'schema_version'), (2, schema)])
n = 16 + len(body)
open(path, 'wb').write(magic.encode() + b'\0' + struct.pack('<II', int(schema), n) + body)
PY
}
before_log=$key.00000000000000000003.999992.lbrec
new_log=$key.00000000000000000004.999993.lbrec
other_log=$key.00000000000000000005.999994.lbrec
forge_log "$db-spool/$before_log" 999992 before "$MAGIC_BEFORE"
forge_log "$db-spool/$new_log" 999993 new "$MAGIC"
forge_log "$db-spool/$other_log" 999994 other "${MAGIC%?}9"
"$LOCKBLAME_CLI" report --by-process "$db" >/dev/null 2>"$tmp/old.err" || bad "old: report exited $?"
[ "$(wc -l <"$tmp/old.err")" = 1 ] && grep -q "^lockblame: 1 pending profile(s) of $db could not be read" "$tmp/old.err" ||
    bad "old: the report did not say in one line that one record could not be read: '$(cat "$tmp/old.err")'"
got=$(rows "$db" "SELECT group_concat(pid || ':' || command, ' ') FROM (SELECT pid, command FROM run
    WHERE pid BETWEEN 999991 AND 999994 ORDER BY pid)")
echo "  added: $got"
[ "$got" = "999991:old 999992:before 999993:new" ] ||
    bad "old: the run holds '$got', not the processes of the records of this build and the earlier ones"
[ "$(ls -A "$db-spool" 2>/dev/null | joined)" = "$junk.bad $other_log.bad" ] ||
    bad "old: the spool holds '$(ls -A "$db-spool" | joined)', not the other magic's record and the junk, renamed .bad"

echo "== 6. LOCKBLAME_SPOOL=yes"
"$prog" tree 4 1 7 >"$tmp/plain.out" 2>"$tmp/plain.err" && st=0 || st=$?
LOCKBLAME_SPOOL=yes LOCKBLAME_OUTPUT=$tmp/yes.db LD_PRELOAD=$LOCKBLAME_LIB \
    "$prog" tree 4 1 7 >"$tmp/yes.out" 2>"$tmp/yes.err" && st_yes=0 || st_yes=$?
[ $st = 7 ] && [ $st_yes = 7 ] || bad "yes: spool_tree exited $st_yes, and $st unprofiled, not 7"
shape() { sed -E 's/[0-9]+( plain)?$/PID\1/' "$1" | sort; }
[ "$(shape "$tmp/yes.out")" = "$(shape "$tmp/plain.out")" ] ||
    bad "yes: the program printed '$(shape "$tmp/yes.out" | joined)', unprofiled '$(shape "$tmp/plain.out" | joined)'"
[ "$(grep -c LOCKBLAME_SPOOL "$tmp/yes.err")" = 1 ] && grep -q '^lockblame: LOCKBLAME_SPOOL' "$tmp/yes.err" ||
    bad "yes: stderr has not one lockblame line naming LOCKBLAME_SPOOL: $(cat "$tmp/yes.err")"
grep -v LOCKBLAME_SPOOL "$tmp/yes.err" >"$tmp/yes.rest"
tree_summary_only yes "$tmp/yes.rest" 5
tree_holds yes "$tmp/yes.db" "$tmp/yes.out"
# read as 1: a killed root's children leave records
sigkilled "$tmp/yes-killed.err" env LOCKBLAME_SPOOL=yes LOCKBLAME_EVENT=none \
    LOCKBLAME_OUTPUT="$tmp/yes-killed.db" LD_PRELOAD="$LOCKBLAME_LIB" "$prog" killed 8 >"$tmp/yes-killed.out"
[ $st = 137 ] && [ "$(grep -c . "$tmp/yes-killed.err")" = 1 ] && grep -q '^lockblame: LOCKBLAME_SPOOL' "$tmp/yes-killed.err" ||
    bad "yes, killed: exited $st (not 137), said '$(cat "$tmp/yes-killed.err")'"
echo "  killed root: $(records "$tmp/yes-killed.db" | wc -l) records"
[ -n "$(records "$tmp/yes-killed.db")" ] || bad "yes: a killed root's children left no record"
# and 0 is off: each child adds its own
sigkilled "$tmp/off-killed.err" env LOCKBLAME_SPOOL=0 LOCKBLAME_EVENT=none \
    LOCKBLAME_OUTPUT="$tmp/off-killed.db" LD_PRELOAD="$LOCKBLAME_LIB" "$prog" killed 8 >"$tmp/off-killed.out"
[ $st = 137 ] || bad "off, killed: spool_tree exited $st, not 137"
[ -z "$(records "$tmp/off-killed.db")" ] && [ "$(db_pids "$tmp/off-killed.db" | joined)" = "$(child_pids "$tmp/off-killed.out" | joined)" ] ||
    bad "off: a killed root's children with LOCKBLAME_SPOOL=0: records '$(records "$tmp/off-killed.db" | joined)', run's pids '$(db_pids "$tmp/off-killed.db" | joined)'"

echo "== 7. under lockblame run"
LOCKBLAME_EVENT=none "$LOCKBLAME_CLI" run -o "$tmp/run.db" -- "$prog" tree 8 2 0 >"$tmp/run.out" 2>"$tmp/run.err" ||
    bad "run: exited $?: $(cat "$tmp/run.err")"
tree_holds run "$tmp/run.db" "$tmp/run.out"
waits_named run "$tmp/run.db" $(child_pids "$tmp/run.out")
no_spool run "$tmp/run.db"
sigkilled "$tmp/run-killed.err" env LOCKBLAME_EVENT=none "$LOCKBLAME_CLI" run -o "$tmp/run-killed.db" -- \
    "$prog" killed 8 >"$tmp/run-killed.out"
[ $st = 137 ] || bad "run, killed: exited $st, not 137"
[ "$(db_pids "$tmp/run-killed.db" | joined)" = "$(child_pids "$tmp/run-killed.out" | joined)" ] ||
    bad "run, killed: run's pids '$(db_pids "$tmp/run-killed.db" | joined)', the children '$(child_pids "$tmp/run-killed.out" | joined)'"
waits_named "run, killed" "$tmp/run-killed.db" $(child_pids "$tmp/run-killed.out")
no_spool "run, killed" "$tmp/run-killed.db"
LOCKBLAME_EVENT=none "$LOCKBLAME_CLI" run -o "$tmp/run-late.db" -- "$prog" late 2>"$tmp/run-late.err" |
    cat >"$tmp/run-late.out" || bad "run, late: exited non-zero: $(cat "$tmp/run-late.err")"
late_holds "run, late" "$tmp/run-late.db" "$tmp/run-late.out"
echo "  run: $(rows "$tmp/run.db" "SELECT COUNT(*) FROM run") processes; root killed: $(rows "$tmp/run-killed.db" "SELECT COUNT(*) FROM run")"
finish
