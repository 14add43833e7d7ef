#!/usr/bin/env bash
# lockblame report and compare on a big synthetic profile (100K nodes and
# metric rows, tests/cli/make_fixture.py --big): every view exits 0 with
# output; the JSON release-site rows' blame adds up to the idleness in the
# table's header; a compare of the database with a copy of itself finds
# the runs equal and no context changed. (Their CPU time on 1M nodes is
# bench/cli_perf.sh's, in make bench: printed, never judged here.)
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI"
python3 "$ROOT/tests/cli/make_fixture.py" --big 100000 "$tmp/big.db" || fail "fixture"
cp "$tmp/big.db" "$tmp/big2.db"

for v in "" "--format json" "--by-lock" "--by-thread" "--top-down" "--bottom-up" "--flat" "--format folded"; do
    # shellcheck disable=SC2086
    "$LOCKBLAME_CLI" report $v "$tmp/big.db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "report $v exited non-zero"; }
    [ -s "$tmp/out" ] || fail "report $v printed nothing"
    echo "report ${v:-(default)}: $(wc -l <"$tmp/out") lines"
    case $v in
    "") cp "$tmp/out" "$tmp/table" ;;
    "--format json") cp "$tmp/out" "$tmp/json" ;;
    esac
done
idle=$(sed -nE 's/^effort: .* idleness ([0-9.]+) s .*/\1/p' "$tmp/table")
[ -n "$idle" ] || fail "no idleness in the header: $(grep '^effort:' "$tmp/table")"
python3 - "$tmp/json" "$idle" <<'PY' || fail "the release-site rows do not add up to the idleness"
import json, sys
rows = json.load(open(sys.argv[1]))
idle = float(sys.argv[2])
total = sum(r["blame_s"] for r in rows)
print(f"{len(rows)} release-site rows, blame {total:.6f} s; header idleness {idle:.3f} s")
sys.exit(0 if rows and abs(total - idle) <= 0.0005 + 1e-6 * idle else 1)
PY

"$LOCKBLAME_CLI" compare "$tmp/big.db" "$tmp/big2.db" >"$tmp/compare" 2>&1 || { cat "$tmp/compare"; fail "compare exited non-zero"; }
head -8 "$tmp/compare"
grep -q '^B is about as fast as A: speedup 1.00x' "$tmp/compare" || fail "compare: the runs are not equal"
grep -q '^(no context changed)$' "$tmp/compare" || fail "compare: contexts changed between a database and its copy"
echo "PASS"
