#!/usr/bin/env bash
# Bad input and bad usage: exit 2 and exactly one "lockblame: " line on
# stderr, nothing on stdout; --help exits 0 with usage on stdout.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/cli/lib.sh"

usage_error "missing DB file" "$L" report "$T/nonexistent.db"
usage_error "empty file" "$L" report "$FX/empty.db"
usage_error "text file" "$L" report "$FX/text.db"
usage_error "truncated DB" "$L" report "$FX/truncated.db"
usage_error "corrupt DB" "$L" report "$FX/corrupt.db"
usage_error "missing tables" "$L" report "$FX/notable.db"
usage_error "a newer schema version" "$L" report "$FX/v2.db"
grep -q 'newer lockblame' "$T/err" || fail "v2 message does not say 'newer lockblame'"
usage_error "directory as DB" "$L" report "$FX"
mkdir "$T/empty"
usage_error "no lockblame.*.db in cwd" sh -c "cd '$T/empty' && exec '$L' report"
usage_error "compare with a bad DB" "$L" compare "$FX/base.db" "$FX/text.db"
usage_error "compare with one DB" "$L" compare "$FX/base.db"
usage_error "whatif --show of a missing DB" "$L" whatif --show "$T/nonexistent.db"
usage_error "whatif --show of a corrupt DB" "$L" whatif --show "$FX/corrupt.db"
usage_error "whatif --show of a directory" "$L" whatif --show "$FX"
usage_error "whatif of a truncated profile" "$L" whatif "$FX/truncated.db"
usage_error "whatif --show of a profile without results" "$L" whatif --show "$FX/base.db"

usage_error "no command" "$L"
usage_error "unknown command" "$L" frobnicate
usage_error "unknown top-level flag" "$L" --frob
usage_error "unknown report flag" "$L" report --frob "$FX/base.db"
usage_error "unknown short flag" "$L" report -z "$FX/base.db"
usage_error "-n without value" "$L" report -n
usage_error "-n not a number" "$L" report -n x "$FX/base.db"
usage_error "unknown metric" "$L" report --metric speed "$FX/base.db"
usage_error "unknown format" "$L" report --format xml "$FX/base.db"
usage_error "two views" "$L" report --flat --by-lock "$FX/base.db"
usage_error "two DBs to report" "$L" report "$FX/base.db" "$FX/more.db"
usage_error "compare --format folded" "$L" compare --format folded "$FX/base.db" "$FX/more.db"
usage_error "unknown compare flag" "$L" compare --frob "$FX/base.db" "$FX/more.db"
usage_error "unknown run flag" "$L" run -x -- true
usage_error "run without program" "$L" run
usage_error "run -F not a number" "$L" run -F fast -- true
usage_error "unknown events flag" "$L" events --frob

for args in "--help" "-h" "run --help" "run -h" "report --help" "report -h" \
            "compare --help" "compare -h" "events --help" "events -h"; do
    # shellcheck disable=SC2086
    "$L" $args > "$T/out" 2> "$T/err" || fail "lockblame $args exited $?"
    grep -q '^usage: lockblame' "$T/out" || fail "lockblame $args: no usage on stdout"
    [ ! -s "$T/err" ] || fail "lockblame $args wrote to stderr"
    echo "ok: lockblame $args"
done
echo "PASS: $NCHECKS error checks + help"
