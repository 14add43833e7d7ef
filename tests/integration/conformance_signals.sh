#!/usr/bin/env bash
# Conformance (issues 13, 14): cancellation and signals. A deferred cancel
# pending while blocked in pthread_mutex_lock is acted on only at the next
# real cancellation point (pthread_cancel/1-3); a signal storm during
# create/detach/join and every lock kind leaves return values and errno as
# natively. Native vs preloaded, compared.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
conf_case cancel_pending_in_lock "$WORKLOADS_USER/conf_cancel_lock"
conf_case signal_storm_returns "$WORKLOADS_USER/conf_sigstorm"
conf_done
