/* Hot conds and semaphores, one signal interval in N measured: see
 * signal_sampled.h for the estimator, its invariants and when it applies. */
#include "blame/signal_sampled.h"

#include <errno.h>

#include "blame/blame.h"
#include "blame/blame_clock.h"
#include "blame/signal_waits.h"
#include "blame/wait_deferred.h"
#include "blame/wait_note_ops.h"
#include "util/clock.h"

lb_sampled_mode_t lb_signal_mode = LB_SAMPLED_EXACT;

void lb_signal_sampled_setup(void)
{
    /* a random choice of signals, no CPU samples: works with sampling off */
    lb_signal_mode = lb_sampled_mode_from_env("LOCKBLAME_COND", false, NULL);
}

void lb_signal_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    if (mon->signal_sampled || !stats ||
        (lb_signal_mode == LB_SAMPLED_AUTO && !lb_sampled_rate_is_hot(stats, now)))
        return;
    lb_signal_hot_t *slot = lb_signal_waits_take(mon);
    __atomic_store_n(&mon->signal_sampled,
                     LB_SIGNAL_SAMPLED | (slot ? lb_signal_waits_number(slot) : 0),
                     __ATOMIC_RELEASE);
}

/* log2 of the N of the thread's countdown (the one that may just have
 * ended): the weight of a mark it makes. */
static uint32_t current_log2(const lb_thread_t *self)
{
    return self->signal_every_log2 ? self->signal_every_log2 : LB_SIGNAL_SAMPLE_EVERY_LOG2;
}

/* The thread's next countdown at now: uniform on 1..2N-1 (mean N, from
 * the rate of the one that ended, signal_sampled.h), from its own
 * xorshift generator (seeded from its tid, never 0). Also the run of gap
 * looks its signals with waiters may skip, from their rate over the same
 * countdown (lb_signal_gap_skip_log2). */
static uint32_t next_countdown(lb_thread_t *self, uint64_t now)
{
    uint32_t lg = LB_SIGNAL_SAMPLE_EVERY_LOG2;
    self->gap_skip_log2 = 0;
    if (self->signal_drawn_ns) {
        lg = lb_signal_every_log2(self->signal_drawn, now - self->signal_drawn_ns);
        self->gap_skip_log2 =
            (uint16_t)lb_signal_gap_skip_log2(self->gap_eligible, now - self->signal_drawn_ns);
    }
    self->gap_eligible = 0;
    uint32_t x = self->signal_rng ? self->signal_rng : (uint32_t)self->tid * 2654435761u | 1;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    self->signal_rng = x;
    uint32_t countdown = 1 + x % ((2u << lg) - 1);
    self->signal_every_log2 = (uint16_t)lg;
    self->signal_drawn = countdown;
    self->signal_drawn_ns = now;
    return countdown;
}

/* A measured interval's blame: 2^log2 (its mark's N) times what accrued
 * since its mark, capped by the accrual not yet blamed; counted in stats. */
static double interval_blame(lb_object_stats_t *stats, double accrued, uint32_t log2)
{
    double blame = accrued * (double)(1u << log2);
    double unblamed = stats ? stats->accrued_held_ns - stats->blamed_ns : blame;
    blame = blame < unblamed ? blame : (unblamed > 0 ? unblamed : 0);
    if (stats)
        stats->blamed_ns += blame;
    return blame;
}

/* What a measured signal read at its clock read, for its mark. */
typedef struct slot_mark {
    double v;         /* V */
    uint64_t i;       /* I */
    uint64_t waiting; /* the slot's waiters */
    uint64_t at;      /* the time of the read */
} slot_mark_t;

/* Under meta: the step of an object without a slot, its marks in the
 * lb_mon (clock_at_acquire, the state and mark bits). mark_log2: 0, or
 * this signal marks, standing for 2^mark_log2 intervals. */
static lb_hold_t measure_in_mon(lb_thread_t *self, lb_mon_t *mon, uint32_t v, uint32_t mark_log2,
                                uint64_t now)
{
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    lb_clock_advance(mon, stats, now);
    lb_hold_t hold = { .record = stats, .stats = mon->stats };
    if ((v & LB_SIGNAL_STATE) == LB_SIGNAL_MARKED) { /* it ends a measured interval */
        hold.blame_ns = interval_blame(stats, mon->clock - mon->clock_at_acquire,
                                       (v & LB_SIGNAL_MARK_LOG2_MASK) >> LB_SIGNAL_MARK_LOG2_SHIFT);
        lb_note_collect(self, stats, now, hold.blame_ns);
    }
    mon->clock_at_acquire = mon->clock; /* the next interval begins here */
    mon->clock_moved = 0;
    if (stats && mark_log2) /* (for a timed-out wait's part in it: lb_signal_sampled_open) */
        stats->signal_mark_ns = now;
    mon->signal_sampled =
        (v & ~(LB_SIGNAL_STATE | LB_SIGNAL_MARK_LOG2_MASK)) |
        (mark_log2 ? LB_SIGNAL_MARKED | mark_log2 << LB_SIGNAL_MARK_LOG2_SHIFT : LB_SIGNAL_SAMPLED);
    return hold;
}

bool lb_signal_sampled_open(lb_mon_t *mon, const lb_object_stats_t *stats, uint64_t *from,
                            double *v_from)
{
    uint32_t v = mon->signal_sampled;
    lb_signal_hot_t *slot = lb_signal_waits_slot(v);
    if (slot && __atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE) == mon) {
        lb_meta_lock(&slot->lock); /* (after meta: signal_waits.h's order) */
        bool open = slot->marked != 0;
        *from = slot->mark_ns;
        *v_from = slot->v_mark;
        lb_meta_unlock(&slot->lock);
        return open;
    }
    if ((v & LB_SIGNAL_STATE) != LB_SIGNAL_MARKED)
        return false;
    *from = stats ? stats->signal_mark_ns : 0;
    *v_from = mon->clock_at_acquire;
    return true;
}

/* The step of an object with a slot: its marks live in the slot, under
 * the slot's lock, so that a measured signal writes no line the waits
 * read. The lb_mon's meta is taken only while waits from before the slot
 * remain (mon->waiters: none begin any more), to bring their clock V up
 * to date; after that V stands still and is read as it is. */
static lb_hold_t measure_in_slot(lb_thread_t *self, lb_mon_t *mon, lb_signal_hot_t *slot,
                                 uint64_t now, uint64_t gap_from, slot_mark_t *mark)
{
    lb_object_stats_t *stats = lb_object_stats_of_mon(slot->stats);
    bool with_meta = __atomic_load_n(&mon->waiters, __ATOMIC_ACQUIRE) != 0;
    if (with_meta) {
        lb_meta_lock(&mon->meta);
        lb_clock_advance(mon, stats, now);
    }
    double v_now;
    __atomic_load(&mon->clock, &v_now, __ATOMIC_RELAXED); /* still, once no wait uses it */
    lb_meta_lock(&slot->lock);
    lb_hold_t hold = { .record = stats, .stats = slot->stats };
    uint64_t i_now = lb_signal_waits_integral(slot, stats, now, &mark->waiting);
    uint64_t gap_accrued;
    if (gap_from && !with_meta && now > gap_from &&
        lb_signal_waits_since(slot, gap_from, now, &gap_accrued)) {
        /* it ends a gap: its idleness exactly, counted once ("Gaps" in
         * signal_sampled.h) */
        hold.blame_ns = interval_blame(stats, (double)gap_accrued, 0);
        lb_note_collect(self, stats, now, hold.blame_ns);
    } else if (slot->marked) { /* it ends a measured interval */
        /* I may come out below the mark's: the mark extrapolated I with
         * the waiters at its read, and one may have left before the
         * mark's end (a signal by a thread not holding the cond's mutex,
         * a deferred wait end: blame/wait_deferred.h). A signed
         * difference, never below 0: as unsigned it wrapped to ~2^64 ns,
         * and the cap below then gave the closing signal all the
         * object's unblamed accrual (a few such closes left most of a
         * bursty program's waiting to whichever site closed them). */
        double accrued = v_now - slot->v_mark + (double)(int64_t)(i_now - slot->i_mark);
        hold.blame_ns = interval_blame(stats, accrued > 0 ? accrued : 0, slot->mark_log2);
        lb_note_collect(self, stats, now, hold.blame_ns);
    }
    /* a mark of this signal is set by mark_at_end */
    __atomic_store_n(&slot->marked, 0, __ATOMIC_RELAXED);
    lb_meta_unlock(&slot->lock);
    if (with_meta)
        lb_meta_unlock(&mon->meta);
    mark->v = v_now;
    mark->i = i_now;
    mark->at = now;
    return hold;
}

/* The mark of a measured signal, set once its bookkeeping is done: the
 * interval it opens begins at `end`, so that none of that work (the
 * shards' read, a deposit's context look-up) lies inside the interval.
 * It did, and a measured interval held the signaller's extra time while
 * its waiters waited: measured intervals came out longer than the rest.
 * On cond_sampled's fast run (gt_cond_hot, N = 64), each site's
 * error in % of the total wait: with the mark at the clock read, the
 * fast site leaned +2.8 and the slow one -3.5 on average (20 runs; mean
 * |error| 2.8 and 3.5, at most 7.8), here +0.3 and -1.3 (mean |error|
 * 2.0 and 2.4, at most 7.6): the lean is mostly gone, the spread is the
 * sampling's. The rest is the mark's
 * effect on what follows it: a 2 us delay added before this mark still
 * put the fast site +4.5..+8.8 and the slow one as low (+9..+12 with the
 * delay inside the interval), so what is left to gain is a cheaper mark.
 * I(end) is I at the read plus the waiters then times the time since:
 * nobody begins or ends a wait on a cond while its signaller holds the
 * cond's mutex; with nobody waiting at the read, I(end) is I at the read
 * and the end's time is not read. A signal by another thread in between (one not holding
 * the mutex) found the slot unmarked; one that marked it in between
 * keeps its mark, and this one is dropped. (An object without a slot,
 * measure_in_mon, still marks at the clock read: all slots taken.) */
static void mark_at_end(lb_signal_hot_t *slot, const slot_mark_t *mark, uint32_t mark_log2,
                        uint64_t end)
{
    lb_meta_lock(&slot->lock);
    if (!slot->marked) {
        slot->v_mark = mark->v;
        slot->i_mark = mark->i + mark->waiting * (end > mark->at ? end - mark->at : 0);
        slot->mark_log2 = mark_log2;
        slot->mark_ns = end;
        __atomic_store_n(&slot->marked, 1, __ATOMIC_RELAXED);
    }
    lb_meta_unlock(&slot->lock);
}

/* The measure's time: the signal's gap look's, when it looked (read a
 * few hundred instructions earlier in the same signal call: both lie
 * after the program's call and before the real signal, and what may
 * happen between them, a wait's begin or end by a thread that does not
 * hold the cond's mutex, can as well happen just before a fresh read; a
 * deferred wait end flushed first carries its own earlier time), else a
 * clock read. On the small-task queue a fifth of the measured signals
 * looked first. */
void lb_signal_sampled_measure(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind,
                               uint64_t looked_at)
{
    lb_wait_deferred_flush(self); /* its own wait's end, if still deferred, counts first */
    int saved_errno = errno;
    lb_enter(self);
    /* the countdown ran out (0; or it was 0 and wrapped in needs) */
    bool mark = self->signal_countdown == 0 || self->signal_countdown >= 2 * LB_SIGNAL_SAMPLE_MAX;
    uint64_t now = looked_at ? looked_at : lb_now_ns();
    uint32_t mark_log2 = mark ? current_log2(self) : 0;
    if (mark)
        self->signal_countdown = next_countdown(self, now);
    uint64_t gap_from = self->signal_gap_from;
    self->signal_gap_from = 0;
    lb_hold_t hold = { 0 };
    slot_mark_t slot_mark;
    lb_signal_hot_t *slot =
        lb_signal_waits_slot(__atomic_load_n(&mon->signal_sampled, __ATOMIC_ACQUIRE));
    if (slot && __atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE) == mon) {
        uint64_t previous = __atomic_load_n(&slot->measured_ns, __ATOMIC_RELAXED);
        if (previous && now > previous + LB_SIGNAL_GAP_NS &&
            !__atomic_load_n(&slot->gaps, __ATOMIC_RELAXED))
            __atomic_store_n(&slot->gaps, 1, __ATOMIC_RELAXED); /* from the next signal on */
        hold = measure_in_slot(self, mon, slot, now, gap_from, &slot_mark);
    } else {
        slot = NULL;
        lb_meta_lock(&mon->meta);
        uint32_t v = mon->signal_sampled;
        if (v) /* (0: the lb_mon was retired and reused meanwhile) */
            hold = measure_in_mon(self, mon, v, mark_log2, now);
        lb_meta_unlock(&mon->meta);
    }
    lb_leave(self);
    lb_deposit(self, &hold, kind, 0);
    if (slot && mark_log2) /* (nobody waiting: I(end) is I at the read, no clock read) */
        mark_at_end(slot, &slot_mark, mark_log2, slot_mark.waiting ? lb_now_ns() : slot_mark.at);
    errno = saved_errno;
}
