#!/usr/bin/env bash
# Conformance (issues 13, 14): threads on stacks the program provides.
# pthread_exit/6-1, pthread_create/14-1 and pthread_detach/4-3 scenarios on
# 16 KiB malloc'd stacks (the last two under a SIGUSR1 storm), coroutines
# on makecontext stacks, and the memory below no-guard minimum stacks
# (pthread_create/3-2). Each workload runs natively and preloaded; the
# program's exit status and output must be the same.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
conf_case small_stack_exit "$WORKLOADS_USER/conf_small_stack" exit
conf_case small_stack_create_storm "$WORKLOADS_USER/conf_small_stack" create-storm
conf_case small_stack_detach_storm "$WORKLOADS_USER/conf_small_stack" detach-storm
conf_case ucontext_coroutines "$WORKLOADS_USER/conf_ucontext"
conf_case noguard_stack "$WORKLOADS_USER/conf_noguard_stack"
conf_done
