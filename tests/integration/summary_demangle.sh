#!/usr/bin/env bash
# The library's stderr summary names a C++ release site demangled: the top
# release site of tests/workloads_user/cxx_queue.cc is app::Queue::push(int),
# spelled as the program's own __PRETTY_FUNCTION__ says, never as the
# mangled _ZN3app5Queue4pushEi. Built -O1 without sibling calls, like
# tests/workloads: this checks the summary's spelling; where -O2 code puts
# the release site is the accuracy tests' subject.
source "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_LIB"
command -v g++ >/dev/null || fail "g++ is not installed (scripts/install-deps.sh)"
g++ -O1 -fno-optimize-sibling-calls -g -pthread -o "$tmp/cxx_queue" "$ROOT/tests/workloads_user/cxx_queue.cc"
LOCKBLAME_OUTPUT=$tmp/cxx.db preloaded "$tmp/cxx_queue" >"$tmp/out" 2>"$tmp/err"
cat "$tmp/err"
pretty=$(sed -n 2p "$tmp/out")          # "void app::Queue::push(int)"
name=${pretty#void }                    # what a demangler prints
grep -q '^lockblame: top release site: ' "$tmp/err" || fail "no top release site line"
grep '^lockblame: top release site: ' "$tmp/err" >"$tmp/top"
grep -q '_Z' "$tmp/top" && fail "mangled name in the summary"
grep -qF "top release site: $name" "$tmp/err" || fail "summary does not name '$name'"
echo "ok: $name"
