#!/usr/bin/env bash
# Unwind rules that fork children compute reach their later siblings
# (sampler/rule_share.h): rule_siblings forks children one after another,
# whose waiters wait through the same code at the same addresses, by one of
# three frames of different shapes, and each child prints the frame its
# waiters went through. Every child's waiter paths must be exactly
# sib_inner < sib_middle_K < sib_outer < waiter with its own K, as in a run
# with LOCKBLAME_SHARE_RULES=0 (no rule handed on), and its main thread's
# wait paths ones that run has too: a rule a sibling computed and the
# parent imported wrong would give another path.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$WORKLOADS_USER/rule_siblings"

# paths DB PID: the distinct wait paths of process PID, leaf first, one a line
paths() {
    rows "$1" "WITH RECURSIVE p(node, depth, leaf, tid) AS (
          SELECT m.node_id, 0, m.node_id, t.id FROM metric m JOIN thread t ON t.id = m.thread_id
            JOIN run r ON r.id = t.run_id WHERE r.pid = $2 AND m.wait_s > 0
          UNION ALL SELECT n.parent_id, p.depth + 1, p.leaf, p.tid FROM node n JOIN p ON n.id = p.node
            WHERE n.parent_id IS NOT NULL)
        SELECT DISTINCT path FROM (SELECT tid, leaf, group_concat(fn, '<') AS path FROM
          (SELECT p.tid, p.leaf, f.function AS fn FROM p JOIN node n ON n.id = p.node
             JOIN frame f ON f.id = n.frame_id ORDER BY p.tid, p.leaf, p.depth)
          GROUP BY tid, leaf) ORDER BY path"
}

run_tree() { # run_tree NAME [VAR=VALUE...]
    local name=$1; shift
    env "$@" LOCKBLAME_OUTPUT="$tmp/$name.db" LD_PRELOAD="$LOCKBLAME_LIB" \
        "$WORKLOADS_USER/rule_siblings" 12 >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        fail "rule_siblings ($name) failed: $(cat "$tmp/$name.err")"
    [ "$(grep -c '^child ' "$tmp/$name.out")" = 12 ] || fail "$name: 12 children expected to print"
}

echo "== rule_siblings, rules shared, and LOCKBLAME_SHARE_RULES=0"
run_tree shared
run_tree alone LOCKBLAME_SHARE_RULES=0

all_alone=$(while read -r _ _ pid _; do paths "$tmp/alone.db" "$pid"; done < <(grep '^child ' "$tmp/alone.out") | sort -u)
while read -r _ i pid middle; do
    got=$(paths "$tmp/shared.db" "$pid")
    waits=$(grep -c 'waiter' <<<"$got" || true)
    right=$(grep -cx "sib_inner<$middle<sib_outer<waiter" <<<"$got" || true)
    [ "$waits" = 1 ] && [ "$right" = 1 ] ||
        bad "child $i (pid $pid): waiter paths, expected only sib_inner<$middle<sib_outer<waiter: '$(grep waiter <<<"$got" | tr '\n' ' ')'"
    alone_pid=$(awk -v i="$i" '$2 == i { print $3 }' "$tmp/alone.out")
    want=$(paths "$tmp/alone.db" "$alone_pid" | grep waiter)
    [ "$(grep waiter <<<"$got")" = "$want" ] ||
        bad "child $i: waiter paths differ from the run without shared rules: '$(grep waiter <<<"$got" | tr '\n' ' ')' against '$want'"
    while read -r path; do # the main thread's waits (joins, the polled mutex), where it had any
        [ -z "$path" ] || grep -qxF "$path" <<<"$all_alone" ||
            bad "child $i: main thread's wait path '$path' is none of the run without shared rules"
    done < <(grep -v waiter <<<"$got")
done < <(grep '^child ' "$tmp/shared.out")
echo "  12 children: waiter paths as each child said, and as without shared rules"
finish
