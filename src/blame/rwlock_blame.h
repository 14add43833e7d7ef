/* Blame verbs for rwlocks (docs/DESIGN.md rule 3, shared holders): while k
 * threads hold the lock together, each is blamed 1/k of what accrues.
 * k is read from glibc's rwlock word at each event and kept in
 * lb_mon.held for the next interval. */
#ifndef LB_RWLOCK_BLAME_H
#define LB_RWLOCK_BLAME_H
#include <pthread.h>
#include <stdbool.h>

#include "blame/blame.h"
#include "blame/rw_holds.h"

/* A blocking rdlock/wrlock begins / ends waiting (k is re-read, and
 * waiting readers are kept out of it). */
void lb_rw_wait_begin(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool reader,
                      lb_wait_t *wait);
void lb_rw_wait_end(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool reader,
                    lb_wait_t *wait);
/* The calling thread now holds rw (after the real acquire succeeded). */
void lb_rw_acquired(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool contended);
/* Before the real unlock: collect this holder's blame; NULL hold when it
 * has nothing to account (fast path). */
bool lb_rw_release_collect(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, lb_hold_t *hold);
/* The calling thread's stack of rwlock holds (rw_holds.h): push a hold of
 * mon begun at blame clock `at`; pop its newest hold of mon (false if
 * none: acquired before monitoring, or the stack was full). */
void lb_rw_hold_push(lb_thread_t *self, const lb_mon_t *mon, double at, bool contended);
bool lb_rw_hold_pop(lb_thread_t *self, const lb_mon_t *mon, lb_rw_hold_t *out);
#endif
