/* Monitored pthread mutexes.
 *
 * Where the state lives: glibc's pthread_mutex_t keeps a robust-list link
 * (__data.__list) that glibc reads and writes only for robust mutexes.
 * For the kinds we monitor (normal, recursive, errorcheck, adaptive; not
 * robust, priority-inherit/-protect or process-shared) we keep a tagged
 * pointer to the lb_mon in __list.__next: O(1), no global lock, and the
 * glibc object stays valid for glibc's own internal locking (condvars).
 * pthread_mutex_init clears the field, so a re-initialized mutex starts
 * native again. A stale tag (memcpy'd mutex, reused memory) is detected by
 * lb_mon.addr != the mutex and replaced.
 *
 * Concurrency: conversion is one CAS on the stash field, which glibc
 * never touches for these kinds, so it races only with other conversions.
 * The uncontended lock is real trylock + one load of `waiters`; the
 * uncontended unlock is one site-count increment + three loads; neither
 * takes a timestamp or an extra atomic read-modify-write. */
#include "locks/mutex_ops.h"

#include <errno.h>

#include "blame/blame.h"
#include "interpose/real.h"
#include "interpose/runtime.h"
#include "locks/lifecycle.h"

/* glibc's internal __kind flags (nptl/pthreadP.h); not public constants. */
enum {
    GLIBC_MUTEX_KIND_MASK = 0x3,     /* normal, recursive, errorcheck, adaptive */
    GLIBC_MUTEX_ROBUST = 0x10,
    GLIBC_MUTEX_PRIO_INHERIT = 0x20,
    GLIBC_MUTEX_PRIO_PROTECT = 0x40,
    GLIBC_MUTEX_PSHARED = 0x80,
    GLIBC_MUTEX_RECURSIVE = 0x1,
};
#define LB_STASH_TAG ((uintptr_t)1)

static inline uintptr_t *stash_of(pthread_mutex_t *m)
{
    return (uintptr_t *)&m->__data.__list.__next;
}

static inline bool kind_is_monitored(int kind)
{
    return (kind & (GLIBC_MUTEX_ROBUST | GLIBC_MUTEX_PRIO_INHERIT | GLIBC_MUTEX_PRIO_PROTECT |
                    GLIBC_MUTEX_PSHARED)) == 0;
}

/* The lb_mon a stash value refers to, if it still belongs to m. */
static inline lb_mon_t *mon_of_stash(uintptr_t v, const pthread_mutex_t *m)
{
    if (!(v & LB_STASH_TAG))
        return NULL;
    lb_mon_t *mon = lb_mon_from_ptr(v & ~LB_STASH_TAG);
    return mon && mon->addr == m ? mon : NULL;
}

/* Convert m on demand (Algorithm 6.2 adapted to an out-of-band field).
 * Returns NULL, leaving m native, when m's kind is not monitored,
 * lockblame is not running, or the pool is exhausted. */
LB_COLD static lb_mon_t *convert(pthread_mutex_t *m, uintptr_t seen)
{
    if (!lb_runtime_monitoring() || !kind_is_monitored(m->__data.__kind))
        return NULL;
    lb_mon_t *fresh = lb_mon_alloc(m, LB_OBJ_MUTEX);
    if (!fresh)
        return NULL;
    uintptr_t want = (uintptr_t)fresh | LB_STASH_TAG;
    while (!__atomic_compare_exchange_n(stash_of(m), &seen, want, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
        lb_mon_t *winner = mon_of_stash(seen, m);
        if (winner) {
            lb_mon_free(fresh);
            return winner;
        }
    }
    return fresh;
}

static inline lb_mon_t *mon_or_convert(pthread_mutex_t *m)
{
    uintptr_t v = __atomic_load_n(stash_of(m), __ATOMIC_ACQUIRE);
    lb_mon_t *mon = mon_of_stash(v, m);
    return lb_likely(mon != NULL) ? mon : convert(m, v);
}

lb_mon_t *lb_mutex_mon(pthread_mutex_t *m)
{
    return mon_or_convert(m);
}

/* Give back the state of a mutex being destroyed or re-initialized. */
static void retire(pthread_mutex_t *m)
{
    uintptr_t v = __atomic_load_n(stash_of(m), __ATOMIC_ACQUIRE);
    lb_mon_t *mon = mon_of_stash(v, m);
    if (mon && __atomic_compare_exchange_n(stash_of(m), &v, 0, false, __ATOMIC_ACQ_REL,
                                           __ATOMIC_RELAXED))
        lb_mon_retire(mon);
}

int lb_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    if (m && kind_is_monitored(m->__data.__kind))
        retire(m); /* memory reused without destroy */
    return lb_real.mutex_init(m, attr);
}

int lb_mutex_destroy(pthread_mutex_t *m)
{
    int rc = lb_real.mutex_destroy(m);
    if (rc == 0)
        retire(m); /* glibc's destroy leaves __list alone */
    return rc;
}

/* True when the calling thread owns m and this unlock really releases it. */
static bool unlock_releases(const lb_thread_t *self, const pthread_mutex_t *m)
{
    if (m->__data.__owner != self->tid)
        return false; /* not ours: the real call decides (EPERM or UB) */
    if ((m->__data.__kind & GLIBC_MUTEX_KIND_MASK) == GLIBC_MUTEX_RECURSIVE &&
        m->__data.__count > 1)
        return false; /* an inner unlock of a recursive mutex */
    return true;
}

static bool acquire_is_nested(const pthread_mutex_t *m)
{
    return (m->__data.__kind & GLIBC_MUTEX_KIND_MASK) == GLIBC_MUTEX_RECURSIVE &&
           m->__data.__count > 1;
}

static inline void note_acquired(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon)
{
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0) &&
        !acquire_is_nested(m))
        lb_hold_begins(self, mon);
    mon->acquisitions++;
}

LB_NOINLINE static int lock_contended(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                                      clockid_t clock, const struct timespec *abstime,
                                      bool timed)
{
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_MUTEX, &wait);
    int rc;
    if (!timed)
        rc = lb_real.mutex_lock(m);
    else if (clock < 0)
        rc = lb_real.mutex_timedlock(m, abstime);
    else
        rc = lb_real.mutex_clocklock(m, clock, abstime);
    bool holds = rc == 0 && !acquire_is_nested(m);
    lb_wait_end(self, &wait, holds);
    if (rc == 0)
        mon->acquisitions++;
    return rc;
}

int lb_mutex_lock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_real.mutex_lock(m);
    lb_mon_t *mon = mon_or_convert(m);
    if (lb_unlikely(!mon))
        return lb_real.mutex_lock(m);
    int rc = lb_real.mutex_trylock(m);
    if (lb_likely(rc == 0)) {
        note_acquired(self, m, mon);
        return 0;
    }
    if (rc != EBUSY)
        return rc; /* EAGAIN (recursion limit), EINVAL: lock would say the same */
    return lock_contended(self, m, mon, -1, NULL, false);
}

int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_real.mutex_trylock(m);
    lb_mon_t *mon = mon_or_convert(m);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0 && mon)
        note_acquired(self, m, mon);
    return rc;
}

int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site)
{
    lb_thread_t *self = lb_self;
    lb_mon_t *mon = NULL;
    if (lb_likely(self && !self->busy))
        mon = mon_or_convert(m);
    if (!mon)
        return clock < 0 ? lb_real.mutex_timedlock(m, abstime)
                         : lb_real.mutex_clocklock(m, clock, abstime);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0) {
        note_acquired(self, m, mon);
        return 0;
    }
    if (rc != EBUSY)
        return rc;
    return lock_contended(self, m, mon, clock, abstime, true);
}

LB_NOINLINE static int unlock_accounted(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                                        uintptr_t site)
{
    if (!unlock_releases(self, m))
        return lb_real.mutex_unlock(m);
    lb_hold_t hold = lb_hold_ends(self, mon);
    int rc = lb_real.mutex_unlock(m);
    lb_deposit(self, &hold, LB_OBJ_MUTEX, site);
    return rc;
}

int lb_mutex_unlock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_real.mutex_unlock(m);
    lb_mon_t *mon = mon_or_convert(m);
    if (lb_unlikely(!mon))
        return lb_real.mutex_unlock(m);
    lb_site_count_release(&self->sites, site, LB_OBJ_MUTEX);
    if (lb_unlikely(lb_release_needs_accounting(mon)))
        return unlock_accounted(self, m, mon, site);
    return lb_real.mutex_unlock(m);
}

void lb_mutex_released_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site)
{
    if (!lb_release_needs_accounting(mon) || !unlock_releases(self, m))
        return;
    lb_hold_t hold = lb_hold_ends(self, mon);
    lb_deposit(self, &hold, LB_OBJ_MUTEX, site);
}

void lb_mutex_acquired_inside(lb_thread_t *self, lb_mon_t *mon)
{
    if (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0)
        lb_hold_begins(self, mon);
    mon->acquisitions++;
}
