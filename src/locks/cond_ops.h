/* Condition variables and semaphores: waits accrue on the object; each
 * signal/broadcast/post takes the idleness accrued since the previous one
 * (DESIGN rule 3). Every function returns what the real call returned,
 * with errno as the real call left it. */
#ifndef LB_COND_OPS_H
#define LB_COND_OPS_H
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "util/timeout.h"

/* clock: LB_WAIT_FOREVER (wait), LB_WAIT_REALTIME (timedwait),
 * else clockwait's clock. */
int lb_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                 const struct timespec *abstime, uintptr_t site);
int lb_cond_signal(pthread_cond_t *c, int broadcast, uintptr_t site);
int lb_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int lb_cond_destroy(pthread_cond_t *c);

int lb_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site);
int lb_sem_post(sem_t *s, uintptr_t site);
int lb_sem_init(sem_t *s, int pshared, unsigned value);
int lb_sem_destroy(sem_t *s);
#endif
