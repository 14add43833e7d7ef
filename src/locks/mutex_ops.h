/* Monitored pthread mutexes: the logic behind the exported wrappers.
 * Every function returns exactly what the real glibc call returned. */
#ifndef LB_MUTEX_OPS_H
#define LB_MUTEX_OPS_H
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "interpose/thread.h"
#include "locks/monitored.h"

int lb_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int lb_mutex_destroy(pthread_mutex_t *m);
int lb_mutex_lock(pthread_mutex_t *m, uintptr_t site);
int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site);
/* timedlock (clock < 0) and clocklock share one path. */
int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site);
int lb_mutex_unlock(pthread_mutex_t *m, uintptr_t site);

/* For condition-variable waits, which release and re-acquire m inside
 * glibc: the monitored state of m, or NULL if m is not monitored. */
lb_mon_t *lb_mutex_mon(pthread_mutex_t *m);
/* m is about to be released inside glibc / was re-acquired inside glibc. */
void lb_mutex_released_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site);
void lb_mutex_acquired_inside(lb_thread_t *self, lb_mon_t *mon);
#endif
