/* Mutex blame measured by CPU samples of the holder (docs/DESIGN.md rules 2-3,
 * measured as thesis ch. 6.4 measures spin waits: by samples).
 *
 * Why: a hot mutex (a task queue's, a hand-off between two threads)
 * changes hands every few hundred ns. Exact accounting puts two clock
 * reads, two meta round trips and a context look-up inside each hold that
 * has waiters, and at that rate the longer holds change the contention
 * they measure (docs/PERFORMANCE.md: the task queue at 1.7x, hand-offs
 * +80% to +140%). A sampled wait puts nothing inside anyone's hold:
 *   - the waiter times its own wait exactly: it reads the clock before it
 *     blocks, and again just before each attempt to take the lock word
 *     after a wake-up (glibc's own contended step, done by locks/
 *     mutex_ops.c), so the read that ends the wait comes before its hold;
 *     while it waits it is counted in the lock's slot (`waiting`);
 *   - a CPU sample of period P of a thread that is the lock's owner (its
 *     owner word holds the thread's tid: glibc sets it for the kinds we
 *     sample) while w threads wait in the slot stands for w*P ns of
 *     idleness accrued during that thread's hold: the handler adds it to
 *     the lock's owed blame and raises mon->clock_moved, so the holder's
 *     release takes the accounted path and collects it onto its release
 *     site (blame.c, as for sampled spin waits), once per sample at most;
 *   - but never, in all, more than the waiters can have waited: the wait
 *     time they recorded (their pieces), plus per shard its waiters times
 *     the time since its waiting episode began. A CPU-time timer
 *     fires at scheduler ticks, and its signal reaches a holder that was
 *     preempted only when it runs again, by which time the others have
 *     come to wait on the lock it held; and P is then the CPU time of
 *     several periods. Uncapped, on a loaded machine (a busy loop beside
 *     tests/workloads_user/mutex_hot on 2 vCPUs) the samples owed the
 *     holders' whole CPU time, 0.58 s, to waits of 0.0015-0.3 s;
 *   - and no timer sample, on its own, for more CPU time than its
 *     thread can have held in (holder_window.h): a waiter's CPU comes in
 *     short bursts that the timer's ticks seldom find, and would ride on
 *     its next sample, mostly a hold's;
 *   - the holds themselves are native: the fast paths see no waiters.
 * The idleness the holders' samples did not account for (wait - owed) is
 * hand-off latency. Accuracy is that of the samples while the holder
 * runs; a holder that blocks or is descheduled while it holds
 * takes no samples, and that part of the wait counts as hand-off.
 *
 * When: LOCKBLAME_MUTEX=exact|sampled|auto (default auto, sampled_mode.h).
 * Only waits on PTHREAD_MUTEX_NORMAL mutexes without a timeout, by threads
 * that lockblame follows, are sampled; the rest stay exact, on the same
 * lock at the same time if need be (exact waiters are accounted by the
 * blame clock, sampled ones by the samples: neither counts the other).
 * A hot mutex needs one of LB_MUTEX_HOT_SLOTS slots; without a free one
 * it stays exact.
 *
 * Invariants:
 *   - mon->mutex_sampled is 0 (exact), LB_MUTEX_HOT_WANTED (auto mode
 *     found it hot; its next sampled-capable waiter enlists it),
 *     LB_MUTEX_HOT_NO_SLOT (exact for good) or a slot index + 1; it changes under meta only, and goes back to 0 only when
 *     the lb_mon is freed (lb_mutex_sampled_forget);
 *   - a slot's mon, owner and stats are written before the slot index is
 *     published in mon->mutex_sampled, and the slot is reused only after
 *     its mutex is destroyed (nobody waits then);
 *   - the handler reads a slot's owner word only while its shards'
 *     `waiting` sum to more than 0: a thread is then inside the program's
 *     lock call on that mutex, so its memory is live;
 *   - the slot's counters and the record's sampled fields change by
 *     atomic adds and exchanges only, and charged_ns by compare-and-swap
 *     within the bound (the handler takes no lock);
 *   - a thread's holder window is its own (holder_window.h). */
#ifndef LB_BLAME_MUTEX_SAMPLED_H
#define LB_BLAME_MUTEX_SAMPLED_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/blame.h"
#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/sampled_mode.h"
#include "common/sampled_limits.h" /* LB_MUTEX_HOT_SLOTS */
#include "core/thread.h"

#define LB_MUTEX_HOT_WANTED  UINT32_MAX       /* auto mode found it hot */
#define LB_MUTEX_HOT_NO_SLOT (UINT32_MAX - 1) /* hot, but no slot was free */

/* A share of one hot mutex's waiters (threads whose id & the shard mask
 * is the shard's index), on a line of its own: with one line for all, on
 * 16 cores every arriving waiter's count was a cross-core miss before its
 * first attempt, and the winner's last one a miss inside its hold. */
typedef struct lb_mutex_hot_shard {
    uint32_t waiting;    /* of these threads, in a sampled wait on it now */
    uint64_t waits;      /* their sampled waits */
    uint64_t wait_ns;    /* their time */
    uint64_t episode_ns; /* when `waiting` last went from 0 to 1: the start of
                             * that waiter's wait (stored just after the count) */
} __attribute__((aligned(LB_CACHELINE))) lb_mutex_hot_shard_t;

/* One hot mutex's sampled waits: the line the handlers read to find it,
 * then the waiters' shards (w is their sum). */
typedef struct lb_mutex_hot {
    lb_mon_t *mon;          /* NULL: free */
    const int *owner;       /* the mutex's owner word (glibc's __owner) */
    pthread_mutex_t *mutex; /* the mutex */
    uintptr_t named;        /* its stash's value that names mon (mutex_quiet.h) */
    uint32_t stats;         /* mon's record */
    uint64_t charged_ns;    /* what holder samples have owed in all (the handler's) */
    lb_mutex_hot_shard_t shard[LB_HOT_SHARDS];
} __attribute__((aligned(LB_CACHELINE))) lb_mutex_hot_t;

/* The waiter's shard (lb_hot_shard_mask: sampled_mode.h). */
static inline lb_mutex_hot_shard_t *lb_mutex_hot_shard(lb_mutex_hot_t *slot,
                                                       const lb_thread_t *self)
{
    return &slot->shard[self->id & lb_hot_shard_mask];
}

extern lb_sampled_mode_t lb_mutex_mode;
/* Read LOCKBLAME_MUTEX (after the sampler's setup) and hook the handler. */
void lb_mutex_sampled_setup(void);

/* Under meta, at an accounted release of mutex mon at now: in auto mode,
 * mark mon wanted when it is hot. */
void lb_mutex_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now);
/* Under meta: an exact waiter is about to count itself in mon's waiters
 * / an accounted release of mon ended its hold's accounting. A mutex in
 * a slot loses / regains its stash's quiet bit (mutex_quiet.h). */
void lb_mutex_sampled_exact_waiter(const lb_mon_t *mon);
void lb_mutex_sampled_released(const lb_mon_t *mon);

extern lb_mutex_hot_t lb_mutex_hot_slots[LB_MUTEX_HOT_SLOTS];
/* Slow path of lb_mutex_sampled_slot: mon wanted (or mode sampled); NULL
 * when no slot is free (mon then stays exact for good). */
lb_mutex_hot_t *lb_mutex_sampled_enlist(lb_thread_t *self, lb_mon_t *mon, pthread_mutex_t *m,
                                        uintptr_t named);
/* A wait about to begin on mon, the lb_mon of NORMAL mutex m, which its
 * stash names as `named`: the slot to count it in if it is to be sampled,
 * else NULL (time it exactly). */
static inline lb_mutex_hot_t *lb_mutex_sampled_slot(lb_thread_t *self, lb_mon_t *mon,
                                                    pthread_mutex_t *m, uintptr_t named)
{
    uint32_t v = __atomic_load_n(&mon->mutex_sampled, __ATOMIC_ACQUIRE);
    if (lb_likely(v - 1 < LB_MUTEX_HOT_SLOTS))
        return &lb_mutex_hot_slots[v - 1];
    if (v == LB_MUTEX_HOT_WANTED || (v == 0 && lb_mutex_mode == LB_SAMPLED_ALWAYS))
        return lb_mutex_sampled_enlist(self, mon, m, named);
    return NULL;
}

/* A sampled wait's bookkeeping, in the order locks/mutex_ops.c's
 * lock_sampled calls it:
 *   took_at_once - glibc's first exchange comes at once after the failed
 *                attempt, with no bookkeeping before it; one that takes
 *                the lock ends a wait of the few instructions between
 *                the two attempts, counted inside the hold with no clock
 *                read and no context look-up (lb_mutex_sampled_took_at_once).
 *                With the time, context and waiter count of wait_brief
 *                there instead (~300 instructions and four atomic adds
 *                inside the hold), the other thread found the lock taken
 *                more often, and bench/handoff's hand-off rate with 2
 *                threads was +70% over native (2 vCPUs), +6% now;
 *   arrive     - once that exchange failed (or the word said that someone
 *                sleeps), before the next step: counted in the slot (one
 *                wait, one waiter now);
 *   wait_begin - before the first futex wait (started at `start`): its
 *                calling context, the site's count, the thread's waiting
 *                state. A thread that failed its attempt sleeps next
 *                anyway, and a holder's release that comes meanwhile
 *                makes the futex wait return at once (EAGAIN), followed
 *                at once by the next attempt; after a wake-up only a
 *                clock read comes before the attempt, as glibc's own
 *                waiter tries at once. Done after the first futex wait
 *                that slept instead, the look-up delayed every woken
 *                waiter's attempt, another thread took the lock first,
 *                and the waiter slept again: the task queue made 40-60%
 *                more futex calls than natively, against 15-40% now, and
 *                the hand-off rates of bench/handoff with 4 threads and
 *                of bench/pingpong (+62% and +55% over native, 2 vCPUs)
 *                came down to +10% and +33%. (A wait whose lock word was
 *                free at its first attempt after the arrival, without a
 *                futex wait, which happens only where the call site is
 *                unknown, does its part inside the hold, as wait_brief
 *                with its piece and end.)
 *   wait_piece - the time of each attempt is read just before it, and
 *                credited to the thread's context and the slot (the wait
 *                so far) after it: before the next sleep when it failed,
 *                inside the hold when it succeeded (a few instructions
 *                and one atomic add: no clock read inside the hold); the
 *                next piece starts where this one ended;
 *                (arrive also starts the shard's waiting episode when
 *                nobody of the shard waited: one store, the count's old
 *                value is the atomic add's result);
 *   wait_end   - the attempt succeeded: out of the slot's waiters and of
 *                the waiting state (inside the hold: two atomic adds, on
 *                lines this thread wrote just before the attempt). */
static inline void lb_mutex_sampled_arrive(lb_thread_t *self, lb_mutex_hot_t *slot, uint64_t start)
{
    lb_mutex_hot_shard_t *shard = lb_mutex_hot_shard(slot, self);
    __atomic_fetch_add(&shard->waits, 1, __ATOMIC_RELAXED);
    if (__atomic_fetch_add(&shard->waiting, 1, __ATOMIC_RELEASE) == 0)
        __atomic_store_n(&shard->episode_ns, start, __ATOMIC_RELEASE);
}
static inline void lb_mutex_sampled_leave(lb_thread_t *self, lb_mutex_hot_t *slot)
{
    __atomic_fetch_sub(&lb_mutex_hot_shard(slot, self)->waiting, 1, __ATOMIC_RELEASE);
}
void lb_mutex_sampled_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_mutex_hot_t *slot,
                                 lb_wait_t *wait, uint64_t start);
void lb_mutex_sampled_wait_piece(lb_thread_t *self, lb_mutex_hot_t *slot, lb_wait_t *wait,
                                 uint64_t now);
void lb_mutex_sampled_wait_end(lb_thread_t *self, lb_mutex_hot_t *slot);
/* A wait that took the lock at its first attempt, at `tried` (the
 * attempt's time), without a futex wait: wait_begin's context, site count
 * and first waiter, its time credited, out of the slot's waiters, in one
 * step inside the new hold; no waiting state or open-wait note, which a
 * wait that may block needs (two atomic adds and their stores saved). */
void lb_mutex_sampled_wait_brief(lb_thread_t *self, lb_mutex_hot_t *slot, uint64_t start,
                                 uint64_t tried);

/* A wait that took the lock at its first exchange, right after the
 * failed attempt (locks/mutex_ops.c's lock_sampled), at call site `site`
 * (the wrapper's return address): inside the new hold, one wait in the
 * slot's count and its site's, no time (it lasted the instructions
 * between the two attempts, which no clock read measures) and no
 * context, which only the object's first waiter needs (found then as
 * wait_brief finds it). Like a sampled spin wait (spin_sampled.c), whose
 * site is its call's too. */
void lb_mutex_sampled_took_at_once(lb_thread_t *self, lb_mutex_hot_t *slot, uintptr_t site);

/* Mutexes that turned hot (or, under LOCKBLAME_MUTEX=sampled, were
 * contended) while all LB_MUTEX_HOT_SLOTS slots were taken: they stayed
 * exact (the report header says how many: meta sampled_mutex_no_slot). */
uint32_t lb_mutex_sampled_missed(void);

/* The final write (and a fork child): move the counts of the slot that
 * record s belongs to, if any, into its sampled fields (see
 * lb_object_stats_fold_sampled). */
void lb_mutex_sampled_drain(lb_object_stats_t *s);
/* mon's mutex is destroyed or re-initialized: its slot's counts go to its
 * record and the slot is free again. */
void lb_mutex_sampled_forget(lb_mon_t *mon);
/* Fork child: nobody waits any more. */
void lb_mutex_sampled_fork_child(void);
#endif
