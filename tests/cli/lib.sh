# Shared setup for the CLI integration tests (tests/integration/cli_*.sh).
# Source it after setting ROOT. Provides:
#   L           the lockblame CLI
#   T           a temporary directory, removed on exit
#   FX          $T/fx, the fixture databases of tests/cli/make_fixture.py
#   check DESC CMD...        run CMD; fail the test unless it exits 0
#   usage_error DESC CMD...  expect exit 2 and exactly one stderr line
#                            starting with "lockblame: "
#   json_check DESC FILE PY  evaluate the python expression PY with `rows`
#                            bound to the parsed JSON of FILE; fail unless true
#   fail MSG                 print and exit 1
set -u

L=${LOCKBLAME_CLI:-$ROOT/build/lockblame}
if [ ! -x "$L" ]; then
    echo "FAIL: $L is not built (make build/lockblame)"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/lockblame-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
FX=$T/fx
python3 "$ROOT/tests/cli/make_fixture.py" "$FX" || { echo "FAIL: fixture generation"; exit 1; }
NCHECKS=0

fail() {
    echo "FAIL: $*"
    exit 1
}

check() {
    local desc=$1; shift
    if ! "$@" > "$T/out" 2> "$T/err"; then
        echo "--- stderr:"; cat "$T/err"
        fail "$desc: '$*' exited $?"
    fi
    NCHECKS=$((NCHECKS + 1))
    echo "ok: $desc"
}

usage_error() {
    local desc=$1; shift
    local rc=0
    "$@" > "$T/out" 2> "$T/err" || rc=$?
    [ "$rc" -eq 2 ] || { cat "$T/err"; fail "$desc: exit $rc, want 2"; }
    [ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; fail "$desc: stderr is not one line"; }
    grep -q '^lockblame: ' "$T/err" || { cat "$T/err"; fail "$desc: stderr does not start with 'lockblame: '"; }
    [ ! -s "$T/out" ] || fail "$desc: wrote to stdout"
    NCHECKS=$((NCHECKS + 1))
    echo "ok: $desc -> $(cat "$T/err")"
}

json_check() {
    local desc=$1 file=$2 expr=$3
    python3 - "$file" "$expr" <<'PY' || fail "$desc: $expr"
import json, sys
rows = json.load(open(sys.argv[1]))
def near(a, b, eps=1e-6):
    return abs(a - b) <= eps
def row(**kw):
    m = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
    if len(m) != 1:
        raise SystemExit("want one row with %r, found %d" % (kw, len(m)))
    return m[0]
ok = eval(sys.argv[2], {"rows": rows, "near": near, "row": row})
if not ok:
    print("rows:", json.dumps(rows, indent=1)[:3000])
    sys.exit(1)
PY
    NCHECKS=$((NCHECKS + 1))
    echo "ok: $desc"
}
