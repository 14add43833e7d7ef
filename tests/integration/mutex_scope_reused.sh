#!/usr/bin/env bash
# A contended mutex that goes out of scope without pthread_mutex_destroy
# (every std::mutex: its destructor is trivial), its stack reused before
# the final write (tests/workloads_user/stack_mutex_reused.c). Its count of
# acquisitions, kept in the mutex's own words, is gone: the database must
# say it is unknown (NULL), not print what the reused stack holds (a
# pointer, or 0), and --by-lock shows "-" for its Acq and Cont%. A static
# mutex contended the same way keeps its exact count, and the per-kind
# totals still count every acquisition.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/stack_mutex_reused
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

LOCKBLAME_OUTPUT="$tmp/s.db" LD_PRELOAD="$LOCKBLAME_LIB" "$W" >"$tmp/out" 2>"$tmp/err" \
    || fail "workload exited $?"
stack=$(awk '/^stack_mutex/ { print $2 }' "$tmp/out")
static=$(awk '/^static_mutex/ { print $2 }' "$tmp/out")
want=$(awk '/^static_acquisitions/ { print $2 }' "$tmp/out")

row() { # ADDR -> "acquisitions|contended" ("NULL" for an unknown count)
    sqlite3 "$tmp/s.db" "SELECT IFNULL(acquisitions, 'NULL'), contended FROM sync_object
        WHERE object = 'mutex' AND address = $(($1))"
}
read -r s_acq s_cont <<<"$(row "$stack" | tr '|' ' ')"
read -r t_acq t_cont <<<"$(row "$static" | tr '|' ' ')"
echo "stack mutex $stack: acquisitions $s_acq, contended $s_cont"
echo "static mutex $static: acquisitions $t_acq (want $want), contended $t_cont"
[ "${s_cont:-0}" -gt 0 ] || fail "the stack mutex never contended (no record to check)"
[ "$s_acq" = NULL ] || [ "$s_acq" = "$want" ] \
    || fail "stack mutex: acquisitions $s_acq, want unknown (NULL) or the truth $want"
[ "$t_acq" = "$want" ] || fail "static mutex: acquisitions $t_acq, want $want"

total=$(sqlite3 "$tmp/s.db" "SELECT SUM(acquisitions) FROM sync_object WHERE object = 'mutex'")
echo "mutex acquisitions in all rows: $total (want $((2 * want)))"
[ "$total" = $((2 * want)) ] || fail "per-kind totals: $total mutex acquisitions, want $((2 * want))"

"$LOCKBLAME_CLI" report --by-lock --per-address "$tmp/s.db" >"$tmp/locks" \
    || fail "report --by-lock exited $?"
line=$(grep -E "^mutex +$stack " "$tmp/locks" || true)
echo "table: $line"
[[ $line =~ ^mutex\ +$stack\ +-\ +-\  ]] || fail "--by-lock: want '-' for Acq and Cont% of $stack"
"$LOCKBLAME_CLI" report --by-lock --per-address --format json "$tmp/s.db" >"$tmp/locks.json" \
    || fail "report --format json exited $?"
python3 - "$tmp/locks.json" "$stack" <<'PY' || fail "--by-lock json: want null acquisitions for the stack mutex"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if int(r["address"], 16) == int(sys.argv[2], 16)]
sys.exit(0 if rows and rows[0]["acquisitions"] is None and rows[0]["contended_share"] is None else 1)
PY
echo PASS
