/* Monitored pthread mutexes: the logic behind the exported wrappers.
 * Every function returns exactly what the real glibc call returned.
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
 * The fast paths below are inline: the uncontended lock is glibc's own
 * CAS step (plain stores while the process is single-threaded, as glibc
 * does) plus one load of `waiters`; the uncontended unlock is one
 * site-count increment plus three loads. Neither takes a timestamp or an
 * extra atomic read-modify-write. Slow paths live in mutex_ops.c. */
#ifndef LB_MUTEX_OPS_H
#define LB_MUTEX_OPS_H
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "blame/blame.h"
#include "blame/sites.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/monitored.h"
#include "util/timeout.h"

int lb_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int lb_mutex_destroy(pthread_mutex_t *m);
int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site);
/* timedlock (clock LB_WAIT_REALTIME) and clocklock share one path. */
int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site);

/* For condition-variable waits, which release and re-acquire m inside
 * glibc: the monitored state of m, or NULL if m is not monitored. */
lb_mon_t *lb_mutex_mon(pthread_mutex_t *m);
/* m is about to be released inside glibc by the wait `wait` (its calling
 * context is the release's) / was re-acquired inside glibc, at or just
 * before `now` (the end of that wait: no second clock read). */
void lb_mutex_released_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site, const lb_wait_t *wait);
void lb_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uint64_t now);
/* The final write: add a live mutex's in-object count to its lb_mon
 * (read without faulting: the mutex's memory may be gone). */
void lb_mutex_fold_count(lb_mon_t *mon);

/* Slow paths (mutex_ops.c). lb_mutex_convert returns NULL, leaving m
 * native, when m's kind is not monitored, lockblame is not running, or
 * the pool is exhausted. */
lb_mon_t *lb_mutex_convert(pthread_mutex_t *m, uintptr_t seen);
bool lb_mutex_acquire_is_nested(const pthread_mutex_t *m);
int lb_mutex_lock_contended(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                            clockid_t clock, const struct timespec *abstime, bool timed);
int lb_mutex_unlock_accounted(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                              uintptr_t site);
/* The whole lock/unlock, out of line: conversion, kinds other than
 * NORMAL, single-threaded processes, a site-table miss. */
int lb_mutex_lock_general(lb_thread_t *self, pthread_mutex_t *m);
int lb_mutex_unlock_general(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site);
/* NORMAL mutex just acquired inline while others wait: account the hold. */
int lb_mutex_acquired_with_waiters(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon);

#define LB_STASH_TAG ((uintptr_t)1)

static inline uintptr_t *lb_mutex_stash(pthread_mutex_t *m)
{
    return (uintptr_t *)&m->__data.__list.__next;
}

/* The lb_mon a stash value refers to, if it still belongs to m. */
static inline lb_mon_t *lb_mutex_mon_of_stash(uintptr_t v, const pthread_mutex_t *m)
{
    if (!(v & LB_STASH_TAG))
        return NULL;
    lb_mon_t *mon = lb_mon_from_ptr(v & ~LB_STASH_TAG);
    return mon && mon->addr == m ? mon : NULL;
}

/* The acquisition counter of a monitored mutex lives in the mutex itself,
 * in __list.__prev, which glibc also leaves alone for the kinds we
 * monitor: that cache line is written by every lock anyway, while a write
 * to the lb_mon would make a second line ping-pong between threads on
 * every acquisition (+70% in a 2-thread lock mix). Written by the holder
 * only; folded into lb_mon.acquisitions at destroy/init and at the final
 * write. */
static inline uint64_t *lb_mutex_acquisitions(pthread_mutex_t *m)
{
    return (uint64_t *)&m->__data.__list.__prev;
}

static inline lb_mon_t *lb_mutex_mon_or_convert(pthread_mutex_t *m)
{
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    return lb_likely(mon != NULL) ? mon : lb_mutex_convert(m, v);
}

/* One acquisition attempt that never blocks; returns 0, EBUSY or the real
 * trylock's error. For a plain PTHREAD_MUTEX_NORMAL mutex (__kind == 0:
 * no recursion, error checking, robustness, priority or elision flags)
 * this is glibc's own uncontended path, done inline: CAS __lock 0 -> 1,
 * then record the owner and count the user, exactly as
 * pthread_mutex_lock does, leaving a state the real unlock accepts. It
 * saves the real trylock, which costs about 3 ns more than lock here.
 * Every other kind goes through the real trylock. */
static inline bool lb_mutex_normal_try(const lb_thread_t *self, pthread_mutex_t *m)
{
    int unlocked = 0;
    if (!__atomic_compare_exchange_n(&m->__data.__lock, &unlocked, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    m->__data.__owner = self->tid;
    ++m->__data.__nusers;
    return true;
}

static inline int lb_mutex_try_acquire(const lb_thread_t *self, pthread_mutex_t *m)
{
    if (lb_likely(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) == 0))
        return lb_mutex_normal_try(self, m) ? 0 : EBUSY;
    return lb_real.mutex_trylock(m);
}

static inline void lb_mutex_note_acquired(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon)
{
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0) &&
        !lb_mutex_acquire_is_nested(m))
        lb_hold_begins_deferred(mon);
    ++*lb_mutex_acquisitions(m);
}

/* PTHREAD_MUTEX_NORMAL in a single-threaded process, as glibc 2.36 does
 * it (pthread_mutex_lock.c with x86's lll_lock: no atomic instruction
 * while __libc_single_threaded): a free lock word becomes 1 with a plain
 * store, then owner and user count as on the threaded path. A taken word
 * (relocking a NORMAL mutex: a self-deadlock) goes to glibc. Only this
 * thread can make the process multi-threaded, so the flag cannot change
 * under us. */
static inline int lb_mutex_lock_single(lb_thread_t *self, pthread_mutex_t *m)
{
    if (lb_unlikely(m->__data.__lock != 0))
        return lb_mutex_lock_general(self, m);
    m->__data.__lock = 1;
    m->__data.__owner = self->tid;
    ++m->__data.__nusers;
    ++*lb_mutex_acquisitions(m);
    return 0;
}

/* The release half, glibc 2.36's __pthread_mutex_unlock_usercnt for a
 * NORMAL mutex while single-threaded: owner cleared, user count
 * decremented, lock word stored 0 (nobody can be waiting). */
static inline int lb_mutex_unlock_single(pthread_mutex_t *m)
{
    m->__data.__owner = 0;
    --m->__data.__nusers;
    m->__data.__lock = 0;
    return 0;
}

/* A thread lockblame does not monitor (none yet, or inside lockblame):
 * the real call, resolving lb_real first if nothing has yet (a lock
 * before our constructor; returns 0 without locking if resolution is
 * already running on this thread, as ENSURE_REAL in exports.c). */
int lb_mutex_lock_unmonitored(pthread_mutex_t *m);
int lb_mutex_unlock_unmonitored(pthread_mutex_t *m);

/* The fast paths below are leaf functions: everything that may call out
 * (conversion, other kinds, a single-threaded process, a site-table miss,
 * waiters) leaves through a tail call, so the common case saves no
 * registers and builds no frame. */
static inline int lb_mutex_lock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_mutex_lock_unmonitored(m);
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    if (lb_unlikely(!(v & LB_STASH_TAG) || __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != 0))
        return lb_mutex_lock_general(self, m);
    /* One thread: nobody waits, and the count lives in the mutex, so the
     * lb_mon is not needed (a stale one is found by the unlock's general
     * path once the process has threads). */
    if (__libc_single_threaded)
        return lb_mutex_lock_single(self, m);
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (lb_unlikely(!mon))
        return lb_mutex_lock_general(self, m);
    /* PTHREAD_MUTEX_NORMAL: glibc's own uncontended step, see
     * lb_mutex_try_acquire. */
    if (lb_unlikely(!lb_mutex_normal_try(self, m)))
        return lb_mutex_lock_contended(self, m, mon, LB_WAIT_FOREVER, NULL, false);
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0))
        return lb_mutex_acquired_with_waiters(self, m, mon);
    ++*lb_mutex_acquisitions(m);
    return 0;
}

static inline int lb_mutex_unlock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_mutex_unlock_unmonitored(m);
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    lb_site_t *s = lb_site_probe(self->sites, lb_site_key(site, LB_OBJ_MUTEX));
    if (lb_unlikely(!(v & LB_STASH_TAG) || !s))
        return lb_mutex_unlock_general(self, m, site);
    /* One thread (there never were others): no hold to account, see
     * lb_mutex_lock. */
    if (__libc_single_threaded && __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) == 0) {
        s->releases++;
        return lb_mutex_unlock_single(m);
    }
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (lb_unlikely(!mon))
        return lb_mutex_unlock_general(self, m, site);
    s->releases++;
    if (lb_unlikely(lb_release_needs_accounting(mon)))
        return lb_mutex_unlock_accounted(self, m, mon, site);
    return lb_real.mutex_unlock(m);
}
#endif
