#!/usr/bin/env bash
# The names of a process tree's code addresses, whoever gives them: a
# child whose profile waits in the run's spool (docs/INTERNALS.md
# "Pending profiles", "Names at the merge") or one that adds its own.
# names_tree forks 6 children one after another, then one that execs
# itself; each signals a condition variable from an inline chain three
# deep at one address (signaller_outer, relay_inlined, signal_inlined;
# the last forked child's from signaller_outer_last, an address no earlier
# process named, so that the merge expands a fork child's chain too), its
# waiter's start routine begins with an inlined call, and it prints
# its pid with the chain's functions and lines, caller first
# (tests/workloads_user/names_tree.c). The program is run built as a
# position-independent executable (names_tree) and as a fixed-address one
# (names_tree_nopie, -no-pie), each three ways: by default, with
# LOCKBLAME_SPOOL=0 (each process adds its own profile), and without
# sampling (LOCKBLAME_EVENT=none: every child after the first names
# nothing new, so its profile waits in the spool until another process's
# commit or the root's end adds it). For every process it printed:
#   - its cond blame lands on nodes whose frame is signal_inlined at the
#     printed file and line, whose parent node's frame is relay_inlined
#     and grandparent's the printed outer function, at their printed
#     lines: frames of the same module and offset with consecutive ids, the caller's
#     first, and the grandparent's parent of another address
#   - its cond release site (site.frame_id) is signal_inlined at the
#     printed line, and one of its threads' start routines is an inline
#     chain (the waiter's)
#   - the distinct (function, file, line) on the blamed nodes' paths are
#     those of the same process (by print order) with LOCKBLAME_SPOOL=0
# and in each database: every node's depth is its distance from the root;
# every site's frame and thread's start frame is the innermost (highest
# id) frame of its address; no frame with a line below 0; every frame of a
# module with a build id on a blamed node's path has a function; no spool
# left; stderr only the root's summary; stdout (pids aside) and exit
# status those of a run without lockblame.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/names_tree" "$WORKLOADS_USER/names_tree_nopie"
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

# site_holds NAME DB PID FILE F1 L1 F2 L2 F3 L3: PID's cond blame is
# there, and each node it landed on is F3 at FILE:L3, its parent F2 at L2
# and its grandparent F1 at L1, the frames of one address with
# consecutive ids, F1's first, below a node of another address; PID's
# cond release site is F3 at FILE:L3.
site_holds() {
    local name=$1 db=$2 pid=$3 file=$4 f1=$5 l1=$6 f2=$7 l2=$8 f3=$9 l3=${10}
    local want="$f3|$file|$l3|$f2|$l2|$f1|$l1|1"
    local sites; sites=$(rows "$db" "SELECT DISTINCT coalesce(f.function, '?') || '|' ||
            coalesce(replace(f.file, rtrim(f.file, replace(f.file, '/', '')), ''), '') || '|' ||
            coalesce(f.line, '?') || '|' || coalesce(pf.function, '?') || '|' || coalesce(pf.line, '?') || '|' ||
            coalesce(gf.function, '?') || '|' || coalesce(gf.line, '?') || '|' ||
            (pf.module_id IS f.module_id AND pf.offset IS f.offset AND pf.id = f.id - 1 AND
             gf.module_id IS f.module_id AND gf.offset IS f.offset AND gf.id = f.id - 2 AND
             (hf.id IS NULL OR hf.module_id IS NOT f.module_id OR hf.offset IS NOT f.offset))
        FROM metric m JOIN thread t ON t.id = m.thread_id JOIN run r ON r.id = t.run_id
          JOIN node n ON n.id = m.node_id LEFT JOIN frame f ON f.id = n.frame_id
          LEFT JOIN node p ON p.id = n.parent_id LEFT JOIN frame pf ON pf.id = p.frame_id
          LEFT JOIN node g ON g.id = p.parent_id LEFT JOIN frame gf ON gf.id = g.frame_id
          LEFT JOIN node h ON h.id = g.parent_id LEFT JOIN frame hf ON hf.id = h.frame_id
        WHERE r.pid = $pid AND m.idle_cond_s > 0")
    [ -n "$sites" ] && [ "$sites" != "?" ] || { bad "$name: process $pid has no cond blame"; return; }
    local got
    while read -r got; do
        [ "$got" = "$want" ] ||
            bad "$name: process $pid's cond blame landed on '$got' (function|file|line, then the" \
                "parent's and grandparent's function|line, then whether the three are one address's" \
                "frames with consecutive ids, outermost first, below another address), not '$want'"
    done <<<"$sites"
    local release; release=$(rows "$db" "SELECT group_concat(DISTINCT coalesce(f.function, '?') || '|' ||
            coalesce(replace(f.file, rtrim(f.file, replace(f.file, '/', '')), ''), '') || '|' || f.line)
        FROM site s JOIN thread t ON t.id = s.thread_id JOIN run r ON r.id = t.run_id
          LEFT JOIN frame f ON f.id = s.frame_id
        WHERE r.pid = $pid AND s.object = 'cond' AND s.releases > 0")
    [ "$release" = "$f3|$file|$l3" ] ||
        bad "$name: process $pid's cond release sites are '$release', not '$f3|$file|$l3'"
    local chained; chained=$(rows "$db" "SELECT COUNT(*) FROM thread t JOIN run r ON r.id = t.run_id
          JOIN frame f ON f.id = t.start_frame_id
        WHERE r.pid = $pid AND EXISTS (SELECT 1 FROM frame o WHERE o.module_id = f.module_id
          AND o.offset = f.offset AND o.id < f.id)")
    [ "$chained" -ge 1 ] 2>/dev/null ||
        bad "$name: process $pid has no thread whose start routine is an inline chain" \
            "(waiter begins with start_waiting): '$chained'"
}

# depths_hold NAME DB: every node's depth is its distance from the root
# (a node with no parent), counted over node.parent_id.
depths_hold() {
    local name=$1 db=$2
    local wrong; wrong=$(rows "$db" "WITH RECURSIVE d(id, depth) AS (
            SELECT id, 0 FROM node WHERE parent_id IS NULL
            UNION ALL SELECT node.id, d.depth + 1 FROM node JOIN d ON node.parent_id = d.id)
        SELECT COUNT(*) || ' of ' || (SELECT COUNT(*) FROM node) || ': ' ||
            coalesce(group_concat(node.id || ' at ' || node.depth || ', not ' ||
                coalesce(d.depth, 'reachable'), '; '), '')
        FROM node LEFT JOIN d ON d.id = node.id WHERE d.depth IS NOT node.depth")
    [[ $wrong == "0 of "* ]] || bad "$name: nodes whose depth is not their distance from the root: ${wrong:0:600}"
}

# innermost_named NAME DB: each site's frame and each thread's start frame
# is a frame, and the innermost of its address: no frame of the same
# module and offset has a higher id.
innermost_named() {
    local name=$1 db=$2 what
    local -A refs=([site]="SELECT frame_id AS id FROM site"
        [thread]="SELECT start_frame_id AS id FROM thread WHERE start_frame_id IS NOT NULL")
    for what in site thread; do
        local wrong; wrong=$(rows "$db" "SELECT coalesce(group_concat(r.id, ' '), '') FROM (${refs[$what]}) AS r
              LEFT JOIN frame f ON f.id = r.id
            WHERE f.id IS NULL OR EXISTS (SELECT 1 FROM frame o WHERE o.module_id = f.module_id
              AND o.offset = f.offset AND o.id > f.id)")
        [ -z "$wrong" ] || bad "$name: ${what} rows name frames that are not the innermost of their address: ${wrong:0:600}"
    done
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

# names_tree_holds PROG: the checks above, PROG run natively and the
# three ways.
names_tree_holds() {
    local prog=$WORKLOADS_USER/$1 name=$1 mode st st_native db settings
    local out=$tmp/$name
    "$prog" $children >"$out.native.out" 2>"$out.native.err" && st_native=0 || st_native=$?
    [ $st_native = 0 ] || fail "$name, native: exited $st_native: $(cat "$out.native.err")"
    [ "$(grep -c '^child ' "$out.native.out")" = $children ] && [ "$(grep -c '^exec-child ' "$out.native.out")" = 1 ] ||
        fail "$name, native: did not print $children children and an exec'd one: $(cat "$out.native.out")"

    # on: the defaults; off: LOCKBLAME_SPOOL=0, each process adds its own
    # profile; waits: no sampling (LOCKBLAME_EVENT=none), so that no sample
    # names an address of its own in one child and every child after the
    # first leaves its profile pending (docs/INTERNALS.md "Pending profiles")
    for mode in on off waits; do
        echo "== $name $children, $mode"
        db=$out.$mode.db
        settings=()
        [ $mode = off ] && settings=(LOCKBLAME_SPOOL=0)
        [ $mode = waits ] && settings=(LOCKBLAME_EVENT=none)
        env "${settings[@]}" LOCKBLAME_OUTPUT="$db" LD_PRELOAD="$LOCKBLAME_LIB" \
            "$prog" $children >"$out.$mode.out" 2>"$out.$mode.err" && st=0 || st=$?
        [ $st = $st_native ] || bad "$name, $mode: exited $st, $st_native without lockblame: $(cat "$out.$mode.err")"
        [ "$(shape "$out.$mode.out")" = "$(shape "$out.native.out")" ] ||
            bad "$name, $mode: printed '$(shape "$out.$mode.out")', without lockblame '$(shape "$out.native.out")'"
        [ ! -e "$db-spool" ] || bad "$name, $mode: $db-spool left: $(ls -A "$db-spool" | tr '\n' ' ')"
        tree_summary_only "$name, $mode" "$out.$mode.err" "$(rows "$db" "SELECT COUNT(*) FROM run")"
        names_complete "$name, $mode" "$db"
        depths_hold "$name, $mode" "$db"
        innermost_named "$name, $mode" "$db"
        while read -r what pid _ file _ f1 l1 f2 l2 f3 l3 <&3; do
            site_holds "$name, $mode, $what $pid" "$db" "$pid" "$file" "$f1" "$l1" "$f2" "$l2" "$f3" "$l3"
        done 3<"$out.$mode.out"
        echo "  $(rows "$db" "SELECT COUNT(*) FROM run") processes; $(rows "$db" "SELECT COUNT(*) FROM frame") frames;" \
            "$(rows "$db" "SELECT COUNT(*) FROM node") nodes, at most $(rows "$db" "SELECT max(depth) FROM node") deep;" \
            "cond blame $(rows "$db" "SELECT printf('%.3f', SUM(idle_cond_s)) FROM metric") s"
    done

    echo "== $name: the names on the blamed paths, process by process, against LOCKBLAME_SPOOL=0"
    local off_pids pids i a b
    mapfile -t off_pids < <(awk '{ print $2 }' "$out.off.out")
    for mode in on waits; do
        mapfile -t pids < <(awk '{ print $2 }' "$out.$mode.out")
        [ ${#pids[@]} = ${#off_pids[@]} ] || bad "$name, $mode printed ${#pids[@]} processes, off ${#off_pids[@]}"
        for i in "${!pids[@]}"; do
            a=$(blamed_paths "$out.$mode.db" "${pids[$i]}")
            b=$(blamed_paths "$out.off.db" "${off_pids[$i]:-0}")
            [ -n "$a" ] && [ "$a" = "$b" ] ||
                bad "$name, $mode, process $i (pid ${pids[$i]}; off ${off_pids[$i]:-none}): on its blamed paths '$a', off '$b'"
        done
    done
    echo "  the exec'd child's blamed paths: $(blamed_paths "$out.off.db" "${off_pids[-1]}")"
}

names_tree_holds names_tree
names_tree_holds names_tree_nopie
finish
