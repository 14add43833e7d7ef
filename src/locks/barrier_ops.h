/* Barriers (docs/DESIGN.md rule 3): an episode's idleness is blamed on the
 * barrier-wait call of the last thread to arrive. Returns what the real
 * call returned. */
#ifndef LB_BARRIER_OPS_H
#define LB_BARRIER_OPS_H
#include <pthread.h>
#include <stdint.h>

int lb_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count);
int lb_barrier_destroy(pthread_barrier_t *b);
int lb_barrier_wait(pthread_barrier_t *b, uintptr_t site);
#endif
