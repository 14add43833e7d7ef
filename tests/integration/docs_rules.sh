#!/usr/bin/env bash
# The project's design page is the one the code cites, and the tree speaks
# in the present tense (tests/lib/check_docs_rules.py):
#   - every "docs/DESIGN.md rule N" in src/, tests/ and README.md names a
#     numbered rule of docs/DESIGN.md, and every 'docs/DESIGN.md "Section"'
#     one of its headings; DESIGN.md is always cited as docs/DESIGN.md;
#   - src/, tests/, docs/ and README.md hold no session or issue numbers
#     and no dates (a figures table of docs/PERFORMANCE.md may date its
#     measurement): history belongs to git.
# The checker is first shown to fail on planted violations, one at a time.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || { echo "SKIP: needs python3"; exit 77; }
command -v git >/dev/null || { echo "SKIP: needs git"; exit 77; }
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
check=$ROOT/tests/lib/check_docs_rules.py

# A copy of the design page and one planted file per violation.
mkdir -p "$tmp/tree/docs" "$tmp/tree/src"
cp "$ROOT/docs/DESIGN.md" "$tmp/tree/docs/"
plant() { # NAME TEXT: the checker must reject a file holding TEXT
    printf '%s\n' "$2" >"$tmp/tree/src/$1"
    if python3 "$check" "$tmp/tree" "src/$1" >"$tmp/out" 2>&1; then
        bad "the checker accepted $1: $2"
    else
        echo "  rejected $1: $(head -n1 "$tmp/out")"
    fi
}
plant rule.c '/* the holder is blamed (docs/DESIGN.md rule 99) */'
plant range.c '/* see docs/DESIGN.md rules 5-42 */'
plant wrapped.c $'/* shared holders (docs/DESIGN.md\n * rule 77) */'
plant section.c '/* docs/DESIGN.md "No such section" says so */'
plant spelling.c '/* shared holders (DESIGN rule 3) */'
# (the planted words are split here so that this file itself stays clean)
plant session.c '/* measured in sess''ion 8 */'
plant issue.sh '# the target of iss''ue 9'
plant date.h '/* used until 20''26-11 */'
# ... and accepts what is right.
printf '%s\n' '/* docs/DESIGN.md rules 2-3 and rule 6; docs/DESIGN.md "Process trees" */' \
    "touch -d '2020-01-01' file # a date given as data" >"$tmp/tree/src/good.c"
python3 "$check" "$tmp/tree" src/good.c >"$tmp/out" 2>&1 || bad "the checker rejected a right file: $(cat "$tmp/out")"

echo "== the tree"
python3 "$check" "$ROOT" || bad "see the lines above"
[ "$errors" -eq 0 ] || exit 1
