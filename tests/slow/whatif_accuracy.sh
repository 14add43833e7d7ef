#!/usr/bin/env bash
# lockblame whatif against the real fix: for each of whatif_gt's eight
# programs of a fixed amount of work (four on mutexes, one on a spin lock,
# one on an rwlock's write holds, one on a mutex whose release site is a
# library's function called through the PLT, released by a tail jump, and
# one whose site is a semaphore post made under no lock: the code before
# it), the predicted change of the run's time with the named site's
# holds 50% shorter (whatif, 3 rounds) beside the measured change between
# whatif_gt and whatif_gt_fixed, whose holds there really are 50% (100 us
# in oversub) shorter (5 native runs each, interleaved, medians). Passes
# when the prediction is within 5 percentage points of the measurement or
# the measurement lies inside the prediction's interval; prints both and
# how long whatif took against one native run. offpath's site must also be
# called off the critical path. A timing comparison: slow tier only (make
# check-slow), for a quiet machine with at least 2 CPUs. Where the
# program's own native runs spread by more than 10% of their median, the
# machine is too busy to judge a 5-point difference: a miss there is a
# skipped part (with both figures printed), not a failure. Where a thread
# takes tens of us to wake (VMs), plt's real fix also saves ~2,900 of
# those wake-ups, which no virtual speedup emulates, and its prediction
# comes out 8-19 points low there (docs/INTERNALS.md, what-if "Limits").
# The same for a progress rate: rated (the task queue run for a fixed
# time) under --progress progress_point, its predicted change of the rate
# of progress_point calls beside the measured change of the calls the two
# builds make in the same time; judged only where counting the calls took
# under 5% of the baseline's time (below).
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/whatif_gt
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W" "${W}_fixed"
cd "$tmp"

# native_s PROG ARGS: the run time the program reports itself
native_s() { "$@" | sed -nE 's/^[a-z]+: ([0-9.]+) s,.*/\1/p'; }

for case in queue:queue_push offpath:helper_update series:stage_one oversub:hot_update \
    spin:spin_update rwlock:rw_update plt:plt_update posted:produce_item; do
    prog=${case%%:*} site=${case#*:}
    t0=$(date +%s.%N)
    "$LOCKBLAME_CLI" whatif -o "$prog.db" --site "$site" -r 3 -- "$W" "$prog" > "$prog.table" 2>&1 ||
        { bad "$prog: whatif exited $?"; cat "$prog.table"; continue; }
    t1=$(date +%s.%N)
    base=() fixed=()
    for _ in 1 2 3 4 5; do
        base+=("$(native_s "$W" "$prog")")
        fixed+=("$(native_s "${W}_fixed" "$prog")")
    done
    rc=0
    python3 - "$prog.db" "$site" "$t0" "$t1" "${base[*]}" "${fixed[*]}" <<'PY' || rc=$?
import sqlite3, statistics, sys
db, site, t0, t1, base, fixed = sys.argv[1:]
change, lo, hi, verdict, holds = sqlite3.connect(db).execute(
    "SELECT change, change_lo, change_hi, verdict, holds FROM whatif"
    " WHERE site = ? AND speedup = 0.5", (site,)).fetchone()
b = statistics.median(map(float, base.split()))
f = statistics.median(map(float, fixed.split()))
measured = f / b - 1
took = float(t1) - float(t0)
print(f"{site}: predicted {100*change:+.1f}% [{100*lo:+.1f}, {100*hi:+.1f}], measured "
      f"{100*measured:+.1f}% ({b:.3f} s -> {f:.3f} s); whatif took {took:.1f} s = "
      f"{took / b:.0f} native runs ({took / b / 1:.0f}x for 1 site); {verdict or 'no verdict'}")
ok = abs(change - measured) <= 0.05 or lo <= measured <= hi
if site == "helper_update" and verdict != "off the critical path":
    print("helper_update not called off the critical path"); ok = False
runs = sorted(map(float, base.split()))
spread = (runs[-1] - runs[0]) / b
print(f"  native runs spread {100*spread:.0f}% of their median")
sys.exit(0 if ok else 3 if spread > 0.10 else 1)
PY
    case $rc in
    0) ;;
    3) skip_part "a quiet machine to judge $site (native runs spread over 10%)" ;;
    *) bad "$prog: prediction off" ;;
    esac
done

echo "== rated: the rate of progress_point calls"
"$LOCKBLAME_CLI" whatif -o rated.db --site queue_push -r 3 --progress progress_point \
    -- "$W" rated > rated.table 2>&1 || { cat rated.table; fail "rated: whatif exited $?"; }
cat rated.table
# The share of the baseline's time that counting progress_point took,
# as whatif states it where it is 1% or more (a uprobe's ~20 us a call,
# where the machine's breakpoints do not count): that fixed cost is not
# sped up with the rest and pulls the prediction toward zero
# (docs/INTERNALS.md), so from 5% the rate is not judged.
counting=$(grep -oE "time, [0-9]+% of its" rated.table | grep -oE "[0-9]+" || true)
if grep -q 'hardware breakpoint' rated.table; then
    skip_part "a hardware breakpoint to count progress_point"
elif [ "${counting:-0}" -ge 5 ]; then
    skip_part "progress points counted at under 5% of the run (here ${counting}%)"
else
    for _ in 1 2 3 4 5; do
        GT_LOG=$tmp/base.log "$W" rated > /dev/null
        GT_LOG=$tmp/fixed.log "${W}_fixed" rated > /dev/null
    done
    rc=0
    python3 - rated.db base.log fixed.log <<'PY' || rc=$?
import sqlite3, statistics, sys
change, lo, hi = sqlite3.connect(sys.argv[1]).execute(
    "SELECT change, change_lo, change_hi FROM whatif WHERE speedup = 0.5").fetchone()
calls = lambda path: [int(l.split("progress=")[1]) for l in open(path)]
b, f = calls(sys.argv[2]), calls(sys.argv[3])
measured = statistics.median(f) / statistics.median(b) - 1
print(f"progress_point rate: predicted {100*change:+.1f}% [{100*lo:+.1f}, {100*hi:+.1f}], "
      f"measured {100*measured:+.1f}% ({statistics.median(b)} -> {statistics.median(f)} calls)")
ok = abs(change - measured) <= 0.05 or lo <= measured <= hi
spread = (max(b) - min(b)) / statistics.median(b)
print(f"  native runs spread {100*spread:.0f}% of their median")
sys.exit(0 if ok else 3 if spread > 0.10 else 1)
PY
    case $rc in
    0) ;;
    3) skip_part "a quiet machine to judge the rate (native runs spread over 10%)" ;;
    *) bad "rated: prediction off" ;;
    esac
fi
finish
