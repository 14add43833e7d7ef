/* Monitored pthread mutexes: conversion, lifecycle and slow paths. The
 * representation and the inline fast paths are described in mutex_ops.h.
 *
 * Concurrency: conversion is one CAS on the stash field, which glibc
 * never touches for the monitored kinds, so it races only with other
 * conversions; the loser returns its lb_mon to the pool. */
#include "locks/mutex_ops.h"

#include "core/phase.h"
#include <sys/single_threaded.h>

#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "util/own_memory.h"
#include "util/timeout.h"

/* glibc's internal __kind flags (nptl/pthreadP.h); not public constants. */
enum {
    GLIBC_MUTEX_KIND_MASK = 0x3, /* normal, recursive, errorcheck, adaptive */
    GLIBC_MUTEX_RECURSIVE = 0x1,
    GLIBC_MUTEX_ROBUST = 0x10,
    GLIBC_MUTEX_PRIO_INHERIT = 0x20,
    GLIBC_MUTEX_PRIO_PROTECT = 0x40,
    GLIBC_MUTEX_PSHARED = 0x80,
};

static bool kind_is_monitored(int kind)
{
    return (kind & (GLIBC_MUTEX_ROBUST | GLIBC_MUTEX_PRIO_INHERIT | GLIBC_MUTEX_PRIO_PROTECT |
                    GLIBC_MUTEX_PSHARED)) == 0;
}

/* Algorithm 6.2, adapted to an out-of-band field. */
lb_mon_t *lb_mutex_convert(pthread_mutex_t *m, uintptr_t seen)
{
    if (!lb_runtime_monitoring() || !kind_is_monitored(m->__data.__kind))
        return NULL;
    lb_mon_t *fresh = lb_mon_alloc(m, LB_OBJ_MUTEX);
    if (!fresh)
        return NULL;
    uintptr_t want = (uintptr_t)fresh | LB_STASH_TAG;
    if (__libc_single_threaded) {
        /* No other thread can convert m: glibc's own step skips its
         * atomics here too. */
        __atomic_store_n(lb_mutex_stash(m), want, __ATOMIC_RELEASE);
        lb_mon_published(fresh, m);
        return fresh;
    }
    while (!__atomic_compare_exchange_n(lb_mutex_stash(m), &seen, want, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        lb_mon_t *winner = lb_mutex_mon_of_stash(seen, m);
        if (winner) {
            lb_mon_free(fresh);
            return winner;
        }
    }
    lb_mon_published(fresh, m);
    return fresh;
}

lb_mon_t *lb_mutex_mon(pthread_mutex_t *m)
{
    return lb_mutex_mon_or_convert(m);
}

bool lb_mutex_acquire_is_nested(const pthread_mutex_t *m)
{
    return (m->__data.__kind & GLIBC_MUTEX_KIND_MASK) == GLIBC_MUTEX_RECURSIVE &&
           m->__data.__count > 1;
}

/* Give back the state of a mutex being destroyed or re-initialized. The
 * claim on lb_mon.addr (one CAS, none while single-threaded) is what
 * arbitrates against the orphan sweep; the stash is then ours to clear
 * with a plain store (a lock racing its own destroy or init is undefined
 * behaviour in the program). */
static void retire(pthread_mutex_t *m)
{
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (!mon || !lb_mon_claim(mon, m))
        return;
    __atomic_store_n(lb_mutex_stash(m), 0, __ATOMIC_RELAXED);
    mon->acquisitions = *lb_mutex_acquisitions(m); /* (the word held hold_pending_ns) */
    *lb_mutex_acquisitions(m) = 0;
    lb_mon_retire_claimed(mon);
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
    return !lb_mutex_acquire_is_nested(m); /* an inner unlock of a recursive mutex */
}

int lb_mutex_lock_contended(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                            clockid_t clock, const struct timespec *abstime, bool timed)
{
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_MUTEX, &wait);
    int rc;
    if (!timed)
        rc = lb_real.mutex_lock(m);
    else if (clock == LB_WAIT_REALTIME)
        rc = lb_real.mutex_timedlock(m, abstime);
    else
        rc = lb_real.mutex_clocklock(m, clock, abstime);
    lb_wait_end(self, &wait, rc == 0 && !lb_mutex_acquire_is_nested(m));
    if (rc == 0)
        ++*lb_mutex_acquisitions(m);
    return rc;
}

int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_real.mutex_trylock(m);
    lb_mon_t *mon = lb_mutex_mon_or_convert(m);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0 && mon)
        lb_mutex_note_acquired(self, m, mon);
    return rc;
}

int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site)
{
    lb_thread_t *self = lb_self;
    lb_mon_t *mon = NULL;
    /* glibc rejects an unsupported clock before trying the lock; a bad
     * tv_nsec only when it has to wait, as we do after the attempt. */
    if (lb_likely(self && !self->busy) && !lb_clock_rejected(clock))
        mon = lb_mutex_mon_or_convert(m);
    if (!mon)
        return clock == LB_WAIT_REALTIME ? lb_real.mutex_timedlock(m, abstime)
                         : lb_real.mutex_clocklock(m, clock, abstime);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0) {
        lb_mutex_note_acquired(self, m, mon);
        return 0;
    }
    if (rc != EBUSY)
        return rc;
    return lb_mutex_lock_contended(self, m, mon, clock, abstime, true);
}

int lb_mutex_unlock_accounted(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site)
{
    if (!unlock_releases(self, m))
        return lb_real.mutex_unlock(m);
    lb_release_blame(self, mon, LB_OBJ_MUTEX, site); /* before: nothing after the release */
    return lb_real.mutex_unlock(m);
}

void lb_mutex_released_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site, const lb_wait_t *wait)
{
    if (!lb_release_needs_accounting(mon) || !unlock_releases(self, m))
        return;
    lb_hold_t hold = lb_hold_ends(self, mon);
    lb_deposit_at(self, &hold, LB_OBJ_MUTEX, site, wait->node, wait->node_id);
}

void lb_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uint64_t now)
{
    /* As a barging acquisition: the time only, no meta inside the hold. */
    if (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0)
        lb_hold_begins_deferred_at(mon, now);
    ++*lb_mutex_acquisitions(m);
}

void lb_mutex_fold_count(lb_mon_t *mon)
{
    pthread_mutex_t *m = (pthread_mutex_t *)mon->addr;
    uint64_t count = 0;
    if (!m || !lb_read_own(lb_mutex_acquisitions(m), &count, sizeof count))
        count = 0;
    mon->acquisitions = count; /* (the word held hold_pending_ns) */
}

int lb_mutex_lock_unmonitored(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_real.mutex_lock == NULL) && lb_real_resolve() != 0)
        return 0;
    return lb_real.mutex_lock(m);
}

int lb_mutex_unlock_unmonitored(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_real.mutex_unlock == NULL) && lb_real_resolve() != 0)
        return 0;
    return lb_real.mutex_unlock(m);
}

int lb_mutex_lock_general(lb_thread_t *self, pthread_mutex_t *m)
{
    lb_mon_t *mon = lb_mutex_mon_or_convert(m);
    if (!mon)
        return lb_real.mutex_lock(m);
    if (__libc_single_threaded) {
        /* Nobody to wait for: glibc's lock skips its atomics here, and so
         * do we, inline for NORMAL mutexes, else by calling it. */
        if (m->__data.__kind == 0 && m->__data.__lock == 0)
            return lb_mutex_lock_single(self, m); /* (a taken word: glibc's call below) */
        int rc = lb_real.mutex_lock(m);
        if (rc == 0)
            ++*lb_mutex_acquisitions(m);
        return rc;
    }
    int rc = lb_mutex_try_acquire(self, m);
    if (rc == 0) {
        lb_mutex_note_acquired(self, m, mon);
        return 0;
    }
    if (rc != EBUSY)
        return rc; /* EAGAIN (recursion limit), EINVAL: lock would say the same */
    return lb_mutex_lock_contended(self, m, mon, LB_WAIT_FOREVER, NULL, false);
}

int lb_mutex_acquired_with_waiters(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon)
{
    lb_mutex_note_acquired(self, m, mon);
    return 0;
}

int lb_mutex_unlock_general(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    lb_mon_t *mon = lb_mutex_mon_or_convert(m);
    if (!mon)
        return lb_real.mutex_unlock(m);
    lb_site_count_release(self->sites, site, LB_OBJ_MUTEX);
    if (lb_release_needs_accounting(mon))
        return lb_mutex_unlock_accounted(self, m, mon, site);
    return lb_real.mutex_unlock(m);
}
