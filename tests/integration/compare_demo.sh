#!/usr/bin/env bash
# `lockblame compare` on the bundled demo at 1, 2 and 4 workers must point
# at the queue: the context with the largest excess effort from 1 to 4
# workers is the queue_push release site, and its excess is idleness that
# grows with the worker count.
source "$(dirname "$0")/../lib/common.sh"
DEMO=$BUILD/demo/taskqueue
need "$DEMO" "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
for w in 1 2 4; do
    LOCKBLAME_OUTPUT=$tmp/w$w.db preloaded "$DEMO" $w >"$tmp/out$w" 2>/dev/null
done
cmp -s "$tmp/out1" "$tmp/out4" || fail "the demo's output depends on the worker count"
"$LOCKBLAME_CLI" compare "$tmp/w1.db" "$tmp/w2.db" "$tmp/w4.db" >"$tmp/three.txt"
head -16 "$tmp/three.txt"
"$LOCKBLAME_CLI" compare --format json "$tmp/w1.db" "$tmp/w2.db" "$tmp/w4.db" >"$tmp/cmp.json"
python3 - "$tmp/cmp.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
top = max(rows, key=lambda r: r["excess_s"])
print("top excess:", top["function"], top.get("file"), top.get("line"), "excess_s", top["excess_s"],
      "idle", top.get("excess_idleness_s"), "share", top["share"])
idle = [r for r in rows if r.get("excess_idleness_s", 0) > 0]
top_idle = max(idle, key=lambda r: r["excess_idleness_s"]) if idle else None
ok = top["function"] == "queue_push" and top.get("excess_idleness_s", 0) > 0.5 * top["excess_s"]
ok = ok and top_idle is not None and top_idle["function"] == "queue_push"
ok = ok and top["values_s"][-1] > top["values_s"][0]
sys.exit(0 if ok else 1)
PY

# The fix by batching (taskqueue --batched): compare reads both ways. From
# contended to batched, B is faster and the largest |change| is queue_push's
# gain (negative); the other way round, the same context is the largest
# loss. The output (count, checksum) must not depend on the mode.
LOCKBLAME_OUTPUT=$tmp/batched.db preloaded "$DEMO" --batched 4 >"$tmp/outb" 2>/dev/null
cmp -s "$tmp/out4" "$tmp/outb" || fail "the demo's output depends on --batched"
for order in fwd back; do
    if [ $order = fwd ]; then a=$tmp/w4.db b=$tmp/batched.db; else a=$tmp/batched.db b=$tmp/w4.db; fi
    COLUMNS=120 "$LOCKBLAME_CLI" compare -n 3 "$a" "$b" >"$tmp/tab.$order"
    head -14 "$tmp/tab.$order"
    "$LOCKBLAME_CLI" compare --format json "$a" "$b" >"$tmp/cmp.$order.json"
done
grep -q '^B is FASTER than A' "$tmp/tab.fwd" || fail "contended -> batched: B should be faster"
grep -q '^B is SLOWER than A' "$tmp/tab.back" || fail "batched -> contended: B should be slower"
python3 - "$tmp/cmp.fwd.json" "$tmp/cmp.back.json" <<'PY'
import json, sys
fwd, back = (json.load(open(f)) for f in sys.argv[1:3])
f, b = fwd[0], back[0]
print("largest |change| forwards:", f["function"], f["excess_s"], "backwards:", b["function"], b["excess_s"])
ok = f["function"] == "queue_push" and f["excess_s"] < 0 and f["share"] < 0
ok = ok and b["function"] == "queue_push" and b["excess_s"] > 0 and abs(b["excess_s"] + f["excess_s"]) < 1e-9
sys.exit(0 if ok else 1)
PY
