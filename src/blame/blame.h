/* Blame as a few verbs on per-thread state (the victim waits, the culprit
 * releases). Each verb is called from a wrapper's slow path only.
 *
 *   wait_begin  - the calling thread starts waiting on mon (w++); its
 *                 calling context is found here, before it blocks
 *   wait_end    - it stops waiting (w--), and maybe now holds mon
 *   hold_begins - it acquired mon while others wait (barging acquirer)
 *   hold_ends   - it releases mon: collect its blame (before the real
 *                 release, so no waiter's acquisition is accounted first);
 *                 release_blame = hold_ends + deposit in one call
 *   signal_collect / barrier_completes - the same for cond, sem, barrier;
 *                 signal_blame = signal_collect + deposit in one call
 *   deposit     - also before the real release: put the blame on the
 *                 calling context of the release call (cached per thread,
 *                 see context.h), so that nothing runs between the real
 *                 release and the return that a woken or spinning waiter
 *                 could race (the rate at which the lock changes hands
 *                 stays native)
 *
 * Invariants: verbs take mon->meta only around accrual updates, never
 * across a real blocking call or an unwind; they run with lb_thread.busy
 * raised and leave errno as they found it. */
#ifndef LB_BLAME_H
#define LB_BLAME_H
#include <stdbool.h>
#include <stdint.h>

#include "core/thread.h"
#include "blame/mon.h"
#include "sampler/cct.h"
#include "util/clock.h"

typedef struct lb_wait {
    lb_mon_t *mon;
    uint64_t start_ns;
    lb_obj_kind kind;
    uint32_t node_id;          /* of node */
    lb_cct_node_t *node;       /* the wait's calling context, found before the
                              * wait (so not inside the lock once acquired);
                              * NULL if the thread has no CCT */
    struct lb_signal_hot *hot; /* a hot cond's or semaphore's slot, whose
                                * shards count this wait instead of the
                                * meta path (signal_waits.h); else NULL */
    bool timed_out;            /* set by the caller before the end: the wait
                              * ran out of time (wait_note.h: runs) */
    bool had_deadline;         /* set by the caller before the end: a timed
                              * wait (wait_note.h: the thread's home) */
} lb_wait_t;

/* A collected hold, to be deposited after the real release. */
typedef struct lb_hold {
    double blame_ns;
    struct lb_object_stats *record; /* the object's record, NULL if none */
    uint32_t stats;                 /* its index, 0 if none */
    bool was_contended;             /* the hold began with a wait */
} lb_hold_t;

void lb_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait);
/* The same, the wait having begun at `now` (lb_now_ns, read by the caller
 * on entry to the blocking call). */
void lb_wait_begin_at(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait,
                      uint64_t now);
/* The part of a wait's beginning outside meta (wait's mon, kind and
 * start_ns set; self->busy raised): the wait's note, its calling context
 * (found now, before the thread blocks, so never inside the lock it may
 * acquire), and the thread's waiting state. */
void lb_wait_started(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait);
/* holds: the wait ended in acquiring mon (its hold accounting begins).
 * Returns the time the wait ended (lb_now_ns). */
uint64_t lb_wait_end(lb_thread_t *self, lb_wait_t *wait, bool holds);
/* lb_wait_end's accounting for a wait that ended at `now`, the thread's
 * waiting state already ended (lb_waiting_end) and busy raised: the
 * deferred end of a hot cond wait (wait_deferred.h). */
void lb_wait_ended_at(lb_thread_t *self, const lb_wait_t *wait, bool holds, uint64_t now);
/* The object a run of timed waits may go on after wait, which just
 * returned (wait_note.h): its own when it ran out of time (a cond,
 * semaphore or futex wait), else none. Stored in the thread's
 * expired_mon as the wait returns (its end may be deferred: a signal of
 * the thread's own before its end is run still ends the run). */
static inline struct lb_mon *lb_wait_run_object(const lb_wait_t *wait)
{
    return wait->timed_out && lb_obj_kind_is_signalled(wait->kind) ? wait->mon : NULL;
}
/* Keeps lb_wait_run_object(wait) in self->expired_mon; an object kept
 * leaves the signal memo (locks/cond_ops.h), whose path does not test it. */
static inline void lb_wait_run_keep(lb_thread_t *self, const lb_wait_t *wait)
{
    struct lb_mon *run = lb_wait_run_object(wait);
    self->expired_mon = run;
    if (run)
        self->signal_memo_mon = NULL;
}
void lb_hold_begins(lb_thread_t *self, lb_mon_t *mon);
/* The same for a mutex, without meta: only the time is recorded, and the
 * next meta section on mon (the release's, at the latest) begins the hold
 * at that time (blame_clock.h, lb_clock_take_pending). Saves a meta round
 * trip on every barging acquisition while others wait. */
static inline void lb_hold_begins_deferred_at(lb_mon_t *mon, uint64_t now)
{
    __atomic_store_n(&mon->hold_pending_ns, now, __ATOMIC_RELAXED);
}
static inline void lb_hold_begins_deferred(lb_mon_t *mon)
{
    lb_hold_begins_deferred_at(mon, lb_now_ns());
}
/* now: the release's time (lb_now_ns), read by the caller for another
 * purpose too (a cond wait's start), or 0: read here, and only if blame
 * may be owed. */
lb_hold_t lb_hold_ends_at(lb_thread_t *self, lb_mon_t *mon, uint64_t now);
/* Signal, broadcast or post on mon: collect the idleness accrued since the
 * previous one (the object stays "held", so accrual continues). */
lb_hold_t lb_signal_collect(lb_thread_t *self, lb_mon_t *mon);
/* lb_signal_collect then lb_deposit in one call (a signal, broadcast or
 * post, before the real call). */
void lb_signal_blame(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uintptr_t site);
/* A thread arrives at barrier mon. If it is the last of the episode,
 * returns true with the episode's idleness collected in *hold (what
 * accrues from here until the waiters leave is hand-off latency);
 * otherwise returns false with its wait begun in *wait. One step under
 * meta, so no arrival can slip between counting and waiting. */
bool lb_barrier_arrive(lb_thread_t *self, lb_mon_t *mon, lb_wait_t *wait, lb_hold_t *hold);
/* Blame received directly (joins): wait_ns of idleness that needs no
 * accrual clock, recorded on a per-object record for conservation. */
void lb_direct_blame(lb_thread_t *victim, uintptr_t object, lb_obj_kind kind, uint64_t wait_ns,
                     lb_thread_t *culprit, uintptr_t culprit_pc);
void lb_deposit(lb_thread_t *self, const lb_hold_t *hold, lb_obj_kind kind, uintptr_t site);
/* lb_hold_ends_at then lb_deposit in one call (a mutex or spin lock's
 * release by its holder, before the real release). */
void lb_release_blame(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uintptr_t site);
/* The same where the release's calling context is already known (a cond
 * wait's mutex release: the wait's own context). */
void lb_deposit_at(lb_thread_t *self, const lb_hold_t *hold, lb_obj_kind kind, uintptr_t site,
                   lb_cct_node_t *node, uint32_t node_id);

/* Fast-path test: must the release of mon do blame accounting? */
static inline bool lb_release_needs_accounting(const lb_mon_t *mon)
{
    return (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) |
            __atomic_load_n(&mon->hold_flags, __ATOMIC_RELAXED)) != 0;
}

#endif
