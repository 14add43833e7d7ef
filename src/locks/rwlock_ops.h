/* Monitored rwlocks: the logic behind the exported wrappers. Returns what
 * the real call returned. */
#ifndef LB_RWLOCK_OPS_H
#define LB_RWLOCK_OPS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/timeout.h"

/* clock: LB_WAIT_FOREVER (blocking), LB_WAIT_REALTIME (timed), else the clock variant's clock;
 * try: trylock (never waits). */
int lb_rwlock_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                   const struct timespec *abstime, uintptr_t site);
int lb_rwlock_unlock(pthread_rwlock_t *rw, uintptr_t site);
int lb_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr);
int lb_rwlock_destroy(pthread_rwlock_t *rw);
#endif
