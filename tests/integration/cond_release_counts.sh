#!/usr/bin/env bash
# A cond wait releases its mutex: the release counts at the wait's call
# site, as an unlock there would (tests/workloads_user/cond_release_counts.c
# counts its own calls). The mutex's releases at wait_for_item equal the
# consumer's cond waits, those at take_item the unlocks there, and those at
# put_item its unlocks and its own cond waits together.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/cond_release_counts
need "$LOCKBLAME_LIB" "$W"

LOCKBLAME_OUTPUT=$tmp/out.db LOCKBLAME_EVENT=none preloaded "$W" 3000 >"$tmp/truth" || fail "workload exited $?"
sed 's/^/  truth: /' "$tmp/truth"
released() { # released FUNCTION: the mutex releases counted at FUNCTION's sites
    sqlite3 "$tmp/out.db" "SELECT coalesce(sum(s.releases), 0) FROM site s JOIN frame f ON f.id = s.frame_id
                           WHERE s.object = 'mutex' AND f.function = '$1'"
}
truth() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/truth"; }
for pair in wait_for_item:cond_waits take_item:take_unlocks put_item:put_unlocks+put_waits; do
    fn=${pair%%:*} want=0
    for k in $(echo "${pair#*:}" | tr + " "); do want=$((want + $(truth "$k"))); done
    got=$(released "$fn")
    echo "  $fn: $got mutex releases (truth $want)"
    [ "$got" = "$want" ] || bad "$fn: $got mutex releases counted, the workload made $want"
done
[ "$(awk '$1 == "cond_waits" { print $2 }' "$tmp/truth")" -gt 0 ] || bad "the consumer never waited"
echo "$errors problem(s)"
[ "$errors" = 0 ]
