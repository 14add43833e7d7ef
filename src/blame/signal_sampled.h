/* Hot condition variables and semaphores: one signal interval in N is
 * measured, chosen at random, and stands for N (docs/DESIGN.md rule 3, estimated;
 * thesis ch. 6.4 measures spin waits by samples in the same spirit). N is
 * LB_SIGNAL_SAMPLE_EVERY, or more for a thread that signals faster (see
 * "How many" below).
 *
 * Why: a task queue's "not empty" cond is signalled on every push, inside
 * the producer's hold of the queue's mutex. Exact attribution collects
 * the blame clock at every signal that has waiters: a clock read, the
 * meta lock and a context look-up inside that hold, hundreds of
 * thousands of times a second, and that changes who takes the mutex next
 * (docs/PERFORMANCE.md: the task queue's hand-off rate +40-60%).
 *
 * The rule: the idleness accrued since the previous signal belongs to the
 * next signal. The waiters keep the blame clock exact: V(t) is the
 * integral of w, kept by the waits under meta until the object turns
 * sampled, and from then on in the shards of a slot (signal_waits.h: no
 * meta inside the waiter's hold of the cond's mutex), which a marked
 * signal reads. A
 * signal on a sampled object is *marked* with probability 1/N (a
 * per-thread countdown drawn uniformly from 1..2N-1, mean N): it reads the
 * clocks (a clock read, and meta or the slot's lock; with a slot the mark
 * takes effect at the end of the signal's bookkeeping, which thus stays
 * outside the interval it opens). The next signal on
 * the object, by any thread, reads V again and is blamed N times the
 * idleness accrued in between: its own interval, scaled by the inverse of
 * the probability that the interval was measured (the N of the countdown
 * that ended at the mark, kept with the mark). An interval's chance of
 * being measured does not depend on its site, length or waiters, so each
 * site's expected blame is its exact blame; the choice does not depend on
 * when CPU samples come. Each site's error falls as 1/sqrt(its measured
 * intervals).
 *
 * How many: a thread's N is LB_SIGNAL_SAMPLE_EVERY (16) until it signals
 * sampled objects faster than LB_SIGNAL_MARKS_PER_S * 16 times a second
 * (64K); from there N grows with its rate (a power of two, up to
 * LB_SIGNAL_SAMPLE_MAX), so that it marks about LB_SIGNAL_MARKS_PER_S
 * intervals a second. Each draw takes the rate of the countdown that just
 * ended (its signals over its time). A measured signal costs a clock
 * read, the slot's lock, a read of every shard and a context look-up
 * inside the signaller's hold of the object's mutex: a task queue's
 * producer at a million signals a second spent ~9% of a one-worker run on
 * them with N = 16 (docs/PERFORMANCE.md, "Hot conds and semaphores"). At 4000 marks a
 * second a thread still measures thousands of intervals in a run, and a
 * site's error stays a few percent.
 *
 * Gaps: the intervals that carry most of the idleness are often few and
 * long: a program that signals in bursts between serial phases (a
 * linker's thread pool, whose workers wait out each serial phase), or a
 * signaller descheduled for milliseconds on a loaded machine. One in N of
 * them measured and counted N times leaves each site's estimate to a
 * handful of draws: most runs came out far low (lld: 55-77% of its
 * waiting unattributed), a few far high. So an interval longer than
 * LB_SIGNAL_GAP_NS is measured whole and counted once, by the signal that
 * ends it: the object's slot keeps the latest signal's time
 * (last_signal_ns), and each shard its last few wait events with I and n
 * after each (signal_waits.h), from which its I at the gap's start
 * follows. A shard with more events since than it keeps (waiters woken
 * at the gap's start, taking work and waiting again) is read from its
 * oldest kept event, if that leaves out under a quarter of the gap; else
 * the interval stays in the sampled stratum. A mark that opened a gap is
 * dropped: whether an interval is a gap is decided at its end,
 * independently of the mark drawn at its start, so the other intervals
 * keep their 1/N chance and the estimate stays unbiased. Gaps are
 * measured at most once per LB_SIGNAL_GAP_NS per object.
 *
 * Their cost: a clock read and a store on the slot by the signals. Paid
 * only by an object known to have gaps: one of its measured signals
 * found the previous measurement more than LB_SIGNAL_GAP_NS back (the
 * first gap, or a signaller descheduled that long), so a steady queue on
 * a quiet machine never pays it. And only by a signal that has waiters
 * (glibc's own count, on the line the real call reads next): a gap
 * carries idleness only if someone waits at its end, and the interval
 * after a signal that found nobody waiting holds at most earlier
 * wake-ups' latency, so a gap measured from the last signal that had
 * waiters takes in little besides its own. The time is stored only when
 * it moved to another 8 us (LB_SIGNAL_GAP_GRAIN_LOG2), so a gap starts
 * up to 8 us early. A signal whose waiters were all woken already (they
 * have not left their wait: they wait for a CPU or for the mutex) cannot
 * end a gap that a sleeping waiter waits out; it only moves the stored
 * time, and a thread that signals fast does that in one of as many of its
 * signals with waiters as it makes in ~8 us (their rate over its last
 * countdown, up to 16), so the stored time stays within ~8 us more of the
 * latest signal. A signal that wakes someone (glibc's G1 has a waiter
 * not yet signalled, or G2 has one) always looks. bench/taskq with small
 * tasks (WORK=5), 4 workers on 2 vCPUs, where the descheduled producer
 * turns gaps on: 98% of the signals with waiters woke nobody; a clock
 * read on each of them made the run 1.4-1.6x native against ~1.1x
 * without gaps (docs/PERFORMANCE.md, "Hot conds and semaphores").
 *
 * Totals: what V accrued stays exact (lb_object_stats.accrued_held_ns);
 * a measured interval's scaled blame is capped by the accrual not yet
 * blamed, so blame never exceeds it, and what no estimate took is
 * reported as unattributed. An interval that ends the object's life
 * unmeasured (the broadcast that ends threads parked until shutdown, if
 * the interval before it was not marked) is unattributed too.
 *
 * Cost: an unmarked signal does one decrement of the thread's own
 * countdown beyond the exact path's look-ups: no clock read, no meta, no
 * context look-up inside the signaller's hold; a marked signal and the
 * one after it cost what an exact signal costs.
 *
 * When: LOCKBLAME_COND=exact|sampled|auto (default auto,
 * sampled_mode.h). In auto mode an object turns sampled for good when its
 * accounted signals come at LB_SAMPLED_RATE a second (over
 * LB_SAMPLED_RATE_HOLDS of them).
 *
 * Invariants: mon->signal_sampled is 0 (exact), or LB_SIGNAL_SAMPLED or
 * LB_SIGNAL_MARKED with the waits' slot number above LB_SIGNAL_STATE (0:
 * no slot was free); it changes under meta only. Without a slot the mark
 * is the state bits and mon->clock_at_acquire the clock at it; with one
 * the state stays LB_SIGNAL_SAMPLED and the mark, with both clocks at it,
 * lives in the slot under the slot's lock (signal_waits.h), so that a
 * measured signal writes no line that the waits and other signals read.
 * A signal that reads LB_SIGNAL_MARKED without meta re-reads it under
 * meta (a slot's mark, under the slot's lock): if another signal
 * completed the interval first, it is an unmarked signal again (nothing
 * is counted twice). The
 * other way round, a signal that read the state just before another
 * thread marked it does not end the new interval, so with several
 * signallers at once a measured interval can now and then span two
 * signals (blamed on the later). */
#ifndef LB_BLAME_SIGNAL_SAMPLED_H
#define LB_BLAME_SIGNAL_SAMPLED_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/sampled_mode.h"
#include "blame/signal_waits.h"
#include "common/sampled_limits.h" /* LB_SIGNAL_SAMPLE_EVERY: N */
#include "core/thread.h"
#include "util/clock.h"

#define LB_SIGNAL_SAMPLED         1u
#define LB_SIGNAL_MARKED          2u
#define LB_SIGNAL_STATE           3u /* the state bits; the waits' slot number above them */
/* A gap: no signal on the object for LB_SIGNAL_GAP_NS (sampled_limits.h,
 * "Gaps" above); the signals' time is stored when it moved to another
 * 2^GRAIN ns (8 us), so that signallers at a million a second do not pass
 * the line between them on every signal: a gap starts at most one grain
 * early. */
#define LB_SIGNAL_GAP_GRAIN_LOG2  13
/* An object without a slot keeps its open mark's log2 N here (with one,
 * the slot keeps it: lb_signal_hot_t.mark_log2). */
#define LB_SIGNAL_MARK_LOG2_SHIFT 16
#define LB_SIGNAL_MARK_LOG2_MASK  (0xfu << LB_SIGNAL_MARK_LOG2_SHIFT)

extern lb_sampled_mode_t lb_signal_mode;
/* Read LOCKBLAME_COND. */
void lb_signal_sampled_setup(void);

/* Under meta, at an exact collect of cond/sem mon at now: turn it sampled
 * when the mode says so (sampled, or auto and the object is hot). */
void lb_signal_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now);

/* The sampled object's step of a signal or post (called when
 * lb_signal_sampled_needs is true): end a measured interval, begin one,
 * or both; blame goes onto the signal's calling context. looked_at: the
 * time this signal's gap look read (signal_sampled.c: the measure's
 * time then), else 0. errno kept. */
void lb_signal_sampled_measure(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind,
                               uint64_t looked_at);

/* Under mon's meta, mon sampled (signal_sampled nonzero), for a wait that
 * ran out of time (blame.c, expired_wait_unblamed: a wait counted in V,
 * one that began before the object had a slot, or on one without): is a
 * measured interval open now, whose blame a later signal takes from V?
 * Then *from is when it began and *v_from V then. A wait counted in a
 * slot's shards takes its part back there (signal_waits.h, "Timed out"). */
bool lb_signal_sampled_open(lb_mon_t *mon, const lb_object_stats_t *stats, uint64_t *from,
                            double *v_from);

/* log2 of the N for a thread's next countdown, from the one that just
 * ended: `signals` signals in elapsed_ns (see "How many" above). */
static inline uint32_t lb_signal_every_log2(uint32_t signals, uint64_t elapsed_ns)
{
    const uint64_t per_mark_ns = 1000000000u / LB_SIGNAL_MARKS_PER_S;
    uint64_t t = elapsed_ns ? elapsed_ns : 1;
    uint32_t lg = LB_SIGNAL_SAMPLE_EVERY_LOG2;
    if (t >> 50) /* (days: and t << lg cannot overflow below) */
        return lg;
    /* the largest 2^lg with 2^lg <= signals * per_mark_ns / t */
    while (lg < LB_SIGNAL_SAMPLE_MAX_LOG2 && (t << (lg + 1)) <= (uint64_t)signals * per_mark_ns)
        lg++;
    return lg;
}

/* Would a signal on cond c, which has waiters (__wrefs), wake one, by
 * glibc 2.36's own state (nptl/pthread_cond_common.c; the lines the real
 * call reads next)? Yes if G1 has a waiter not yet signalled
 * (__g_size[g1]) or G2 has any (the signal makes it G1): __wseq counts
 * the waiters so far above G2's index, __g1_start is G1's start above one
 * bit, __g1_orig_size G1's size above glibc's two lock bits. A layout this
 * does not match (another glibc) makes G2 look non-empty: yes. */
static inline bool lb_cond_wakes(const pthread_cond_t *c)
{
    uint64_t wseq = __atomic_load_n(&c->__data.__wseq.__value64, __ATOMIC_RELAXED);
    if (__atomic_load_n(&c->__data.__g_size[(wseq & 1) ^ 1], __ATOMIC_RELAXED) != 0)
        return true;
    uint64_t g2_start = (__atomic_load_n(&c->__data.__g1_start.__value64, __ATOMIC_RELAXED) >> 1) +
                        (__atomic_load_n(&c->__data.__g1_orig_size, __ATOMIC_RELAXED) >> 2);
    return (wseq >> 1) != g2_start;
}

/* Does cond or semaphore obj have waiters, by glibc 2.36's own count (the
 * line the real call reads next)? pthread_cond_t: __wrefs counts them
 * above 3 flag bits; sem_t (new_sem, 64-bit): the high half of its first
 * word. A futex word does not say (its meaning is the program's): yes. */
static inline bool lb_signal_has_waiters(const void *obj, lb_obj_kind kind)
{
    if (kind == LB_OBJ_FUTEX)
        return true;
    if (kind == LB_OBJ_SEM)
        return (__atomic_load_n((const uint64_t *)obj, __ATOMIC_RELAXED) >> 32) != 0;
    return (__atomic_load_n(&((const pthread_cond_t *)obj)->__data.__wrefs, __ATOMIC_RELAXED) >>
            3) != 0;
}

/* A thread's signals with waiters on one slot that wake nobody store
 * their time at least once in 2^gap_skip_log2 (lb_thread_t): as many of
 * them as took at most one grain of the stored time (8 us, "Gaps" above)
 * at the thread's own rate of signals with waiters, over its countdown
 * that just ended; at most 2^LB_SIGNAL_GAP_SKIP_MAX_LOG2, and 1 (every
 * one looks) until a countdown has ended. */
#define LB_SIGNAL_GAP_SKIP_MAX_LOG2 4

/* log2 of gap_skip_log2's run from `signals` signals with waiters in
 * elapsed_ns: the largest k with 2^k of them in at most 2^GRAIN ns. */
static inline uint32_t lb_signal_gap_skip_log2(uint32_t signals, uint64_t elapsed_ns)
{
    uint64_t t = elapsed_ns ? elapsed_ns : 1;
    uint64_t grains = (uint64_t)signals << LB_SIGNAL_GAP_GRAIN_LOG2; /* signals * one grain */
    uint32_t k = 0;
    if (t >> 50) /* (days: and t << k cannot overflow below) */
        return 0;
    while (k < LB_SIGNAL_GAP_SKIP_MAX_LOG2 && (t << (k + 1)) <= grains)
        k++;
    return k;
}

/* Does a signal on obj, whose slot looks for gaps, look now?
 * When it has waiters to wake (it may end a gap), always; when it has
 * waiters that all were woken already (they have not left their wait:
 * they wait for a CPU, or for the mutex; 98% of a busy task queue's
 * signals on 2 vCPUs), only if the thread's skips on the slot ran out
 * (lb_signal_gap_ends restarts them). */
static inline bool lb_signal_gap_look_due(lb_thread_t *self, const lb_signal_hot_t *slot,
                                          const void *obj, lb_obj_kind kind)
{
    if (!lb_signal_has_waiters(obj, kind))
        return false;
    self->gap_eligible++; /* (its rate: lb_signal_gap_skip_log2) */
    if (kind != LB_OBJ_COND || lb_cond_wakes((const pthread_cond_t *)obj))
        return true;
    if (self->gap_slot == slot && self->gap_skips + 1 < (1u << self->gap_skip_log2)) {
        self->gap_skips++;
        return false;
    }
    return true;
}

/* The same for a slot that may not look for gaps, or none. */
static inline bool lb_signal_looks_for_gaps(lb_thread_t *self, const lb_signal_hot_t *slot,
                                            const void *obj, lb_obj_kind kind)
{
    return slot && __atomic_load_n(&slot->gaps, __ATOMIC_RELAXED) &&
           lb_signal_gap_look_due(self, slot, obj, kind);
}

/* The look of a signal with waiters on slot's object, at now (its clock
 * read, which a measure of the same signal reuses): stores its time
 * there, and returns true when it ends a gap ("Gaps" above: the gap's
 * start goes to self->signal_gap_from). */
static inline bool lb_signal_gap_ends(lb_thread_t *self, lb_signal_hot_t *slot, uint64_t now)
{
    self->gap_slot = slot;
    self->gap_skips = 0;
    uint64_t last = __atomic_load_n(&slot->last_signal_ns, __ATOMIC_RELAXED);
    if ((now ^ last) >> LB_SIGNAL_GAP_GRAIN_LOG2) { /* (else a store of nearly the same) */
        __atomic_store_n(&slot->last_signal_ns, now, __ATOMIC_RELAXED);
        if (lb_unlikely(last && now > last + LB_SIGNAL_GAP_NS)) {
            self->signal_gap_from = last;
            return true;
        }
    }
    return false;
}

/* A signal on an object in sampled state v (nonzero), whose slot is slot
 * (NULL: none), gap: whether it ends a gap. Does it measure? Counts the
 * signal down on the calling thread (a countdown of 0, a new thread's,
 * measures at once and draws the first real one). */
static inline bool lb_signal_sampled_due(lb_thread_t *self, uint32_t v, const lb_signal_hot_t *slot,
                                         bool gap)
{
    if (self->signal_countdown-- <= 1 || gap || (v & LB_SIGNAL_STATE) == LB_SIGNAL_MARKED)
        return true;
    return slot && __atomic_load_n(&slot->marked, __ATOMIC_RELAXED); /* a slot keeps the mark */
}

/* The same for an object with a slot, which keeps the mark (the state
 * bits stay LB_SIGNAL_SAMPLED), and no gap ending. */
static inline bool lb_signal_slot_due(lb_thread_t *self, const lb_signal_hot_t *slot)
{
    return self->signal_countdown-- <= 1 || __atomic_load_n(&slot->marked, __ATOMIC_RELAXED);
}

/* A signal on obj (mon), sampled state v (nonzero): does it measure?
 * Looks for a gap if its slot does (*looked_at: the look's time, else
 * 0), then counts the signal down. */
static inline bool lb_signal_sampled_needs(lb_thread_t *self, uint32_t v, const void *obj,
                                           lb_obj_kind kind, uint64_t *looked_at)
{
    lb_signal_hot_t *slot = lb_signal_waits_slot(v);
    *looked_at = 0;
    bool gap = false;
    if (lb_signal_looks_for_gaps(self, slot, obj, kind)) {
        *looked_at = lb_now_ns();
        gap = lb_signal_gap_ends(self, slot, *looked_at);
    }
    return lb_signal_sampled_due(self, v, slot, gap);
}
#endif
