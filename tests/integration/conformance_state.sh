#!/usr/bin/env bash
# Conformance (issues 13, 14): state the program can see. All
# PTHREAD_KEYS_MAX keys creatable (pthread_key_create/speculative/5-1), the
# first open() gets the same descriptor as natively, a process-private spin
# lock used across fork (pthread_spin_init/2-2), an uninitialised spin
# lock holding 0x41414141 and spin locks released out of acquisition order,
# by another thread or after a re-init behave as natively; a program whose
# allocator takes a pthread mutex (which glibc calls under a thread's own
# lock, as jemalloc's is) creates, runs and joins its threads as natively.
# Native vs preloaded, compared.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTLIB/conformance.sh"
conf_case pthread_keys_all "$WORKLOADS_USER/conf_keys"
conf_case first_open_fd "$WORKLOADS_USER/conf_first_fd"
conf_case spin_private_across_fork "$WORKLOADS_USER/conf_spin_fork"
conf_case spin_uninitialised "$WORKLOADS_USER/conf_spin_garbage"
conf_case spin_release_order "$WORKLOADS_USER/conf_spin_release_order"
conf_case locking_allocator "$WORKLOADS_USER/conf_locking_malloc"
conf_done
