#!/usr/bin/env bash
# Conformance: thousands of threads waiting on one condition
# variable in several forked processes (pthread_cond_broadcast/1-2). Same
# behaviour natively and preloaded; the time ratio is printed, not asserted.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
CONF_TIMEOUT=100
conf_case cond_broadcast_thousands "$WORKLOADS_USER/conf_cond_thousands"
conf_done
