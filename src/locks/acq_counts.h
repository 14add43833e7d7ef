/* Acquisitions counted by each thread in its own record instead of the
 * object's lb_mon: those of hot spin locks and of semaphores.
 *
 * Why: a spin lock has no spare word for a count (the mutex keeps its own
 * in the mutex, mutex_ops.h), so its acquisitions are counted in the
 * lb_mon. On a lock that changes hands often that line then moves between
 * the threads with every hand-off, inside the new holder's hold: bench/
 * handoff's 2-thread spin row ran at 0.41x native with the count, 0.96x
 * without (docs/PERFORMANCE.md, "Hot spin locks"). So once a spin lock is
 * hot (mon->spin_sampled, blame/spin_sampled.h) each thread counts its
 * acquisitions of it in a slot of its own table. A semaphore has no
 * holder to serialize a count in the lb_mon, so a count there is an
 * atomic add: a locked instruction more than glibc's own post and wait,
 * which made the uncontended post+wait pair 1.73x native where a plain
 * add left it 1.28x (docs/PERFORMANCE.md, "Uncontended fast paths"). So
 * a sem_wait that takes a unit at once counts it in the thread's table
 * too. The lb_mon's count gets them when the object dies (destroy,
 * re-init, the orphan sweep) and at every write of the profile
 * (lb_acq_counts_take). An object that is not counted so (a spin lock
 * that is not hot), or one a thread finds no free slot for, is counted
 * in the lb_mon as before.
 *
 * Invariants:
 *   - a slot's count is incremented only by its thread: a spin lock's
 *     while it holds the lock, a semaphore's inside its sem_wait call
 *     (so no two increments of a slot race);
 *   - a slot is claimed (mon stored, count already 0) only by its thread,
 *     in the same places; it is emptied (its name swapped for a moving
 *     mark by one compare-and-swap, the count exchanged to 0 and added to
 *     the lb_mon, the name cleared) by lb_acq_counts_take, when the
 *     object dies (nobody can hold the lock then, and nobody be inside
 *     sem_wait: destroying either is undefined) or at a write of the
 *     profile (threads may still run: an increment racing the exchange
 *     is lost, as any count made after the final write is), and by its
 *     thread's close; whoever swaps the name moves the count, and the
 *     other waits until it is in the lb_mon;
 *   - counts go into the lb_mon by atomic adds only, once an object may
 *     have slots (a close adds to it at any time);
 *   - a semaphore's lb_mon says whether any thread claimed a slot for it
 *     (sem_counted, set by the claim), so that its death scans the
 *     threads' tables only then; and a thread that ends empties and
 *     closes its table, so that a scan reads live threads' tables only
 *     (thread records are never freed);
 *   - only a thread's own calls use its table: a raw clone, which runs
 *     with its creator's lb_self (sampler/foreign.h), counts in the
 *     lb_mon (lb_acq_count);
 *   - a semaphore's lb_mon is never swept as an orphan, so a slot that
 *     names one stays its until the semaphore is destroyed or
 *     re-initialized, or the thread ends: one freed without sem_destroy
 *     keeps its slot (the thread's next objects may then find the table
 *     full and count in their lb_mons);
 *   - acq_count_last always points at one of the thread's slots, which
 *     the fast paths check to still count the object they counted. */
#ifndef LB_ACQ_COUNTS_H
#define LB_ACQ_COUNTS_H
#include <stdint.h>

#include "blame/mon.h"
#include "core/thread.h"
#include "util/stack_bounds.h"

#define LB_ACQ_COUNT_SLOTS 8

typedef struct lb_acq_count {
    lb_mon_t *mon;  /* NULL: free */
    uint64_t count; /* acquisitions of mon's object by the thread, not yet in mon */
} lb_acq_count_t;

typedef struct lb_acq_counts {
    lb_acq_count_t slot[LB_ACQ_COUNT_SLOTS];
    uint32_t closed; /* 1 once its thread ended: its counts went to the lb_mons */
} lb_acq_counts_t;

/* The thread's table (locks layer init) and the fork child's fresh start. */
int lb_acq_counts_init(lb_thread_t *t);
void lb_acq_counts_fork_child(lb_thread_t *self);
/* The calling thread ends: its counts go to their lb_mons, and the table
 * is closed (what it still counts goes to the lb_mon at once), so that
 * lb_acq_counts_take looks only at live threads' tables. */
void lb_acq_counts_close(lb_thread_t *self);
/* Bring every thread's count of mon's object into mon->acquisitions and
 * free those slots: the object is dying, or the profile is written. Only
 * for an object that may have any (lb_acq_counts_kept). */
void lb_acq_counts_take(lb_mon_t *mon);

/* Whether threads may keep counts of mon's object: a hot spin lock, or a
 * semaphore a thread claimed a slot for. */
static inline bool lb_acq_counts_kept(const lb_mon_t *mon)
{
    if (mon->kind == LB_OBJ_SPIN)
        return __atomic_load_n(&mon->spin_sampled, __ATOMIC_RELAXED) != 0;
    return mon->kind == LB_OBJ_SEM && __atomic_load_n(&mon->sem_counted, __ATOMIC_RELAXED) != 0;
}

/* Not in the slot counted last: find or claim mon's slot. Returns 0. */
int lb_acq_count_in_table(lb_thread_t *self, lb_mon_t *mon);

/* One acquisition of mon's object by self, in self's table where self is
 * the calling thread's (on its own known stack; a raw clone's self is its
 * creator's), else in the lb_mon. Returns 0, so that a fast path can end
 * in it with a tail call. */
static inline int lb_acq_count(lb_thread_t *self, lb_mon_t *mon)
{
    if (lb_unlikely(!lb_stack_here_known())) {
        __atomic_fetch_add(&mon->acquisitions, 1, __ATOMIC_RELAXED);
        return 0;
    }
    lb_acq_count_t *c = self->acq_count_last;
    if (lb_likely(__atomic_load_n(&c->mon, __ATOMIC_RELAXED) == mon)) {
        c->count++;
        return 0;
    }
    return lb_acq_count_in_table(self, mon);
}
#endif
