/* The exported wrappers' detour while a what-if experiment runs
 * (core/whatif.h): each does the accounting around the same call the
 * wrapper makes otherwise, and returns exactly what that call returned,
 * errno included. */
#ifndef LB_INTERPOSE_WHATIF_WRAP_H
#define LB_INTERPOSE_WHATIF_WRAP_H
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/whatif.h"

int lb_whatif_mutex_lock(pthread_mutex_t *m, uintptr_t site);
int lb_whatif_mutex_trylock(pthread_mutex_t *m, uintptr_t site);
int lb_whatif_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                              uintptr_t site);
int lb_whatif_mutex_unlock(pthread_mutex_t *m, uintptr_t site);
int lb_whatif_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                        const struct timespec *abstime, uintptr_t site);
int lb_whatif_join(pthread_t t, void **ret, const struct timespec *abstime, bool timed,
                   uintptr_t site);
int lb_whatif_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site);
int lb_whatif_barrier_wait(pthread_barrier_t *b, uintptr_t site);
int lb_whatif_spin_lock(pthread_spinlock_t *l, uintptr_t site);
int lb_whatif_spin_trylock(pthread_spinlock_t *l, uintptr_t site);
int lb_whatif_spin_unlock(pthread_spinlock_t *l, uintptr_t site);
int lb_whatif_rwlock_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                          const struct timespec *abstime, uintptr_t site);
int lb_whatif_rwlock_unlock(pthread_rwlock_t *rw, uintptr_t site);
/* Before a signal, broadcast or post made at site: pay what this thread
 * owes (and speed up the code before it, if that is the site). */
void lb_whatif_before_wake(uintptr_t site);
#endif
