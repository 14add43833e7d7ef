/* OpenMP locks and critical sections (libgomp's omp_*_lock and
 * GOMP_critical_*), blamed as mutexes (docs/DESIGN.md rule 3): idleness that
 * accrues while a thread holds one is blamed on the call that releases
 * it; while nobody holds it, it is hand-off latency.
 *
 * The wrappers (interpose/gomp.c) bracket each real call with these
 * verbs; key is the lock's address, a named critical section's pointer
 * (GOMP_critical_name_start's argument) or lb_omp_unnamed_critical. The
 * real calls' results and effects are untouched: omp_set_nest_lock goes
 * through omp_test_nest_lock first, which libgomp defines as the same
 * acquisition without the wait. */
#ifndef LB_OMP_LOCK_OPS_H
#define LB_OMP_LOCK_OPS_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/blame.h"

/* The key of the unnamed critical section (libgomp keeps its lock private). */
extern const char lb_omp_unnamed_critical;

typedef struct lb_omp_hold {
    lb_thread_t *self;   /* NULL: not monitored, nothing to do after the real call */
    lb_mon_t *mon;       /* the lock's state (kind mutex) */
    uint32_t *occupants; /* threads holding or waiting for it, see omp_lock_ops.c */
    bool waits;          /* a wait was begun in `wait` */
    lb_wait_t wait;
} lb_omp_hold_t;

/* Before a blocking acquisition of key (omp_set_lock, a critical
 * section's start) and after it returned, holding key. */
void lb_omp_lock_begin(const void *key, lb_omp_hold_t *h);
void lb_omp_lock_end(lb_omp_hold_t *h);
/* A non-blocking acquisition of key succeeded (omp_test_lock, a nest
 * lock's first omp_test_nest_lock): it holds key from now on. */
void lb_omp_lock_taken(const void *key);
/* Before the real call that frees key (site: that call's return address)
 * and after it. */
void lb_omp_unlock_begin(const void *key, uintptr_t site, lb_omp_hold_t *h);
void lb_omp_unlock_end(lb_omp_hold_t *h);
/* Nest locks, by their owner: the nesting depth the last acquisition
 * left (what omp_test_nest_lock returned), and before each
 * omp_unset_nest_lock, whether it frees the lock (depth 1; the depth goes
 * down by one either way). False for a lock that is not monitored. */
void lb_omp_nest_depth_set(const void *key, uint32_t depth);
bool lb_omp_nest_unset_frees(const void *key);
#endif
