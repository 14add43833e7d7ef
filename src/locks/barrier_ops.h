/* Barriers (docs/DESIGN.md rule 3): an episode's idleness is blamed on the
 * barrier-wait call of the last thread to arrive. Returns what the real
 * call returned. */
#ifndef LB_BARRIER_OPS_H
#define LB_BARRIER_OPS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "blame/blame.h"

int lb_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count);
int lb_barrier_destroy(pthread_barrier_t *b);
int lb_barrier_wait(pthread_barrier_t *b, uintptr_t site);
/* A monitored barrier's arrival, before the real wait (any barrier whose
 * episodes need barrier_count arrivals: pthread's, an OpenMP team's):
 * counts the call at site; the last arrival gets the episode's blame at
 * site and returns false; any other returns true with its wait begun in
 * *wait, for lb_wait_end(self, wait, false) after the real wait. */
bool lb_barrier_enter(lb_thread_t *self, lb_mon_t *mon, uintptr_t site, lb_wait_t *wait);
#endif
