#!/usr/bin/env bash
# Every tracked C and C++ file is formatted as .clang-format says. The
# style's output differs between clang-format major versions, so the check
# runs only with the version the tree is formatted with (Debian 12's, 14):
# with another one, or none, it is skipped (exit 77), never guessed.
. "$(dirname "$0")/../lib/common.sh"
cd "$ROOT"

want_major=14
command -v clang-format >/dev/null || { echo "SKIP: needs clang-format $want_major"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$major" = "$want_major" ] || { echo "SKIP: needs clang-format $want_major (found ${major:-?})"; exit 77; }

# The checker can fail: a misformatted copy of a file is rejected.
bad='int  f( int x ){return x;}'
fixed=$(printf '%s\n' "$bad" | clang-format --style=file --assume-filename="$ROOT/src/x.c")
[ -n "$fixed" ] && [ "$fixed" != "$bad" ] || fail "clang-format left a misformatted file as it was"

mapfile -t files < <(git ls-files '*.c' '*.h' '*.cc')
[ ${#files[@]} -gt 100 ] || fail "found only ${#files[@]} C files"
present=()
for f in "${files[@]}"; do
    [ -f "$f" ] && present+=("$f") # else deleted in the work tree, not yet committed
done
# One clang-format for all the files (one a file takes minutes on a busy
# machine); it names each file that differs in its diagnostics.
if ! clang-format --dry-run --Werror "${present[@]}" >/dev/null 2>"$tmp/diag"; then
    bad_files=$(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' "$tmp/diag" | sort -u | tr '\n' ' ')
    echo "not formatted (run: clang-format -i FILE): ${bad_files:-$(head -3 "$tmp/diag")}"
    exit 1
fi
echo "${#files[@]} files formatted"
