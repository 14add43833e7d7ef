/* Process-shared mutexes (PTHREAD_PROCESS_SHARED, in memory the tree's
 * processes share): their blame across processes (blame/shared_objs.h).
 * glibc keeps no spare word in them that every process could use for an
 * lb_mon (the stash of mutex_ops.h is per process), so they are not
 * monitored kinds: each process looks its lb_mon up in the object map,
 * for the victims' view, and the record in the tree's shared table
 * carries the accrual. Reached from mutex_ops.c's general paths only,
 * for a mutex that is not a monitored kind; one that has no record (not
 * initialized process-shared in this tree) gets the real call. Every
 * function returns exactly what the real glibc call returned. */
#ifndef LB_LOCKS_PSHARED_MUTEX_H
#define LB_LOCKS_PSHARED_MUTEX_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "blame/blame.h"
#include "core/thread.h"

/* pthread_mutex_init(m, attr) succeeded: a process-shared m gets its
 * record. */
void lb_pshared_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
/* A lock (try: trylock; timed: with clock and abstime, as mutex_ops.c's
 * real_lock) by self, which is monitored. */
int lb_pshared_mutex_lock(lb_thread_t *self, pthread_mutex_t *m, clockid_t clock,
                          const struct timespec *abstime, bool timed, bool try);
int lb_pshared_mutex_unlock(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site);
/* A cond wait's release of m inside the real wait, at now (its blame, to
 * be deposited at the wait's context), and the re-acquisition after it. */
lb_hold_t lb_pshared_mutex_releasing_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now);
void lb_pshared_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now);
#endif
