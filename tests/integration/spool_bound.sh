#!/usr/bin/env bash
# The bound on a run's pending profiles (report/writer/spool_bound.h):
# spool_cap forks 60 children one after another, each recording one
# contended mutex wait from wait_for_holder, and counts the records in
# <db>-spool before each fork (tests/workloads_user/spool_cap.c).
#  1. LOCKBLAME_SPOOL_MAX=8, under plain LD_PRELOAD and under lockblame
#     run: the spool never holds more than 16 records, and fills up again
#     after a commit that emptied it (commits are one per bound's worth of
#     exits, not one per exit); the database holds the root and every
#     child once, each with its wait, no frame left unnamed (line < 0),
#     and wait_for_holder on every process's waits' paths; no spool left
#  2. LOCKBLAME_SPOOL_MAX=0 (no bound): the spool holds more than 16
#  3. a bad LOCKBLAME_SPOOL_MAX: one lockblame: line, the default bound
#     (not a prefix's number), the program's output and status its own
# The slack: a process takes the duty to commit once the ledger's count
# of pending records reaches the bound, and the others go on spooling
# while it commits, so in general the spool exceeds the bound by the
# records of processes that end during one capped commit (and by records
# the count has not caught up with: written but not yet counted, or being
# taken by another commit). Here children end one at a time, so the spool
# holds at most the bound; the check allows twice the bound, which an
# ignored bound exceeds after 16 children. The tree runs with
# LOCKBLAME_EVENT=none: a sample names the address it lands on, so a child
# may name something new and commit itself (a commit that is not the
# bound's).
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$WORKLOADS_USER/spool_cap" "$WORKLOADS_USER/spool_tree"
command -v sqlite3 >/dev/null || skip "sqlite3"
prog=$WORKLOADS_USER/spool_cap
N=60 MAX=8 SLACK=16

joined() { tr '\n' ' ' | sed 's/ $//'; }
# counted OUT WHAT: what spool_cap printed on its WHAT line.
counted() { awk -v w="$2" '$1 == w { $1 = ""; sub(/^ /, ""); print }' "$1"; }
# refills COUNTS: the times the spool's count fell and had been at least
# half the bound before it fell (a capped commit, after the spool filled).
refills() {
    awk -v half=$((MAX / 2)) '{ for (i = 2; i <= NF; i++) if ($i < $(i - 1) && $(i - 1) >= half) n++ }
        END { print n + 0 }' <<<"$1"
}

# spool_cap_run NAME MODE SPOOL_MAX: run spool_cap N with LOCKBLAME_SPOOL_MAX
# under MODE (preload or run) into $tmp/NAME.{db,out,err}.
spool_cap_run() {
    local name=$1 mode=$2 max=$3 db=$tmp/$1.db
    if [ "$mode" = preload ]; then
        env LOCKBLAME_SPOOL_MAX="$max" LOCKBLAME_EVENT=none LOCKBLAME_OUTPUT="$db" \
            LD_PRELOAD="$LOCKBLAME_LIB" "$prog" $N >"$tmp/$name.out" 2>"$tmp/$name.err" ||
            fail "$name: spool_cap exited $?: $(head -c 600 "$tmp/$name.err")"
    else
        env LOCKBLAME_SPOOL_MAX="$max" LOCKBLAME_EVENT=none \
            "$LOCKBLAME_CLI" run -o "$db" "$prog" $N >"$tmp/$name.out" 2>"$tmp/$name.err" ||
            fail "$name: lockblame run exited $?: $(head -c 600 "$tmp/$name.err")"
    fi
    [ "$(counted "$tmp/$name.out" children)" = $N ] || fail "$name: spool_cap did not fork $N children"
}

# tree_written NAME: the database holds the root and each child once,
# each with a wait whose path names wait_for_holder, and no unnamed frame.
tree_written() {
    local name=$1 db=$tmp/$1.db out=$tmp/$1.out
    local want; want=$(awk '$1 == "root" { print $2 } $1 == "child" { print $3 }' "$out" | sort -n | joined)
    local got; got=$(rows "$db" "SELECT pid FROM run ORDER BY pid" | joined)
    [ "$(wc -w <<<"$want")" = $((N + 1)) ] && [ "$got" = "$want" ] ||
        bad "$name: the database's processes '$got', the tree's '$want'"
    local waitless; waitless=$(rows "$db" "SELECT group_concat(pid, ' ') FROM run r WHERE NOT EXISTS
        (SELECT 1 FROM thread t JOIN metric m ON m.thread_id = t.id WHERE t.run_id = r.id AND m.wait_s > 0)")
    [ -z "$waitless" ] || bad "$name: processes without a wait: $waitless"
    local unnamed; unnamed=$(rows "$db" "SELECT COUNT(*) FROM frame WHERE line < 0")
    [ "$unnamed" = 0 ] || bad "$name: $unnamed frames left unnamed (line < 0)"
    local pid lacking=()
    for pid in $want; do
        [[ " $(waits_functions "$db" "$pid") " == *" wait_for_holder "* ]] || lacking+=("$pid")
    done
    [ ${#lacking[@]} = 0 ] ||
        bad "$name: processes whose waits' paths lack wait_for_holder: ${lacking[*]} (e.g. '$(waits_functions "$db" "${lacking[0]}")')"
    [ ! -e "$db-spool" ] || bad "$name: $db-spool left: $(ls -A "$db-spool" | joined)"
}

echo "== 1. LOCKBLAME_SPOOL_MAX=$MAX"
for mode in preload run; do
    spool_cap_run "$mode" $mode $MAX
    counts=$(counted "$tmp/$mode.out" counts) largest=$(counted "$tmp/$mode.out" largest)
    echo "  $mode: records before each fork: $counts"
    [ "$largest" -le $SLACK ] || bad "$mode: the spool held $largest records, over $SLACK (bound $MAX)"
    [ "$(refills "$counts")" -ge 2 ] ||
        bad "$mode: the spool did not fill up to the bound again after a commit emptied it: $counts"
    tree_written "$mode"
    if [ $mode = preload ]; then
        tree_summary_only $mode "$tmp/$mode.err" $((N + 1))
    else
        grep -q "^lockblame: $((N + 1)) processes profiled; " "$tmp/$mode.err" ||
            bad "$mode: no summary of $((N + 1)) processes: $(head -c 600 "$tmp/$mode.err")"
    fi
done

echo "== 2. LOCKBLAME_SPOOL_MAX=0: no bound"
for mode in preload run; do
    spool_cap_run "$mode-0" $mode 0
    largest=$(counted "$tmp/$mode-0.out" largest)
    echo "  $mode: at most $largest records"
    [ "$largest" -gt $SLACK ] || bad "$mode-0: the spool held at most $largest records without a bound"
    tree_written "$mode-0"
done

echo "== 3. a bad LOCKBLAME_SPOOL_MAX"
for mode in preload run; do
    spool_cap_run "$mode-bad" $mode 8x
    largest=$(counted "$tmp/$mode-bad.out" largest)
    [ "$(grep -c '^lockblame: LOCKBLAME_SPOOL_MAX wants ' "$tmp/$mode-bad.err")" = 1 ] &&
        [ "$(grep -c LOCKBLAME_SPOOL_MAX "$tmp/$mode-bad.err")" = 1 ] ||
        bad "$mode-bad: stderr has not one line naming LOCKBLAME_SPOOL_MAX: $(head -c 600 "$tmp/$mode-bad.err")"
    [ "$largest" -gt $SLACK ] || bad "$mode-bad: the spool held at most $largest records: not the default bound"
    tree_written "$mode-bad"
done
# the program's output and status: spool_tree tree 4 1 7 exits 7
tree=$WORKLOADS_USER/spool_tree
shape() { sed -E 's/[0-9]+( plain)?$/PID\1/' "$1" | sort; }
"$tree" tree 4 1 7 >"$tmp/plain.out" 2>/dev/null && st=0 || st=$?
LOCKBLAME_SPOOL_MAX=-1 LOCKBLAME_OUTPUT=$tmp/status.db LD_PRELOAD=$LOCKBLAME_LIB \
    "$tree" tree 4 1 7 >"$tmp/status.out" 2>"$tmp/status.err" && st_bad=0 || st_bad=$?
LOCKBLAME_SPOOL_MAX=-1 "$LOCKBLAME_CLI" run -o "$tmp/status-run.db" \
    "$tree" tree 4 1 7 >"$tmp/status-run.out" 2>"$tmp/status-run.err" && st_run=0 || st_run=$?
[ $st = 7 ] && [ $st_bad = 7 ] && [ $st_run = 7 ] ||
    bad "status: spool_tree exited $st_bad (preload) and $st_run (run), and $st unprofiled, not 7"
for f in status status-run; do
    [ "$(shape "$tmp/$f.out")" = "$(shape "$tmp/plain.out")" ] ||
        bad "$f: the program printed '$(shape "$tmp/$f.out" | joined)', unprofiled '$(shape "$tmp/plain.out" | joined)'"
    [ "$(grep -c LOCKBLAME_SPOOL_MAX "$tmp/$f.err")" = 1 ] ||
        bad "$f: stderr has not one line naming LOCKBLAME_SPOOL_MAX: $(head -c 600 "$tmp/$f.err")"
done
finish
