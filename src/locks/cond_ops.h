/* Condition variables and semaphores: waits accrue on the object; each
 * signal/broadcast/post takes the idleness accrued since the previous one
 * (docs/DESIGN.md rule 3). Every function returns what the real call returned,
 * with errno as the real call left it. */
#ifndef LB_COND_OPS_H
#define LB_COND_OPS_H
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "blame/shared_objs.h"
#include "blame/signal_sampled.h"
#include "blame/sites.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/acq_counts.h"
#include "locks/objmap.h"
#include "util/timeout.h"

/* clock: LB_WAIT_FOREVER (wait), LB_WAIT_REALTIME (timedwait),
 * else clockwait's clock. */
int lb_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                 const struct timespec *abstime, uintptr_t site);
int lb_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int lb_cond_destroy(pthread_cond_t *c);

int lb_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site);

/* glibc 2.36's trywait step (nptl/sem_waitcommon.c, __new_sem_wait_fast
 * with 64-bit atomics, 64-bit targets'): the value is the low 32 bits of the
 * semaphore's first word, the waiter count the high ones; take one unit
 * while there is one. Errno is left alone (glibc's trywait sets EAGAIN
 * when it fails). */
static inline bool lb_sem_take(sem_t *s)
{
#if __SIZEOF_POINTER__ != 8
    (void)s;
    return false; /* another layout: glibc's own calls (lb_sem_wait's trywait) */
#endif
    uint64_t *data = (uint64_t *)(void *)s;
    uint64_t d = __atomic_load_n(data, __ATOMIC_RELAXED);
    while ((d & UINT32_MAX) != 0)
        if (__atomic_compare_exchange_n(data, &d, d - 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return true;
    return false;
}

/* sem_wait, whole. A semaphore the calling thread used lately (its objmap
 * entry) that has a unit to take, in a process tree that shares no
 * object across processes: glibc's own steps (the cancellation test,
 * then the trywait step) and the acquisition counted in the thread's own
 * table, nothing else (a sem_wait that need not wait is not timed: rule
 * 1). Every other case, and a wait that must block, is lb_sem_wait's
 * (which tries again: the same as one attempt made a little later). */
static inline int lb_sem_wait_fast(sem_t *s, uintptr_t site)
{
    lb_mon_t *mon = lb_objmap_recent_mon(s, LB_OBJ_SEM);
    lb_thread_t *self = lb_self;
    if (lb_likely(mon != NULL && self != NULL && !self->busy &&
                  !__atomic_load_n(&lb_shared_objs_on, __ATOMIC_RELAXED))) {
        pthread_testcancel(); /* glibc's sem_wait is a cancellation point, waiting or not */
        if (lb_likely(lb_sem_take(s)))
            return lb_acq_count(self, mon); /* in its own table: no locked add */
    }
    return lb_sem_wait(s, LB_WAIT_FOREVER, NULL, site);
}
int lb_sem_init(sem_t *s, int pshared, unsigned value);
int lb_sem_destroy(sem_t *s);

/* glibc 2.36's sem_post (nptl/sem_post.c, 64-bit atomics) where it
 * wakes nobody: one unit more while no waiter is registered in the high
 * word; with a waiter (the futex wake then), or at SEM_VALUE_MAX
 * (EOVERFLOW), glibc's own call. */
static inline int lb_sem_give(sem_t *s)
{
#if __SIZEOF_POINTER__ != 8
    return lb_real.sem_post(s); /* another layout */
#endif
    uint64_t *data = (uint64_t *)(void *)s;
    uint64_t d = __atomic_load_n(data, __ATOMIC_RELAXED);
    while ((d >> 32) == 0 && (d & UINT32_MAX) != SEM_VALUE_MAX)
        if (__atomic_compare_exchange_n(data, &d, d + 1, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return 0;
    return lb_real.sem_post(s);
}

/* The real signal (arg: broadcast) or post, by kind; its result. */
static LB_ALWAYS_INLINE int lb_signal_real(void *obj, lb_obj_kind kind, int arg)
{
    if (kind == LB_OBJ_SEM)
        return lb_sem_give(obj);
    return arg ? lb_real.cond_broadcast(obj) : lb_real.cond_signal(obj);
}

/* A signal, broadcast or post on sampled obj (mon) that measures: the
 * measure, then the real call (cond_ops.c). Its release is counted. */
int lb_signal_measured(lb_thread_t *self, lb_mon_t *mon, void *obj, lb_obj_kind kind, int arg);
/* lb_signal's step for a signal on sampled obj (mon, state v) whose slot
 * looks for gaps and which has waiters to wake: the look (a clock read),
 * then the measure if due, then the real call (cond_ops.c). */
int lb_signal_looking(lb_thread_t *self, lb_mon_t *mon, void *obj, lb_obj_kind kind, int arg,
                      uint32_t v);
/* A signal, broadcast or post before lb_real is resolved (a constructor's,
 * before ours): resolves it, then the general path; 0 without the call
 * if resolution is already running on this thread (exports.c). */
int lb_signal_unresolved(void *obj, lb_obj_kind kind, uintptr_t site, int arg);
/* A signal, broadcast, post or wake of the thread's own on mon ends the
 * run of timed waits its last wait there began (blame/wait_note.h): that
 * run's accrual stays taken back. */
static inline void lb_signal_ends_own_run(lb_thread_t *self, const lb_mon_t *mon)
{
    if (lb_unlikely(self->expired_mon == mon))
        self->expired_mon = NULL;
}
/* The accounting of a signal, broadcast, post or futex wake on obj, whose
 * lb_mon is mon, made before the real call: the release counted at site,
 * exact or sampled blame (cond_ops.c). */
void lb_signal_account(lb_thread_t *self, lb_mon_t *mon, const void *obj, lb_obj_kind kind,
                       uintptr_t site);
/* Every other signal, broadcast or post: the object looked up (created
 * on first use), lb_signal_account, the real call (cond_ops.c). */
int lb_signal_general(void *obj, lb_obj_kind kind, uintptr_t site, int arg);
/* A signal, broadcast or post by self on an exact object obj that the
 * thread used lately (its lb_mon mon): with nobody to blame (no waiter
 * accrued anything) and no record shared across processes, the count and
 * the real call without looking the object up again (a semaphore used as
 * a counter posts so); else lb_signal_general. Inline: every exit is a
 * tail call, and a post's real call is glibc's own step. */
static LB_ALWAYS_INLINE int lb_signal_exact(lb_thread_t *self, lb_mon_t *mon, void *obj,
                                            lb_obj_kind kind, uintptr_t site, int arg)
{
    if (__atomic_load_n(&lb_shared_objs_on, __ATOMIC_RELAXED) || lb_release_needs_accounting(mon))
        return lb_signal_general(obj, kind, site, arg);
    /* (a site away from the cache: the general path, whose look-up may
     * claim a slot on the calling thread's own record) */
    lb_site_t *s = lb_site_probe_last(self, lb_site_key(site, kind), &self->last_signal_key,
                                      &self->last_signal_site);
    if (!s)
        return lb_signal_general(obj, kind, site, arg);
    s->releases++;
    lb_signal_ends_own_run(self, mon);
    return lb_signal_real(obj, kind, arg);
}

/* The steps of lb_signal once obj's lb_mon mon, its sampled state v and
 * v's slot, and the site's slot are known (from the memo, which names
 * them, or from the look-ups): one count at the site, a gap look where
 * the slot looks for gaps, the countdown's decrement and the mark's
 * test, the real call. */
static LB_ALWAYS_INLINE int lb_signal_memoized(lb_thread_t *self, lb_mon_t *mon, uint32_t v,
                                               lb_signal_hot_t *slot, lb_site_t *site, void *obj,
                                               lb_obj_kind kind, int arg)
{
    site->releases++;
    if (lb_unlikely(__atomic_load_n(&slot->gaps, __ATOMIC_RELAXED)) &&
        lb_signal_gap_look_due(self, slot, obj, kind))
        return lb_signal_looking(self, mon, obj, kind, arg, v);
    if (lb_unlikely(lb_signal_slot_due(self, slot)))
        return lb_signal_measured(self, mon, obj, kind, arg);
    return lb_signal_real(obj, kind, arg);
}

/* A signal, broadcast or post (kind COND or SEM; arg: broadcast), the
 * exported calls' whole body. The inline paths serve an object that
 * turned sampled (signal_sampled.h), the case of a task queue's push, and
 * have no frame of their own (every exit is a tail call):
 * - the memo's: the thread's last signal on a sampled object with a slot
 *   was on obj at this site, and obj's lb_mon is still in the state it
 *   was then (a destroyed object's lb_mon names no object, a new one
 *   starts exact); a timed wait of the thread's own that runs out clears
 *   the memo (its object's run ends at the thread's next signal there:
 *   lb_signal_ends_own_run);
 * - else the calling thread used obj lately (its objmap entry), its
 *   release site is the one it counted last (or at its home slot): the
 *   same steps after those look-ups, and the memo taken.
 * Both count once at the site, decrement the countdown and make the real
 * call; a countdown that runs out, a mark, or a gap look takes the out of
 * line steps. Everything else, and exact objects, take
 * lb_signal_general (an exact object the thread used lately:
 * lb_signal_exact). A queue signals inside the hold of its mutex, so these
 * instructions lengthen that hold: ~45 from the exported call's entry to
 * the real call on the memo's path, ~55 on the other. */
static LB_ALWAYS_INLINE int lb_signal(void *obj, lb_obj_kind kind, uintptr_t site, int arg)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_signal_general(obj, kind, site, arg);
    /* Each word read once: a signal handler's signal on this thread (a
     * post is async-signal-safe) may rewrite the memo and the site cache
     * between two reads. The site's slot before its key: a key that still
     * matches after it was read means the slot belongs to this site. A
     * state that still matches its lb_mon names that object's own slot. */
    lb_mon_t *mon = self->signal_memo_mon;
    uint32_t memo = self->signal_memo_state;
    lb_site_t *counted = self->last_signal_site;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (lb_likely(mon != NULL && __atomic_load_n(&mon->addr, __ATOMIC_RELAXED) == obj &&
                  __atomic_load_n(&mon->signal_sampled, __ATOMIC_RELAXED) == memo &&
                  self->last_signal_key == lb_site_key(site, kind)))
        return lb_signal_memoized(self, mon, memo, lb_signal_waits_named(memo), counted, obj, kind,
                                  arg);
    mon = lb_objmap_recent_mon(obj, kind);
    if (lb_unlikely(!mon))
        return lb_signal_general(obj, kind, site, arg);
    uint32_t v = __atomic_load_n(&mon->signal_sampled, __ATOMIC_RELAXED);
    if (lb_unlikely(!v))
        return lb_signal_exact(self, mon, obj, kind, site, arg);
    lb_signal_ends_own_run(self, mon);
    lb_site_t *s = lb_site_probe_last(self, lb_site_key(site, kind), &self->last_signal_key,
                                      &self->last_signal_site);
    if (lb_unlikely(!s))
        return lb_signal_general(obj, kind, site, arg);
    lb_signal_hot_t *slot = lb_signal_waits_slot(v);
    if (slot) { /* (a slot keeps the mark: v stays LB_SIGNAL_SAMPLED) */
        self->signal_memo_mon = mon;
        self->signal_memo_state = v;
        return lb_signal_memoized(self, mon, v, slot, s, obj, kind, arg);
    }
    s->releases++; /* (no slot: no gaps to look for) */
    if (lb_unlikely(lb_signal_sampled_due(self, v, NULL, false)))
        return lb_signal_measured(self, mon, obj, kind, arg);
    return lb_signal_real(obj, kind, arg);
}
#endif
