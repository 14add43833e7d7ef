#!/usr/bin/env bash
# Idle helpers (docs/DESIGN.md rule 6) beside real contention, -O2 -g:
# tests/workloads_user/idle_helper.c has a helper thread in timed waits on
# its own cond, woken early now and then by workers that contend for one
# mutex (jemalloc's background thread's shape). Checks:
#  - the mutex's blame per release site matches the workload's ground
#    truth within 10% of its total wait (check_blame.py);
#  - the top row of the default release-site view is the mutex's release
#    site (hot_release), and the early wake's site (wake_helper_early) is
#    not in the default view's rows with blame: it is listed apart, as
#    structural;
#  - the helper's structural_wait rows add up to the helper's own measure
#    of its waiting within 10%, and the early wake's rows to most of it;
#  - the header's structural line names the idle helpers' part apart from
#    joins and parked waits, with the helper rows' sum; the stderr summary
#    of `lockblame run`, where it calls idleness structural, names it too;
#  - two shapes that are not idle helpers stay blame in the default view,
#    where the early wake's site takes the helper's waiting (within 10%):
#    a helper with no timeouts (GT_IDLE_UNTIMED=1: a consumer waiting for
#    its producers' signals) and a busy one (GT_IDLE_BUSY=1).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/idle_helper
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"

ground_truth_blame 0.10 "$W"
need "$tmp/gt.json.structural"
top_site_is hot_release

python3 - "$tmp/report.json" "$tmp/out.db" "$tmp/gt.json.structural" <<'PY' || fail "idle helper checks"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[3]))
want = truth["helper_wait_s"]
print("helper's own measure:", truth)
top = rows[0]
ok = top["function"] == "hot_release" and top["object"] == "mutex" and not top["structural"]
acts = [(r["function"], r["object"], r["blame_s"]) for r in rows
        if not r["structural"] and r["function"] == "wake_helper_early" and r["blame_s"] > 0.01 * want]
apart = sum(r["blame_s"] for r in rows if r["structural"] and r["function"] == "wake_helper_early")
print("wake_helper_early in the default view:", acts, "; apart (structural):", round(apart, 6))
con = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
got = con.execute("""SELECT TOTAL(s.blame_s) FROM structural_wait s
                     WHERE NOT s.open AND s.object = 'cond'""").fetchone()[0]
err = abs(got - want) / want
print(f"helper's structural waiting: {got:.6f} s, its own measure {want:.6f} s, error {err:.1%}")
ok = ok and not acts and err <= 0.10 and apart >= 0.5 * want
sys.exit(0 if ok else 1)
PY

# The header's structural line: its parts, the idle helpers' among them.
"$LOCKBLAME_CLI" report "$tmp/out.db" | grep '^structural:' >"$tmp/structural.txt" ||
    bad "no structural line in the header"
cat "$tmp/structural.txt"
helper=$(rows "$tmp/out.db" "SELECT printf('%.3f', TOTAL(blame_s)) FROM structural_wait WHERE helper")
grep -Eq "^structural: [0-9.]+ s = joins [0-9.]+ s \+ idle helpers $helper s \(blame" "$tmp/structural.txt" ||
    bad "the structural line does not name idle helpers $helper s apart from joins and parked waits"
"$LOCKBLAME_CLI" run -o "$tmp/run.db" -- "$W" >/dev/null 2>"$tmp/run.err" || bad "lockblame run exited $?"
grep '^lockblame: ' "$tmp/run.err"
if grep -q 'is structural' "$tmp/run.err"; then
    grep -Eq 'is structural \(joins [0-9.]+ s( \+ parked until shutdown [0-9.]+ s)? \+ idle helpers [0-9.]+ s\)' \
        "$tmp/run.err" || bad "the summary's structural share does not name the idle helpers"
fi

for shape in UNTIMED BUSY; do
    echo "--- GT_IDLE_$shape=1: not an idle helper"
    db=$tmp/$shape.db
    env "GT_IDLE_$shape=1" LOCKBLAME_OUTPUT="$db" GROUND_TRUTH="$tmp/$shape.json" \
        LD_PRELOAD="$LOCKBLAME_LIB" "$W" || fail "workload ($shape) exited $?"
    "$LOCKBLAME_CLI" report --format json "$db" >"$tmp/$shape.report.json" || fail "json report exited $?"
    python3 - "$tmp/$shape.report.json" "$tmp/$shape.json.structural" <<'PY' || fail "$shape: the early wake's blame was moved apart"
import json, sys
rows = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
want, last = truth["helper_wait_s"], truth["helper_last_wait_s"]
acts = sum(r["blame_s"] for r in rows if not r["structural"] and r["function"] == "wake_helper_early")
apart = sum(r["blame_s"] for r in rows if r["structural"] and r["function"] == "wake_helper_early")
# Its waiting stays blame on the early wake's site; only its last wait,
# ended by stop_helper (a thread parked until shutdown, long on a loaded
# machine), may be listed apart, give or take 5% of its waiting (a make
# check at load 8 once listed 13 ms apart against a last wait of 2 ms).
# The idle-helper rule would move it all.
err = abs(acts + apart - want) / want
print(f"wake_helper_early: {acts:.6f} s in the default view, {apart:.6f} s apart;"
      f" the helper waited {want:.6f} s, its last wait {last:.6f} s (error {err:.1%})")
sys.exit(0 if err <= 0.10 and apart <= last + 0.05 * want and acts >= 0.5 * want else 1)
PY
done
finish
