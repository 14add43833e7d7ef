/* Monitored pthread mutexes: conversion, lifecycle and slow paths. The
 * representation and the inline fast paths are described in mutex_ops.h.
 *
 * Concurrency: the stash field, which glibc never touches for the
 * monitored kinds, changes by one CAS at a time once threads exist:
 * native or stale -> counted (lb_mutex_counted), counted -> lb_mon
 * (lb_mutex_convert), and back to native only at destroy/init. Racing
 * CASes lose to the winner's value; a conversion racing a holder's
 * acquisition is seen by the holder's reload of the stash.
 *
 * Threads: every out-of-line path here that waits or blames acts for the
 * calling kernel thread's own record, lb_thread_here_monitored of the
 * record the inline path passed (a raw clone shares its creator's
 * lb_self: sampler/foreign.h); one with none, or busy, gets the real call
 * and no blame action. A path that only counts (an acquisition without a
 * wait) counts on the record it was given, as the inline paths do. */
#include "locks/mutex_ops.h"

#include "core/phase.h"
#include <linux/futex.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "blame/mutex_sampled.h"
#include "blame/wait_deferred.h"
#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "locks/pshared_mutex.h"
#include "sampler/adopt.h"
#include "sampler/foreign.h"
#include "util/own_memory.h"
#include "util/raw_syscall.h"
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

uintptr_t lb_mutex_counted_tag LB_FORK_WRITTEN = LB_STASH_COUNTED | LB_STASH_GENERATION;

void lb_mutex_fork_child(void)
{
    /* Only the forking thread runs: no fast path reads the tag now. */
    lb_mutex_counted_tag += LB_STASH_GENERATION;
}

/* lb_mutex_counted for a stash value v that is neither the counted tag
 * nor m's lb_mon. */
static LB_NOINLINE bool counted_from(pthread_mutex_t *m, lb_mon_t **mon, uintptr_t v)
{
    for (;;) {
        if (!lb_runtime_monitoring() || !kind_is_monitored(m->__data.__kind))
            return false;
        if (__libc_single_threaded) {
            /* Nobody else can count m: plain stores, as glibc's own
             * single-threaded step. */
            *lb_mutex_acquisitions(m) = 0;
            __atomic_store_n(lb_mutex_stash(m), lb_mutex_counted_tag, __ATOMIC_RELEASE);
            return true;
        }
        /* A stale count (a stale lb_mon's, a parent's) starts over. Zeroed
         * before the CAS: nobody counts m until the CAS publishes the tag;
         * a native mutex's count is 0 already (init cleared it). (Two
         * threads' first operations racing on a stale mutex: the loser's
         * zero may land after the winner's first count, which then stays
         * in the per-kind totals only.) */
        if (v != 0)
            *lb_mutex_acquisitions(m) = 0;
        if (__atomic_compare_exchange_n(lb_mutex_stash(m), &v, lb_mutex_counted_tag, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
        if (v == lb_mutex_counted_tag)
            return true;
        *mon = lb_mutex_mon_of_stash(v, m);
        if (*mon)
            return true;
    }
}

/* The common cases inline (a cond wait's release and re-acquisition of
 * its mutex call this inside the mutex's holds). */
static inline bool counted(pthread_mutex_t *m, lb_mon_t **mon)
{
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    *mon = NULL;
    if (lb_likely(v == lb_mutex_counted_tag))
        return true;
    *mon = lb_mutex_mon_of_stash(v, m);
    return *mon || counted_from(m, mon, v);
}

bool lb_mutex_counted(pthread_mutex_t *m, lb_mon_t **mon)
{
    return counted(m, mon);
}

/* Algorithm 6.2, adapted to an out-of-band field: a counted mutex gets
 * its lb_mon with one CAS, which races only with other conversions (the
 * loser returns its lb_mon to the pool) and with the holder's reload of
 * the stash (the holder then sees the lb_mon, see lb_mutex_lock). */
lb_mon_t *lb_mutex_convert(pthread_mutex_t *m)
{
    lb_mon_t *mon;
    if (!lb_mutex_counted(m, &mon) || mon)
        return mon;
    lb_mon_t *fresh = lb_mon_alloc(m, LB_OBJ_MUTEX);
    if (!fresh)
        return NULL;
    uintptr_t seen = lb_mutex_counted_tag;
    if (!__atomic_compare_exchange_n(lb_mutex_stash(m), &seen, lb_mutex_stash_of(fresh), false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        lb_mon_free(fresh);
        return lb_mutex_mon_of_stash(seen, m); /* NULL: re-initialized meanwhile */
    }
    lb_mon_published(fresh, m);
    return fresh;
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
 * behaviour in the program). A counted mutex has nothing to give back:
 * its acquisitions are in the per-thread totals already, and init clears
 * both words. */
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
    int rc = lb_real.mutex_init(m, attr);
    if (rc == 0 && attr)
        lb_pshared_mutex_init(m, attr);
    return rc;
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
        return false;                      /* not ours: the real call decides (EPERM or UB) */
    return !lb_mutex_acquire_is_nested(m); /* an inner unlock of a recursive mutex */
}

static int real_lock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                     bool timed)
{
    if (!timed)
        return lb_real.mutex_lock(m);
    if (clock == LB_WAIT_REALTIME)
        return lb_real.mutex_timedlock(m, abstime);
    return lb_real.mutex_clocklock(m, clock, abstime);
}

int lb_mutex_real_lock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       bool timed)
{
    return real_lock(m, clock, abstime, timed);
}

/* self now holds m, which it took by exchanging its word: glibc's owner
 * and user count, then the acquisition's count (and the hold accounted
 * if exact waiters wait: the stash, on the line just written, says
 * whether m's lb_mon must be read for them, mutex_quiet.h). */
static void took_by_exchange(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon)
{
    m->__data.__owner = self->tid;
    ++m->__data.__nusers;
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    lb_mutex_note_acquired(self, m, lb_mutex_stash_is_quiet(v) ? NULL : mon);
}

/* A wait on a NORMAL mutex blamed by its holders' samples
 * (blame/mutex_sampled.h): glibc 2.36's own contended step for a
 * process-private mutex (__lll_lock_wait: exchange the lock word with 2
 * until it was free, sleeping on the futex while it reads 2; the owner and
 * user count as pthread_mutex_lock sets them). Where the call site is
 * known (site, the wrapper's return address), the first exchange comes at
 * once after the failed attempt, as glibc's does, before any bookkeeping;
 * one that takes the lock is a wait of no measured length (the
 * instructions between the two attempts), counted inside the hold
 * (lb_mutex_sampled_took_at_once). Otherwise the wait's bookkeeping runs
 * before its first sleep; after a wake-up (or a futex wait that returns
 * at once: the word changed, the holder is releasing) only the attempt's
 * clock read comes before the exchange, as in glibc, and the time is
 * credited after it (blame/mutex_sampled.h: where each piece of
 * bookkeeping runs, and why). */
static int lock_sampled(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon, lb_mutex_hot_t *slot,
                        uint64_t began, uintptr_t site)
{
    int *word = &m->__data.__lock;
    bool sleep = __atomic_load_n(word, __ATOMIC_RELAXED) == 2;
    if (site && !sleep) {
        if (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0) {
            took_by_exchange(self, m, mon);
            lb_mutex_sampled_took_at_once(self, slot, site);
            return 0;
        }
        sleep = true; /* the word is 2 now: glibc's next step is the futex wait */
    }
    lb_wait_t wait;
    uint64_t start = began ? began : lb_now_ns();
    lb_mutex_sampled_arrive(self, slot, start);
    int saved_errno = errno;
    bool begun = false;
    uint64_t tried = 0;
    for (;;) {
        if (sleep) {
            /* The wait's bookkeeping before its first sleep (and the time
             * up to each failed attempt before the next): a woken waiter
             * exchanges at once, as glibc's does. */
            if (!begun) {
                lb_mutex_sampled_wait_begin(self, mon, slot, &wait, start);
                begun = true;
            } else {
                lb_mutex_sampled_wait_piece(self, slot, &wait, tried);
            }
            /* 0: it slept and was woken; -1 (EAGAIN): the word had
             * changed, the holder is releasing: exchange at once. */
            lb_raw_syscall(SYS_futex, (long)word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 2, 0, 0, 0);
        }
        sleep = true;
        tried = lb_now_ns();
        if (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0)
            break;
    }
    if (begun)
        lb_mutex_sampled_wait_piece(self, slot, &wait, tried);
    else
        lb_mutex_sampled_wait_brief(self, slot, start, tried);
    errno = saved_errno;
    if (begun)
        lb_mutex_sampled_wait_end(self, slot);
    took_by_exchange(self, m, mon); /* exact waiters may wait too */
    return 0;
}

int lb_mutex_lock_contended(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon, clockid_t clock,
                            const struct timespec *abstime, bool timed, uint64_t began,
                            uintptr_t site)
{
    if (!timed && __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) == 0) {
        lb_mutex_hot_t *slot = lb_mutex_sampled_slot(self, mon, m, lb_mutex_stash_of(mon));
        if (slot)
            return lock_sampled(self, m, mon, slot, began, site);
    }
    lb_wait_t wait;
    lb_wait_begin_at(self, mon, LB_OBJ_MUTEX, &wait, began ? began : lb_now_ns());
    int rc = real_lock(m, clock, abstime, timed);
    lb_wait_end(self, &wait, rc == 0 && !lb_mutex_acquire_is_nested(m));
    if (rc == 0)
        lb_mutex_count_acquisition(self, m);
    return rc;
}

/* A counted mutex is busy: its first contention gives it an lb_mon (the
 * wait then begins the holder's accounting). The wait begins before the
 * conversion, whose work (and a preemption in it) is part of it, as the
 * waiter sees it. Without an lb_mon (pool exhausted), the real call,
 * still counted. */
static int lock_waiting(lb_thread_t *self, pthread_mutex_t *m, clockid_t clock,
                        const struct timespec *abstime, bool timed)
{
    uint64_t began = lb_now_ns();
    lb_mon_t *mon = lb_mutex_convert(m);
    if (mon)
        return lb_mutex_lock_contended(self, m, mon, clock, abstime, timed, began, 0);
    int rc = real_lock(m, clock, abstime, timed);
    if (rc == 0)
        lb_mutex_count_acquisition(self, m);
    return rc;
}

int lb_mutex_lock_missed(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    if (lb_unlikely(!lb_thread_here_monitored(&self)))
        return lb_real.mutex_lock(m);
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    if (v == lb_mutex_counted_tag)
        return lock_waiting(self, m, LB_WAIT_FOREVER, NULL, false);
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (mon)
        return lb_mutex_lock_contended(self, m, mon, LB_WAIT_FOREVER, NULL, false, 0, site);
    return lb_mutex_lock_general(self, m); /* native or stale: counted first */
}

int lb_mutex_acquired_unusual(lb_thread_t *self, pthread_mutex_t *m, uintptr_t v)
{
    /* self's record serves only the count here, as on the inline path:
     * the hold's accounting is the lb_mon's, whoever holds. */
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (mon) {
        lb_mutex_note_acquired(self, m, mon); /* waiters: the hold is accounted */
        return 0;
    }
    if (lb_mutex_counted(m, &mon)) /* native or stale: counted from now on */
        lb_mutex_note_acquired(self, m, mon);
    return 0;
}

int lb_mutex_acquired_now(lb_thread_t *self, pthread_mutex_t *m)
{
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    lb_mutex_note_acquired(self, m, lb_mutex_mon_of_stash(v, m));
    return 0;
}

int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon;
    if (lb_unlikely(!self || self->busy))
        return lb_real.mutex_trylock(m);
    if (!lb_mutex_counted(m, &mon))
        return lb_pshared_mutex_lock(self, m, LB_WAIT_FOREVER, NULL, false, true);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0)
        lb_mutex_acquired_now(self, m);
    return rc;
}

int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon;
    /* glibc rejects an unsupported clock before trying the lock; a bad
     * tv_nsec only when it has to wait, as we do after the attempt. */
    if (!self || self->busy || lb_clock_rejected(clock))
        return real_lock(m, clock, abstime, true);
    if (!lb_mutex_counted(m, &mon))
        return lb_pshared_mutex_lock(self, m, clock, abstime, true, false);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0)
        return lb_mutex_acquired_now(self, m);
    if (rc != EBUSY)
        return rc;
    return lock_waiting(self, m, clock, abstime, true);
}

int lb_mutex_unlock_accounted(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon, uintptr_t site)
{
    if (lb_unlikely(!lb_thread_here_monitored(&self)))
        return lb_mutex_release(m); /* a raw clone without a record: no blame action */
    if (!unlock_releases(self, m))
        return lb_real.mutex_unlock(m);
    lb_release_blame(self, mon, LB_OBJ_MUTEX, site); /* before: nothing after the release */
    return lb_mutex_release(m); /* glibc's own step, inline for NORMAL mutexes */
}

/* A release counted at site (lb_mutex_unlock_monitored's count, for a
 * site other than the one counted last): the cache of the record the
 * inline path passed, else the slow look-up, which may claim a slot, on
 * the calling thread's own record (a raw clone shares its creator's
 * lb_self, and only a table's own thread writes its keys). */
static void count_release(lb_thread_t *self, uintptr_t site)
{
    uintptr_t key = lb_site_key(site, LB_OBJ_MUTEX);
    lb_site_t *s = lb_site_probe_last(self, key, &self->last_site_key, &self->last_site);
    if (!s) {
        if (!lb_thread_here_monitored(&self))
            return;
        s = lb_site_lookup_last(self, key, &self->last_site_key, &self->last_site);
    }
    if (s)
        s->releases++;
}

int lb_mutex_unlock_accounted_at(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                                 uintptr_t site)
{
    count_release(self, site);
    return lb_mutex_unlock_accounted(self, m, mon, site);
}

int lb_mutex_unlock_counting(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    count_release(self, site);
    return lb_mutex_release(m);
}

int lb_mutex_released_counting(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site, int word)
{
    count_release(self, site);
    return word > 1 ? lb_mutex_wake_one(m) : 0;
}

lb_hold_t lb_mutex_releasing_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now)
{
    lb_mon_t *mon;
    if (!counted(m, &mon))
        return lb_pshared_mutex_releasing_inside(self, m, now);
    if (!mon || !lb_release_needs_accounting(mon) || !unlock_releases(self, m))
        return (lb_hold_t){ .blame_ns = 0 };
    return lb_hold_ends_at(self, mon, now);
}

void lb_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now)
{
    lb_mon_t *mon;
    if (!counted(m, &mon)) {
        lb_pshared_mutex_acquired_inside(self, m, now);
        return;
    }
    /* As a barging acquisition: the time only, no meta inside the hold. */
    if (mon && __atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0)
        lb_hold_begins_deferred_at(mon, now);
    lb_mutex_count_acquisition(self, m);
}

void lb_mutex_fold_count(lb_mon_t *mon)
{
    pthread_mutex_t *m = (pthread_mutex_t *)mon->addr;
    uint64_t count = 0;
    uintptr_t stash = 0;
    if (!mon->published) /* an OpenMP lock's (omp_lock_ops.c): no count kept */
        m = NULL;
    if (!m || !lb_read_own(lb_mutex_acquisitions(m), &count, sizeof count) ||
        !lb_read_own(lb_mutex_stash(m), &stash, sizeof stash))
        count = 0;
    if (m && (stash & ~LB_STASH_QUIET) != lb_mutex_stash_of(mon)) {
        /* The memory is no longer this mutex (a std::mutex that went out
         * of scope calls no destroy, and its stack was reused): the count
         * there is not ours. Its acquisitions stay in the per-kind totals;
         * the record says its own count is unknown. */
        count = 0;
        lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
        if (stats)
            stats->acquisitions_lost = 1;
    }
    mon->acquisitions = count; /* (the word held hold_pending_ns) */
}

int lb_mutex_wake_one(pthread_mutex_t *m)
{
    int saved_errno = errno;
    lb_raw_syscall(SYS_futex, (long)&m->__data.__lock, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, 0, 0, 0);
    errno = saved_errno;
    return 0;
}

int lb_mutex_lock_unmonitored(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_real.mutex_lock == NULL) && lb_real_resolve() != 0)
        return 0;
    lb_thread_t *self = lb_self;
    if (!self)
        lb_thread_adopt(); /* a thread we did not start: monitored from its next call */
    else if (self->busy && !lb_stack_here_known())
        /* busy is lb_self's: off its thread's stack this may be a raw
         * clone sharing a busy creator's TLS (sampler/foreign.h), whose
         * lock is its own record's to wait on (general: its record, or
         * the real call where it is busy itself) */
        return lb_mutex_lock_general(self, m);
    return lb_real.mutex_lock(m);
}

int lb_mutex_unlock_unmonitored(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_real.mutex_unlock == NULL) && lb_real_resolve() != 0)
        return 0;
    return lb_real.mutex_unlock(m);
}

int lb_mutex_unlock_gated(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_thread_current(); /* a raw clone: not its creator's deferred end */
    if (!self || self->busy)
        return lb_mutex_unlock_unmonitored(m);
    int rc = lb_mutex_unlock_monitored(self, m, site);
    lb_wait_deferred_released(self, m); /* keeps errno */
    return rc;
}

int lb_mutex_lock_general(lb_thread_t *self, pthread_mutex_t *m)
{
    lb_mon_t *mon;
    if (lb_unlikely(!lb_thread_here_monitored(&self)))
        return lb_real.mutex_lock(m);
    if (!lb_mutex_counted(m, &mon))
        return lb_pshared_mutex_lock(self, m, LB_WAIT_FOREVER, NULL, false, false);
    if (__libc_single_threaded) {
        /* Nobody to wait for: glibc's lock skips its atomics here, and so
         * do we, inline for NORMAL mutexes, else by calling it. */
        if (m->__data.__kind == 0 && m->__data.__lock == 0)
            return lb_mutex_lock_single(self, m); /* (a taken word: glibc's call below) */
        int rc = lb_real.mutex_lock(m);
        if (rc == 0)
            lb_mutex_count_acquisition(self, m);
        return rc;
    }
    int rc = lb_mutex_try_acquire(self, m);
    if (rc == 0)
        return lb_mutex_acquired_now(self, m);
    if (rc != EBUSY)
        return rc; /* EAGAIN (recursion limit), EINVAL: lock would say the same */
    return lock_waiting(self, m, LB_WAIT_FOREVER, NULL, false);
}

int lb_mutex_lock_first(lb_thread_t *self, pthread_mutex_t *m)
{
    if (!__libc_single_threaded || !lb_runtime_monitoring())
        return lb_mutex_lock_general(self, m);
    /* lb_mutex_counted's single-threaded step; a native mutex's count is
     * 0 already (init cleared it). */
    __atomic_store_n(lb_mutex_stash(m), lb_mutex_counted_tag, __ATOMIC_RELEASE);
    return lb_mutex_lock_single(self, m);
}

int lb_mutex_unlock_general(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    lb_mon_t *mon;
    if (lb_unlikely(!lb_thread_here_monitored(&self)))
        return lb_real.mutex_unlock(m);
    if (!lb_mutex_counted(m, &mon))
        return lb_pshared_mutex_unlock(self, m, site);
    lb_site_count_release(self, site, LB_OBJ_MUTEX);
    if (mon && lb_release_needs_accounting(mon))
        return lb_mutex_unlock_accounted(self, m, mon, site);
    return lb_real.mutex_unlock(m);
}
