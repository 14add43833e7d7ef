#!/usr/bin/env bash
# Conformance (issues 13, 14): cancellation and signals. A deferred cancel
# pending while blocked in pthread_mutex_lock is acted on only at the next
# real cancellation point (pthread_cancel/1-3); a signal storm during
# create/detach/join and every lock kind leaves return values and errno as
# natively. The fatal signals lockblame catches to write its profile show
# their default dispositions to the program, which may install its own
# handler where the default is in force (conf_fatal_disp.c). Native vs
# preloaded, compared.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
conf_case cancel_pending_in_lock "$WORKLOADS_USER/conf_cancel_lock"
conf_case signal_storm_returns "$WORKLOADS_USER/conf_sigstorm"
conf_case fatal_dispositions "$WORKLOADS_USER/conf_fatal_disp"
conf_done
