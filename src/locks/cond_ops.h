/* Condition variables and semaphores: waits accrue on the object; each
 * signal/broadcast/post takes the idleness accrued since the previous one
 * (docs/DESIGN.md rule 3). Every function returns what the real call returned,
 * with errno as the real call left it. */
#ifndef LB_COND_OPS_H
#define LB_COND_OPS_H
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#include "blame/signal_sampled.h"
#include "blame/sites.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/objmap.h"
#include "util/timeout.h"

/* clock: LB_WAIT_FOREVER (wait), LB_WAIT_REALTIME (timedwait),
 * else clockwait's clock. */
int lb_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                 const struct timespec *abstime, uintptr_t site);
int lb_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr);
int lb_cond_destroy(pthread_cond_t *c);

int lb_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site);
int lb_sem_init(sem_t *s, int pshared, unsigned value);
int lb_sem_destroy(sem_t *s);

/* The real signal (arg: broadcast) or post, by kind; its result. */
static LB_ALWAYS_INLINE int lb_signal_real(void *obj, lb_obj_kind kind, int arg)
{
    if (kind == LB_OBJ_SEM)
        return lb_real.sem_post(obj);
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
 * a counter posts so); else lb_signal_general (cond_ops.c). */
int lb_signal_exact(lb_thread_t *self, lb_mon_t *mon, void *obj, lb_obj_kind kind, uintptr_t site,
                    int arg);

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
