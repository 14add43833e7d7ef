/* Acquisitions of hot spin locks, counted by each thread in its own
 * record instead of the lock's lb_mon.
 *
 * Why: a spin lock has no spare word for a count (the mutex keeps its own
 * in the mutex, mutex_ops.h), so its acquisitions are counted in the
 * lb_mon. On a lock that changes hands often that line then moves between
 * the threads with every hand-off, inside the new holder's hold: bench/
 * handoff's 2-thread spin row ran at 0.41x native with the count, 0.96x
 * without (docs/PERFORMANCE.md, "Hot spin locks"). So once a spin lock is hot
 * (mon->spin_sampled, blame/spin_sampled.h) each thread counts its
 * acquisitions of it in a slot of its own table; the lb_mon's count gets
 * them when the lock dies (destroy, re-init, the orphan sweep) and at the
 * final write (lb_spin_counts_take). A lock that is not hot, or one a
 * thread finds no free slot for, is counted in the lb_mon as before.
 *
 * Invariants:
 *   - a slot's count is incremented only by its thread, while it holds
 *     the slot's lock (so no two increments of a slot race);
 *   - a slot is claimed (mon stored, count already 0) only by its thread,
 *     and only while it holds that lock; it is freed (count exchanged to
 *     0, then mon cleared) only by lb_spin_counts_take, when the lock dies
 *     (nobody can hold it then: destroying a held lock is undefined) or
 *     at the final write (threads may still run: an increment racing the
 *     exchange is lost, as any count made after the write is);
 *   - spin_count_last always points at one of the thread's slots, which
 *     the fast path checks to still hold the lock it acquired. */
#ifndef LB_SPIN_COUNTS_H
#define LB_SPIN_COUNTS_H
#include <stdint.h>

#include "blame/mon.h"
#include "core/thread.h"

#define LB_SPIN_COUNT_SLOTS 8

typedef struct lb_spin_count {
    lb_mon_t *mon;  /* NULL: free */
    uint64_t count; /* acquisitions of mon's lock by the thread, not yet in mon */
} lb_spin_count_t;

typedef struct lb_spin_counts {
    lb_spin_count_t slot[LB_SPIN_COUNT_SLOTS];
} lb_spin_counts_t;

/* The thread's table (locks layer init) and the fork child's fresh start. */
int lb_spin_counts_init(lb_thread_t *t);
void lb_spin_counts_fork_child(lb_thread_t *self);
/* Bring every thread's count of mon's lock into mon->acquisitions and free
 * those slots: mon's lock is dying, or the final write. */
void lb_spin_counts_take(lb_mon_t *mon);

/* Hot lock, not in the slot counted last: find or claim its slot.
 * Returns 0. */
int lb_spin_count_in_table(lb_thread_t *self, lb_mon_t *mon);

/* One acquisition of mon's lock by self, which holds it now. Returns 0,
 * so that a fast path can end in it with a tail call. */
static inline int lb_spin_count_acquisition(lb_thread_t *self, lb_mon_t *mon)
{
    if (lb_likely(__atomic_load_n(&mon->spin_sampled, __ATOMIC_RELAXED) == 0)) {
        mon->acquisitions++;
        return 0;
    }
    lb_spin_count_t *c = self->spin_count_last;
    if (lb_likely(__atomic_load_n(&c->mon, __ATOMIC_RELAXED) == mon)) {
        c->count++;
        return 0;
    }
    return lb_spin_count_in_table(self, mon);
}
#endif
