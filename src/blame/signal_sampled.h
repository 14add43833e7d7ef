/* Hot condition variables and semaphores: one signal interval in
 * LB_SIGNAL_SAMPLE_EVERY is measured, chosen at random, and stands for
 * that many (DESIGN rule 3, estimated; thesis ch. 6.4 measures spin waits
 * by samples in the same spirit).
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
 * clocks (a clock read, and meta or the slot's lock). The next signal on
 * the object, by any thread, reads V again and is blamed N times the
 * idleness accrued in between: its own interval, scaled by the inverse of
 * the probability that the interval was measured. Every interval is
 * measured with the same probability whatever its site, length or
 * waiters, so each site's expected blame is its exact blame; the choice
 * does not depend on when CPU samples come. Each site's error falls as
 * 1/sqrt(its measured intervals).
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
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/sampled_mode.h"
#include "blame/signal_waits.h"
#include "common/sampled_limits.h" /* LB_SIGNAL_SAMPLE_EVERY: N */
#include "core/thread.h"

#define LB_SIGNAL_SAMPLED 1u
#define LB_SIGNAL_MARKED 2u
#define LB_SIGNAL_STATE 3u /* the state bits; the waits' slot number above them */

extern lb_sampled_mode_t lb_signal_mode;
/* Read LOCKBLAME_COND. */
void lb_signal_sampled_setup(void);

/* Under meta, at an exact collect of cond/sem mon at now: turn it sampled
 * when the mode says so (sampled, or auto and the object is hot). */
void lb_signal_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now);

/* The sampled object's step of a signal or post (called when
 * lb_signal_sampled_needs is true): end a measured interval, begin one,
 * or both; blame goes onto the signal's calling context. errno kept. */
void lb_signal_sampled_measure(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind);

/* A signal on mon, sampled state v (nonzero): does it measure? Counts the
 * signal down on the calling thread (a countdown of 0, a new thread's,
 * measures at once and draws the first real one). */
static inline bool lb_signal_sampled_needs(lb_thread_t *self, uint32_t v)
{
    if (self->signal_countdown-- <= 1 || (v & LB_SIGNAL_STATE) == LB_SIGNAL_MARKED)
        return true;
    lb_signal_hot_t *slot = lb_signal_waits_slot(v); /* a slot keeps the mark itself */
    return slot && __atomic_load_n(&slot->marked, __ATOMIC_RELAXED);
}
#endif
