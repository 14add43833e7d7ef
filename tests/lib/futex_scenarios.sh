# Sourced by the futex blame drivers (tests/integration/futex_*.sh), after
# common.sh.
#
# futex_scenarios PROG SCENARIO:CULPRIT...: for each scenario, run
# PROG SCENARIO preloaded (it writes its event log to $EVENTS, see
# tests/workloads_user/futex_gt.h), turn the log into the ground truth of
# the futex rule (tests/lib/futex_truth.py) and check the release-site
# report against it: each site's blame within 5% of the workload's total
# wait (widened by the waiting within the wakes' spans, the truth's
# unplaced_s), conservation on the futex objects (tests/lib/check_blame.py), and
# CULPRIT, the function that made the others wait, the top release site,
# in the release-site view and in --by-process.
# A failed scenario is counted (bad); the others still run.
futex_scenarios() {
    local prog=$1 arg scenario culprit top
    shift
    for arg in "$@"; do
        scenario=${arg%%:*}
        culprit=${arg#*:}
        echo "=== $scenario: $culprit makes three threads wait"
        rm -f "$tmp/out.db" "$tmp/events.txt"
        if ! LOCKBLAME_OUTPUT=$tmp/out.db EVENTS=$tmp/events.txt preloaded "$prog" "$scenario"; then
            bad "$scenario: workload exited $?"
            continue
        fi
        if ! python3 "$TESTLIB/futex_truth.py" "$tmp/events.txt" >"$tmp/gt.json"; then
            bad "$scenario: no ground truth from the workload's event log"
            continue
        fi
        "$LOCKBLAME_CLI" report --by-release-site "$tmp/out.db" | head -20 || true
        if ! "$LOCKBLAME_CLI" report --by-release-site --format json "$tmp/out.db" \
            >"$tmp/report.json"; then
            bad "$scenario: lockblame report --format json exited $?"
            continue
        fi
        python3 "$TESTLIB/check_blame.py" --tol 0.05 "$tmp/gt.json" "$tmp/report.json" \
            "$tmp/out.db" || bad "$scenario: blame per site against the ground truth"
        top=$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))
print(rows[0]["function"].split("(")[0] if rows else "")' "$tmp/report.json")
        [ "$top" = "$culprit" ] || bad "$scenario: top release site is '$top', expected $culprit"
        echo "top release site: $top"
        # --by-process names the same site (not the runtime's wake, nor an
        # inline frame of a header where the chain has a cold block)
        top=$("$LOCKBLAME_CLI" report --by-process --format json "$tmp/out.db" | python3 -c '
import json, sys
rows = json.load(sys.stdin)
print((rows[0].get("top_site") or "").split("(")[0] if rows else "")')
        [ "$top" = "$culprit" ] || bad "$scenario: --by-process top site is '$top', expected $culprit"
    done
}
