#!/usr/bin/env bash
# Return values and errno of wrapped calls (EBUSY, EDEADLK, EPERM, ETIMEDOUT,
# EINVAL, EOWNERDEAD, ...) are the same with and without the preload.
. "$(dirname "$0")/../lib/common.sh"
need "$WORKLOADS/errno_returns" "$LOCKBLAME_LIB"

echo "== native"
"$WORKLOADS/errno_returns" || fail "native run exited $? (the workload itself is wrong)"
echo "== preloaded"
LOCKBLAME_OUTPUT=$tmp/out.db preloaded "$WORKLOADS/errno_returns" || fail "preloaded run exited $?"
need "$tmp/out.db"
