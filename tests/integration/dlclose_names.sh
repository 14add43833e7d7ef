#!/usr/bin/env bash
# A library the program unloads before exit (7-Zip's 7z.so, where all its
# threads run) keeps its names: the profile is symbolized at exit, when
# the library is gone and the writer's own libraries may sit at its
# addresses. tests/dl/host.c loads tests/dl/plugin.c (built -O2 -g here),
# whose three threads contend on a mutex, and dlcloses it: the top release
# site and the work are named in libplugin.so, and no frame is
# "[unknown]" or named after a library loaded afterwards.
. "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB" "$LOCKBLAME_CLI"
cc -O2 -g -fPIC -shared -pthread -o "$tmp/libplugin.so" "$ROOT/tests/dl/plugin.c" || fail "cannot build the plugin"
cc -O2 -g -o "$tmp/host" "$ROOT/tests/dl/host.c" -ldl || fail "cannot build the host"

LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$tmp/host" "$tmp/libplugin.so" || fail "host exited $?"
"$LOCKBLAME_CLI" report --format json "$tmp/out.db" >"$tmp/sites.json" || fail "report exited $?"
"$LOCKBLAME_CLI" report --flat --metric work --format json "$tmp/out.db" >"$tmp/work.json" || fail "--flat exited $?"
python3 - "$tmp/sites.json" "$tmp/work.json" <<'PY' || fail "names of the unloaded library"
import json, sys
sites, work = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
top = [r for r in sites if not r["structural"]][0]
print("top release site:", top["function"], top.get("file"), top["module"], round(top["blame_s"], 3))
heavy = max(work, key=lambda r: r["exclusive_s"])
print("most work:", heavy.get("function"), heavy.get("module"), round(heavy["exclusive_s"], 3))
bad = [r for r in sites + work if "unknown" in str(r.get("function")) or
       any(m in str(r.get("module")) for m in ("libdw", "libsqlite", "libelf"))]
ok = (top["function"].startswith("plugin_") and top["module"] == "libplugin.so" and
      heavy.get("function") == "plugin_hold" and not bad)
for r in bad:
    print("misnamed:", r.get("function"), r.get("module"))
sys.exit(0 if ok else 1)
PY
