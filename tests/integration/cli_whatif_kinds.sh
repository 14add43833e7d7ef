#!/usr/bin/env bash
# lockblame whatif's sites and the kinds of hold it speeds up (no time is
# judged). Its sites are the top rows of `report --by-release-site` on the
# same database, in order, each with that row's blame and share: the task
# queue's queue_push (a cond row: its consumers wait for its signal, sped
# up through its mutex holds), rwlock's rw_update and rw_read. A spin-lock
# site (spin_update), an rwlock site (rw_update) and a library's
# plt_update (whatif_gt plt), called through the PLT and released by a
# tail jump, get experiments that time exactly the holds the workload
# counts there and insert p times their length; so does a post made under
# no lock (whatif_gt posted's produce_item), whose experiment times the
# code before each post; the rows are stored in the whatif table; plt's
# site, whose waiters spend much of their wait waking, gets one line that
# says so, with its hand-off latency. A futex
# wake under no lock (gt_futex_cxx atomic's slow_signaller) is not
# supported: --site on it exits 2 with one line that says so, and nothing
# is stored.
. "$(dirname "$0")/../lib/common.sh"
W=$WORKLOADS_USER/whatif_gt
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI" "$W"
L=$LOCKBLAME_CLI
cd "$tmp"

# same_as_report DB JSON: whatif's sites, in order, are the report's top
# rows (one per function: a function's lower rows speed up the same holds;
# structural waits left out), each with that row's blame and share.
same_as_report() {
    "$L" report --by-release-site --format csv "$1" > "$1.csv" || { bad "report $1"; return; }
    python3 - "$1.csv" "$2" <<'PY2' || bad "whatif's sites differ from report --by-release-site's ($1)"
import csv, json, sys
report = [r for r in csv.DictReader(open(sys.argv[1])) if r["structural"] == "false"]
first = {}
for r in report:
    first.setdefault(r["function"], r)
order = list(first)
sites = []
for r in json.load(open(sys.argv[2])):
    if r["site"] not in sites:
        sites.append(r["site"])
    top = first[r["site"]]
    assert abs(r["blame_s"] - float(top["value_s"])) < 1e-9, (r, top)
    assert abs(r["blame_share"] - float(top["share"])) < 1e-9, (r, top)
assert sites == order[:len(sites)], (sites, order)
print("ok: whatif's sites", sites, "are the report's top rows", order[:len(sites) + 1])
PY2
}
# experiment_on NAME SITE K PROG [ARGS]: whatif -n K on PROG picks the
# view's top rows, SITE among them, whose experiment timed every hold the
# workload counted at SITE and inserted p times their length.
experiment_on() {
    local name=$1 site=$2 k=$3 rc=0
    shift 3
    GT_LOG=$tmp/$name.log "$L" whatif -o "$name.db" -n "$k" -r 1 --format json -- "$@" \
        > "$name.json" 2> err || rc=$?
    [ "$rc" -eq 0 ] || { bad "whatif $name exited $rc: $(cat err)"; return; }
    same_as_report "$name.db" "$name.json"
    # the workload's log: the profile run, then baseline, 25%, 50%, 100% per site
    python3 - "$name.db" "$name.log" "$site" <<'PY2' || bad "$name: $site's experiment"
import sqlite3, sys
db, log, site = sys.argv[1:]
rows = sqlite3.connect(db).execute(
    "SELECT speedup, holds, delay_s, hold_s FROM whatif WHERE site = ? ORDER BY speedup",
    (site,)).fetchall()
assert [r[0] for r in rows] == [0.25, 0.5, 1.0], rows
gt = [dict(kv.split("=") for kv in l.split()) for l in open(log)]
want = int(gt[0]["holds"])
for p, holds, delay, hold in rows:
    # every hold at the site timed, and p times their length inserted
    assert holds == want, (p, holds, want)
    assert delay > 0 and abs(delay - p * hold) <= 0.01 * p * hold + 1e-6, (p, delay, hold)
print("ok:", site, [(p, int(h), round(d, 3)) for p, h, d, _ in rows])
PY2
}

echo "== the task queue: its top row is a signal's, sped up through the mutex holds"
rc=0
"$L" whatif -o q.db -n 1 -r 1 --format json -- "$W" queue > q.json 2> err || rc=$?
[ "$rc" -eq 0 ] || bad "whatif queue exited $rc: $(cat err)"
same_as_report q.db q.json
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert [x["site"] for x in r] == ["queue_push"] * 3 and all(x["holds"] == 3000 for x in r), r' \
    q.json || bad "queue: queue_push's holds"

echo "== spin lock and rwlock sites: offered, experimented on, stored"
experiment_on spin spin_update 1 "$W" spin
experiment_on rwlock rw_update 2 "$W" rwlock

echo "== a site in a library, its release a tail jump reached through the PLT"
experiment_on plt plt_update 1 "$W" plt
# plt's one lock is released at plt_update alone: where its hand-off latency
# (the profile's) is a tenth or more of its wait there, whatif says in one
# line that shorter holds leave those wake-ups, with that figure; else not.
python3 - plt.db plt.json err <<'PY2' || bad "plt: the line on saved wake-ups"
import json, re, sqlite3, sys
db, js, err = sys.argv[1:]
handoff = sqlite3.connect(db).execute(
    "SELECT TOTAL(handoff_s) FROM sync_object WHERE object = 'mutex' AND blame_s > 0").fetchone()[0]
blame = json.load(open(js))[0]["blame_s"]
share = handoff / (blame + handoff)
lines = [l for l in open(err) if "wake-ups" in l]
print(f"hand-off {handoff:.3f} s, blame {blame:.3f} s: {100 * share:.0f}% of the wait; said: {lines}")
if share >= 0.1:
    assert len(lines) == 1, lines
    m = re.search(r"plt_update: its waiters also waited ([0-9.]+) s .*\(hand-off latency, ([0-9]+)%", lines[0])
    assert m and abs(float(m.group(1)) - handoff) <= 0.0015, lines
    assert abs(int(m.group(2)) - 100 * share) <= 1, (m.group(2), share)
else:
    assert not lines, lines
PY2

echo "== a post made under no lock: the code before it sped up"
# (a consumer of 10 us an item against the producer's 60: it waits at
# every post even on a busy machine)
experiment_on posted produce_item 1 "$W" posted 1 10

echo "== a futex wake made under no lock: not supported, said in words"
if [ -x "$WORKLOADS_USER/gt_futex_cxx" ]; then
    LOCKBLAME_OUTPUT=$tmp/f.db preloaded "$WORKLOADS_USER/gt_futex_cxx" atomic > /dev/null ||
        bad "gt_futex_cxx exited $?"
    rc=0
    "$L" whatif --site 'slow_signaller(char const*)' -r 1 f.db > out 2> err || rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] && grep -q "futex release site: not supported" err ||
        bad "--site slow_signaller: exit $rc, '$(cat err)'"
    [ "$(rows f.db "SELECT count(*) FROM whatif")" = "?" ] || bad "a whatif table for no experiment"
fi
finish
