#!/usr/bin/env bash
# `lockblame report --format html`: one self-contained page, opened in a real
# headless browser (Debian's chromium, installed by scripts/install-deps.sh).
#   - on the fixture DB and on a real profile of the demo (taskqueue 2): the
#     page fetches nothing remote, its tables hold the known rows, and after
#     the page's script ran the DOM holds flame-graph frames, queue_push
#     among them; a screenshot is a non-empty PNG (the demo's is kept in
#     build/tests/html-report.png for humans);
#   - on a copy of the fixture whose symbols and command are hostile HTML/JS
#     (<script>, </script>, quotes, &, U+2028): every name is escaped, no
#     element is injected, and the names still render as frame text.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"
BUILD=${BUILD:-$ROOT/build}
LIB=${LOCKBLAME_LIB:-$BUILD/liblockblame.so}
DEMO=$BUILD/demo/taskqueue
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] ||
    { echo "SKIP: needs chromium (scripts/install-deps.sh installs it)"; exit 77; }
[ -x "$DEMO" ] || fail "$DEMO is not built (make build/demo/taskqueue)"
[ -f "$LIB" ] || fail "$LIB is not built (make)"

# browser FILE ARGS...: load file://FILE headless; its own profile dir, no
# network services. Output on stdout (for --dump-dom).
browser() {
    local file=$1; shift
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --disable-dev-shm-usage --hide-scrollbars \
        --user-data-dir="$T/chromium-profile" "$@" "file://$file" 2>> "$T/chromium.log"
}

# offline FILE: no remote URL anywhere in an attribute or CSS, no src=/href=
# pointing off the page.
offline() {
    local f=$1
    if grep -qiE 'https?://|//[a-z0-9.-]+\.[a-z]{2,}/' "$f"; then
        grep -noiE '.{0,40}(https?://|//[a-z0-9.-]+\.[a-z]{2,}/).{0,40}' "$f" | head -5
        fail "$f names a remote URL"
    fi
    if grep -qiE '(src|href)[[:space:]]*=' "$f"; then
        grep -noiE '.{0,40}(src|href)[[:space:]]*=.{0,40}' "$f" | head -5
        fail "$f has a src= or href= attribute"
    fi
    grep -qiE '@import|url\(' "$f" && fail "$f loads CSS resources"
    NCHECKS=$((NCHECKS + 1))
    echo "ok: $(basename "$f") fetches nothing"
}

# frames DOM MIN NAME...: the DOM holds at least MIN frame elements, each NAME
# (exact text, after entity decoding) among them, and exactly the page's two
# <script> elements.
frames() {
    local dom=$1 min=$2; shift 2
    python3 - "$dom" "$min" "$@" <<'PY' || fail "rendered frames in $dom"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
want = int(sys.argv[2])
texts = [html.unescape(t) for t in
         re.findall(r'<div class="frame[^"]*"[^>]*>([^<]*)</div>', dom)]
print("  %d frames rendered: %s" % (len(texts), ", ".join(sorted(set(texts)))[:300]))
ok = len(texts) >= want
for name in sys.argv[3:]:
    if name not in texts:
        print("  missing frame %r" % name)
        ok = False
scripts = len(re.findall(r"<script\b", dom, re.I))
if scripts != 2:
    print("  %d <script> elements, want 2" % scripts)
    ok = False
sys.exit(0 if ok else 1)
PY
    NCHECKS=$((NCHECKS + 1))
    echo "ok: $(basename "$dom"): frames rendered ($*)"
}

png() {
    local f=$1
    [ -s "$f" ] || fail "no screenshot $f (see $T/chromium.log)"
    [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$f is not a PNG"
    [ "$(stat -c %s "$f")" -gt 10000 ] || fail "$f is too small to show a report"
    NCHECKS=$((NCHECKS + 1))
    echo "ok: screenshot $(basename "$f"), $(stat -c %s "$f") bytes"
}

# --- the fixture -------------------------------------------------------------
check "html on base.db" "$L" report --format html "$FX/base.db"
cp "$T/out" "$T/base.html"
head -c 15 "$T/base.html" | grep -qx '<!DOCTYPE html>' || fail "not an HTML document"
offline "$T/base.html"
for s in 'queue_push (queue_bench.c:12)' '0x55550000a000' 'Queue::push(int)' \
         'idleness 31.5% of effort' 'hand-off latency 0.030 s'; do
    grep -qF "$s" "$T/base.html" || fail "base.html lacks '$s'"
done
echo "ok: base.html holds the header, release sites, locks and names"
browser "$T/base.html" --dump-dom > "$T/base.dom" || fail "chromium --dump-dom failed (see $T/chromium.log)"
frames "$T/base.dom" 8 "all idleness" "all work" main worker queue_push queue_pop compute \
    'Queue::push(int)' 'libc.so.6+0x9abc'
grep -q '<td class="num">0.600</td>' "$T/base.dom" || fail "base.dom: release-site table"
browser "$T/base.html" --screenshot="$T/base.png" --window-size=1280,900 > /dev/null ||
    fail "chromium --screenshot failed"
png "$T/base.png"

# --- hostile names -----------------------------------------------------------
EVIL1='<script>alert(1)</script>"'"'"'&'
EVIL2=$(printf 'operator<</*</script>*/ \xe2\x80\xa8x<!--')
cp "$FX/base.db" "$T/evil.db"
sqlite3 "$T/evil.db" "
  UPDATE frame SET function = '$(printf %s "$EVIL1" | sed "s/'/''/g")' WHERE function = 'queue_pop';
  UPDATE frame SET function = '$EVIL2' WHERE function = 'queue_push' AND line = 14;
  UPDATE frame SET file = '</script><img src=x onerror=alert(2)>.c' WHERE function = 'compute';
  UPDATE run SET command = '</title><script>alert(3)</script>';" || fail "patching evil.db"
check "html on evil.db" "$L" report --format html "$T/evil.db"
cp "$T/out" "$T/evil.html"
python3 - "$T/evil.html" <<'PY' || fail "evil.html: a name is not escaped"
import re, sys
page = open(sys.argv[1], "rb").read().decode("utf-8")
bad = [s for s in ("<script>alert", "</script><img", "<img", "</title><script", "<!--",
                   "operator<<", "\u2028", "\"'&") if s in page]
if bad:
    print("  unescaped:", bad)
    sys.exit(1)
if len(re.findall(r"<script\b", page, re.I)) != 2 or len(re.findall(r"</script", page, re.I)) != 2:
    print("  script tags:", re.findall(r"</?script[^>]*>", page, re.I))
    sys.exit(1)
for s in ("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;",
          "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e", "\\u2028"):
    if s not in page:
        print("  missing escaped form", s)
        sys.exit(1)
PY
NCHECKS=$((NCHECKS + 1))
echo "ok: evil.html: names escaped in text, attributes and the JSON"
browser "$T/evil.html" --dump-dom > "$T/evil.dom" || fail "chromium --dump-dom on evil.html"
frames "$T/evil.dom" 8 "$EVIL1" "$EVIL2" queue_push
grep -qi '<img' "$T/evil.dom" && fail "evil.dom: an <img> was injected"
echo "ok: evil.dom: no element injected"

# --- click to zoom -------------------------------------------------------------
# A copy of the fixture page with a script that clicks the idleness graph's
# queue_push frame: it becomes the focus, drawn full width, with a reset button.
cat > "$T/zoom.js" <<'JS'
(function () {
  var f = [].filter.call(document.querySelectorAll("#flame-idleness .frame"),
                         function (d) { return d.textContent === "queue_push"; })[0];
  f.click();
  var z = document.querySelector("#flame-idleness .frame.focus");
  document.body.setAttribute("data-zoomed", z.textContent + "|" + z.style.width + "|" +
    document.getElementById("crumbs-idleness").textContent);
})();
JS
python3 - "$T/base.html" "$T/zoom.js" "$T/zoom.html" <<'PY' || fail "making zoom.html"
import sys
page, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", "<script>" + js + "</script></body>"))
PY
browser "$T/zoom.html" --dump-dom > "$T/zoom.dom" || fail "chromium --dump-dom on zoom.html"
grep -q 'data-zoomed="queue_push|100%|reset zoomall › main › worker › queue_push"' "$T/zoom.dom" ||
    fail "zoom: $(grep -o 'data-zoomed="[^"]*"' "$T/zoom.dom" || echo no data-zoomed attribute)"
NCHECKS=$((NCHECKS + 1))
echo "ok: clicking queue_push zooms into it"

# --- a real profile of the demo -----------------------------------------------
LD_PRELOAD=$LIB LOCKBLAME_OUTPUT=$T/demo.db "$DEMO" 2 > /dev/null 2>&1 || fail "demo under lockblame"
check "html on the demo" "$L" report --format html "$T/demo.db"
cp "$T/out" "$T/demo.html"
offline "$T/demo.html"
browser "$T/demo.html" --dump-dom > "$T/demo.dom" || fail "chromium --dump-dom on demo.html"
frames "$T/demo.dom" 5 "all idleness" "all work" queue_push
browser "$T/demo.html" --screenshot="$T/demo.png" --window-size=1280,900 > /dev/null ||
    fail "chromium --screenshot on demo.html"
png "$T/demo.png"
mkdir -p "$BUILD/tests"
cp "$T/demo.png" "$BUILD/tests/html-report.png"
cp "$T/demo.html" "$BUILD/tests/html-report.html"
echo "ok: screenshot kept in $BUILD/tests/html-report.png (page: html-report.html)"
echo "PASS: $NCHECKS checks"
