/* Hot conds and semaphores, one signal interval in N measured: see
 * signal_sampled.h for the estimator, its invariants and when it applies. */
#include "blame/signal_sampled.h"

#include <errno.h>

#include "blame/blame.h"
#include "blame/blame_clock.h"
#include "blame/signal_waits.h"
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

/* The thread's next countdown: uniform on 1..2N-1 (mean N), from its own
 * xorshift generator (seeded from its tid, never 0). */
static uint32_t next_countdown(lb_thread_t *self)
{
    uint32_t x = self->signal_rng ? self->signal_rng : (uint32_t)self->tid * 2654435761u | 1;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    self->signal_rng = x;
    return 1 + x % (2 * LB_SIGNAL_SAMPLE_EVERY - 1);
}

void lb_signal_sampled_measure(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind)
{
    int saved_errno = errno;
    lb_enter(self);
    bool mark = self->signal_countdown == 0 || self->signal_countdown > 2 * LB_SIGNAL_SAMPLE_EVERY;
    if (mark)
        self->signal_countdown = next_countdown(self);
    uint64_t now = lb_now_ns();
    lb_hold_t hold = { 0 };
    lb_meta_lock(&mon->meta);
    uint32_t v = mon->signal_sampled;
    if (v) { /* (0: the lb_mon was retired and reused meanwhile) */
        lb_object_stats_t *stats = lb_object_stats_of(mon);
        lb_clock_advance(mon, stats, now);
        /* the waits that began once it was sampled: their clock */
        lb_signal_hot_t *slot = lb_signal_waits_slot(v);
        uint64_t i_now = slot ? lb_signal_waits_integral(slot, stats, now) : 0;
        hold = (lb_hold_t){ .record = stats, .stats = mon->stats };
        if ((v & LB_SIGNAL_STATE) == LB_SIGNAL_MARKED) {
            /* this signal ends a measured interval: it stands for N */
            double accrued = mon->clock - mon->clock_at_acquire;
            if (slot)
                accrued += (double)(i_now - slot->i_mark);
            double blame = accrued * LB_SIGNAL_SAMPLE_EVERY;
            double unblamed = stats ? stats->accrued_held_ns - stats->blamed_ns : blame;
            hold.blame_ns = blame < unblamed ? blame : (unblamed > 0 ? unblamed : 0);
            if (stats)
                stats->blamed_ns += hold.blame_ns;
            lb_note_collect(self, stats, now, hold.blame_ns);
        }
        mon->clock_at_acquire = mon->clock; /* the next interval begins here */
        if (slot)
            slot->i_mark = i_now;
        mon->clock_moved = 0;
        mon->signal_sampled = (v & ~LB_SIGNAL_STATE) | (mark ? LB_SIGNAL_MARKED : LB_SIGNAL_SAMPLED);
    }
    lb_meta_unlock(&mon->meta);
    lb_leave(self);
    lb_deposit(self, &hold, kind, 0);
    errno = saved_errno;
}
