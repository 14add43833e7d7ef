#!/usr/bin/env bash
# The names of a process tree's code addresses, whoever gives them: a
# child whose profile waits in the run's spool (docs/INTERNALS.md
# "Pending profiles") or one that adds its own. names_tree forks 6
# children one after another, then one that execs itself; each signals a
# condition variable from signal_inlined, always inlined into
# signaller_outer, and prints its pid with the signal's file and line
# (tests/workloads_user/names_tree.c). Run three ways: by default, with
# LOCKBLAME_SPOOL=0 (each process adds its own profile), and without
# sampling (LOCKBLAME_EVENT=none: every child after the first names
# nothing new, so its profile waits in the spool until another process's
# commit or the root's end adds it). For every process it printed:
#   - its cond blame lands on nodes whose frame is signal_inlined at the
#     printed file and line, each the child of a signaller_outer node
#     (the inline chain's caller, a node of its own) whose frame has the
#     same module and offset and a lower id
#   - the distinct (function, file, line) on the blamed nodes' paths are
#     those of the same process (by print order) with LOCKBLAME_SPOOL=0
# and in each database: no frame with a line below 0; every frame of a
# module with a build id on a blamed node's path has a function; no
# spool left; stderr only the root's summary; stdout (pids aside) and
# exit status those of a run without lockblame.
. "$(dirname "$0")/../lib/common.sh"
prog=$WORKLOADS_USER/names_tree
need "$LOCKBLAME_LIB" "$prog"
command -v sqlite3 >/dev/null || skip "sqlite3"
children=6

# shape OUT: what the program printed, its pids left out.
shape() { sed -E 's/^([a-z-]+) [0-9]+ /\1 PID /' "$1"; }

# blamed_paths DB PID: the distinct "function|file's base name|line" of
# the frames on the paths from the root to the nodes where PID's cond
# blame landed, sorted, one line.
blamed_paths() {
    rows "$1" "$(path_nodes "r.pid = $2 AND m.idle_cond_s > 0")
        SELECT group_concat(name, ' ') FROM (SELECT DISTINCT
            coalesce(f.function, '?') || '|' ||
            coalesce(replace(f.file, rtrim(f.file, replace(f.file, '/', '')), ''), '') || '|' ||
            f.line AS name
          FROM n JOIN node ON node.id = n.id JOIN frame f ON f.id = node.frame_id ORDER BY 1)"
}

# site_holds NAME DB PID FILE LINE: PID's cond blame is there, and each
# node it landed on is signal_inlined at FILE:LINE below a signaller_outer node.
site_holds() {
    local name=$1 db=$2 pid=$3 file=$4 line=$5
    local sites; sites=$(rows "$db" "SELECT DISTINCT coalesce(f.function, '?') || '|' ||
            coalesce(f.file, '') || '|' || f.line || '|' || coalesce(pf.function, '?') || '|' ||
            (pf.module_id IS f.module_id AND pf.offset IS f.offset AND pf.id < f.id)
        FROM metric m JOIN thread t ON t.id = m.thread_id JOIN run r ON r.id = t.run_id
          JOIN node n ON n.id = m.node_id LEFT JOIN frame f ON f.id = n.frame_id
          LEFT JOIN node p ON p.id = n.parent_id LEFT JOIN frame pf ON pf.id = p.frame_id
        WHERE r.pid = $pid AND m.idle_cond_s > 0")
    [ -n "$sites" ] && [ "$sites" != "?" ] || { bad "$name: process $pid has no cond blame"; return; }
    local function path at outer chained
    while IFS='|' read -r function path at outer chained; do
        [ "$function|${path##*/}|$at|$outer" = "signal_inlined|$file|$line|signaller_outer" ] ||
            bad "$name: process $pid's cond blame landed on $function ($path:$at) below $outer," \
                "not signal_inlined ($file:$line) below signaller_outer"
        [ "$chained" = 1 ] ||
            bad "$name: process $pid: $function's frame and its caller $outer's are not of one" \
                "address, the caller's row first (docs/SCHEMA.md symbol.depth)"
    done <<<"$sites"
}

# names_complete NAME DB: no frame with a line below 0, and a function for
# every frame of a module with a build id on the path of a blamed node.
names_complete() {
    local name=$1 db=$2
    local negative; negative=$(rows "$db" "SELECT COUNT(*) FROM frame WHERE line < 0")
    [ "$negative" = 0 ] || bad "$name: $negative frames with a line below 0"
    local unnamed; unnamed=$(rows "$db" "$(path_nodes "m.idle_mutex_s > 0 OR m.idle_spin_s > 0
            OR m.idle_rwlock_s > 0 OR m.idle_cond_s > 0 OR m.idle_barrier_s > 0 OR m.idle_sem_s > 0
            OR m.idle_join_s > 0 OR m.idle_futex_s > 0")
        SELECT group_concat(DISTINCT mo.path || '+' || f.offset) FROM n JOIN node ON node.id = n.id
          JOIN frame f ON f.id = node.frame_id JOIN module mo ON mo.id = f.module_id
        WHERE mo.build_id IS NOT NULL AND f.function IS NULL")
    [ -z "$unnamed" ] || bad "$name: frames without a function on blamed paths: $unnamed"
}

# summary_only NAME ERR DB: stderr holds the root's summary, counting the
# database's processes, and nothing else.
summary_only() {
    local name=$1 err=$2 db=$3
    local n; n=$(rows "$db" "SELECT COUNT(*) FROM run")
    local first; first=$(grep -c "^lockblame: $n processes profiled; " "$err" || true)
    local other; other=$(grep -vcE "^lockblame: ($n processes profiled; |top release site: |[0-9.]+% of the idleness |threads spent )" \
        "$err" || true)
    [ "$first" = 1 ] && [ "$other" = 0 ] ||
        bad "$name: stderr is not the root's summary of $n processes alone: $(head -c 600 "$err")"
}

"$prog" $children >"$tmp/native.out" 2>"$tmp/native.err" && st_native=0 || st_native=$?
[ $st_native = 0 ] || fail "native: names_tree exited $st_native: $(cat "$tmp/native.err")"
[ "$(grep -c '^child ' "$tmp/native.out")" = $children ] && [ "$(grep -c '^exec-child ' "$tmp/native.out")" = 1 ] ||
    fail "native: names_tree did not print $children children and an exec'd one: $(cat "$tmp/native.out")"

# on: the defaults; off: LOCKBLAME_SPOOL=0, each process adds its own
# profile; waits: no sampling (LOCKBLAME_EVENT=none), so that no sample
# names an address of its own in one child and every child after the
# first leaves its profile pending (docs/INTERNALS.md "Pending profiles")
for mode in on off waits; do
    echo "== names_tree $children, $mode"
    db=$tmp/$mode.db
    settings=()
    [ $mode = off ] && settings=(LOCKBLAME_SPOOL=0)
    [ $mode = waits ] && settings=(LOCKBLAME_EVENT=none)
    env "${settings[@]}" LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$prog" $children >"$tmp/$mode.out" 2>"$tmp/$mode.err" && st=0 || st=$?
    [ $st = $st_native ] || bad "$mode: names_tree exited $st, $st_native without lockblame: $(cat "$tmp/$mode.err")"
    [ "$(shape "$tmp/$mode.out")" = "$(shape "$tmp/native.out")" ] ||
        bad "$mode: names_tree printed '$(shape "$tmp/$mode.out")', without lockblame '$(shape "$tmp/native.out")'"
    [ ! -e "$db-spool" ] || bad "$mode: $db-spool left: $(ls -A "$db-spool" | tr '\n' ' ')"
    summary_only "$mode" "$tmp/$mode.err" "$db"
    names_complete "$mode" "$db"
    while read -r what pid _ _ file line _ <&3; do
        site_holds "$mode, $what $pid" "$db" "$pid" "$file" "$line"
    done 3<"$tmp/$mode.out"
    echo "  $(rows "$db" "SELECT COUNT(*) FROM run") processes; $(rows "$db" "SELECT COUNT(*) FROM frame") frames;" \
        "cond blame $(rows "$db" "SELECT printf('%.3f', SUM(idle_cond_s)) FROM metric") s"
done

echo "== the names on the blamed paths, process by process, against LOCKBLAME_SPOOL=0"
mapfile -t off_pids < <(awk '{ print $2 }' "$tmp/off.out")
for mode in on waits; do
    mapfile -t pids < <(awk '{ print $2 }' "$tmp/$mode.out")
    [ ${#pids[@]} = ${#off_pids[@]} ] || bad "$mode printed ${#pids[@]} processes, off ${#off_pids[@]}"
    for i in "${!pids[@]}"; do
        a=$(blamed_paths "$tmp/$mode.db" "${pids[$i]}")
        b=$(blamed_paths "$tmp/off.db" "${off_pids[$i]:-0}")
        [ -n "$a" ] && [ "$a" = "$b" ] ||
            bad "$mode, process $i (pid ${pids[$i]}; off ${off_pids[$i]:-none}): on its blamed paths '$a', off '$b'"
    done
done
echo "  the exec'd child's blamed paths: $(blamed_paths "$tmp/off.db" "${off_pids[-1]}")"
finish
