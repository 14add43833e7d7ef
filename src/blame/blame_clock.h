/* The blame clock: docs/DESIGN.md rules 2-3 for objects that are held.
 *
 * An object accrues idleness at rate w (threads waiting on it). While k
 * holders are accounted (`held`), the clock V advances by w/k per ns and
 * each holder is later blamed V(release) - V(acquire). While nobody is
 * accounted, the accrual is hand-off latency. Every change of w or of the
 * holder set first brings the accrual up to date ("advance").
 *
 * Invariants: all functions here run under mon->meta. An uncontended
 * operation never gets here: with w == 0, V cannot move, so a holder that
 * acquired without accounting has V(acquire) == clock_at_acquire. */
#ifndef LB_BLAME_CLOCK_H
#define LB_BLAME_CLOCK_H
#include <stdint.h>

#include "blame/object_stats.h"
#include "blame/mon.h"

/* Bring accrual up to now, with k = mon->held accounted holders. */
static inline void lb_clock_accrue(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    if (now <= mon->last_event_ns) /* another thread's timestamp was later */
        return;
    uint64_t dt = now - mon->last_event_ns;
    mon->last_event_ns = now;
    if (mon->waiters == 0)
        return;
    double accrued = (double)mon->waiters * (double)dt;
    if (mon->held) {
        /* One holder (every exclusive lock): no division on the release path. */
        double per_holder = mon->held == 1 ? accrued : accrued / mon->held;
        __atomic_store(&mon->clock, &(double){ mon->clock + per_holder }, __ATOMIC_RELAXED);
        mon->clock_moved = 1;
        if (stats)
            stats->accrued_held_ns += accrued;
    } else if (stats) {
        stats->handoff_ns += accrued;
    }
}

static inline void lb_clock_hold_begins(lb_mon_t *mon);

/* A mutex acquired while others waited records only when (hold_pending_ns,
 * no meta, blame.h's lb_hold_begins_deferred); the first meta section
 * after that, whoever runs it, begins the hold at that time: accrual up
 * to it was hand-off. If a hold is already accounted (a waiter that came
 * before the time was visible began one at its arrival), the time is
 * dropped. A time left over from an earlier hold (its waiters left before
 * they could see it) is harmless: it can only begin a hold while w == 0,
 * when nothing accrues. */
static inline void lb_clock_pending_begins(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t began)
{
    if (began == 0 || mon->held)
        return;
    lb_clock_accrue(mon, stats, began);
    lb_clock_hold_begins(mon);
}

static inline void lb_clock_take_pending(lb_mon_t *mon, lb_object_stats_t *stats)
{
    if (mon->kind != LB_OBJ_MUTEX || __atomic_load_n(&mon->hold_pending_ns, __ATOMIC_RELAXED) == 0)
        return;
    lb_clock_pending_begins(mon, stats,
                            __atomic_exchange_n(&mon->hold_pending_ns, 0, __ATOMIC_RELAXED));
}

/* The same, called by the thread that holds the lock (its release): only
 * the holder stores a pending time, so nobody can store one between this
 * load and the clearing store, and no atomic exchange is needed. */
static inline void lb_clock_take_own_pending(lb_mon_t *mon, lb_object_stats_t *stats)
{
    if (mon->kind != LB_OBJ_MUTEX)
        return;
    uint64_t began = __atomic_load_n(&mon->hold_pending_ns, __ATOMIC_RELAXED);
    if (began == 0)
        return;
    __atomic_store_n(&mon->hold_pending_ns, 0, __ATOMIC_RELAXED);
    lb_clock_pending_begins(mon, stats, began);
}

/* Bring accrual up to now (a pending hold begun first). mon->held is k,
 * the number of accounted holders during the interval (0 or 1 for
 * exclusive objects). */
static inline void lb_clock_advance(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    lb_clock_take_pending(mon, stats);
    lb_clock_accrue(mon, stats, now);
}

/* A holder's accounting begins now (after lb_clock_advance). */
static inline void lb_clock_hold_begins(lb_mon_t *mon)
{
    mon->held = 1;
    mon->clock_at_acquire = mon->clock;
    mon->clock_moved = 0;
}

/* A holder's accounting ends now (after lb_clock_advance); returns its
 * blame in ns. The object counts as free from here on. */
static inline double lb_clock_hold_ends(lb_mon_t *mon, lb_object_stats_t *stats)
{
    double blame = mon->clock - mon->clock_at_acquire;
    mon->clock_at_acquire = mon->clock;
    mon->clock_moved = 0;
    mon->held = 0;
    if (stats)
        stats->blamed_ns += blame;
    return blame;
}
#endif
