#!/usr/bin/env bash
# Undirected idleness (thesis ch. 5): while one thread computes and three
# wait, each of its work samples carries I/W = 3 samples of undirected
# idleness. The context compute_alone must show undirected ~ 3 x its work
# (within 25%: the counts are sampled), compute_together ~ 0.
source "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS/undirected
need "$W" "$LOCKBLAME_LIB"
out=$(LOCKBLAME_OUTPUT=$tmp/u.db preloaded "$W" 2>/dev/null) || fail "workload failed"
echo "  workload: $out"
# inclusive over the calling contexts below every node of function $1
q() { sqlite3 "$tmp/u.db" "WITH RECURSIVE below(id) AS (
         SELECT n.id FROM node n JOIN frame f ON f.id = n.frame_id WHERE f.function = '$1'
         UNION SELECT n.id FROM node n JOIN below b ON n.parent_id = b.id)
     SELECT printf('%.4f %.4f', TOTAL(m.work_s), TOTAL(m.idle_undirected_s))
     FROM metric m WHERE m.node_id IN (SELECT id FROM below)"; }
read -r work_a und_a <<< "$(q compute_alone)"
read -r work_t und_t <<< "$(q compute_together)"
echo "  compute_alone:    work $work_a s, undirected $und_a s (expect ~3x work)"
echo "  compute_together: work $work_t s, undirected $und_t s (expect ~0)"
awk -v w="$work_a" -v u="$und_a" 'BEGIN { exit !(w > 0.2 && u > 2.25 * w && u < 3.75 * w) }' \
    || fail "undirected idleness of compute_alone is not ~3x its work"
awk -v w="$work_t" -v u="$und_t" 'BEGIN { exit !(u < 0.5 * w + 0.05) }' \
    || fail "compute_together got undirected idleness while nobody waited"
"$LOCKBLAME_CLI" report --by-thread "$tmp/u.db" | tail -5
echo PASS
