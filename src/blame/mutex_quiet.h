/* The quiet bit: a monitored mutex's stash word says when its lock and
 * unlock have nothing to account, though it has an lb_mon.
 *
 * locks/mutex_ops.h keeps a mutex's state in its stash word (glibc's
 * __list.__next, which this header locates): counted, or the offset of
 * its lb_mon with LB_STASH_TAG. With an lb_mon, the fast paths read two
 * fields of it inside the hold: the lock its exact waiters (the new hold
 * is then accounted), the unlock its waiters and hold flags (the release
 * then collects blame). On a hot mutex whose waits are measured by holder
 * samples (mutex_sampled.h) both are almost always 0, and yet those
 * loads, a dependent chain through the pool, lengthened holds of a few
 * ns enough that the other thread found the lock taken more often and
 * each such try cost a futex wake (bench/handoff with 2 threads at 0.65x
 * native, its hand-off rate +70%; with the stash treated as counted
 * 0.87x and +22%: docs/PERFORMANCE.md, "Hot mutexes"). LB_STASH_QUIET
 * beside the tag says that both fields are 0: the fast paths then treat
 * the mutex as counted, one compare more than a counted one.
 *
 * Invariant: a stash holding LB_STASH_TAG | LB_STASH_QUIET names an
 * lb_mon whose waiters and hold_flags are 0 (up to the race every
 * needs-accounting test has: a waiter that arrives just after the test
 * begins the hold's accounting itself, blame.c's wait_begins).
 *   - Set only on a mutex in a sampled slot, under its lb_mon's meta,
 *     when both are 0 (lb_mutex_quiet_settle): when the slot is taken,
 *     and at each release that collects blame (sampled_release_collects).
 *   - Cleared under meta by an exact waiter before it counts itself
 *     (wait_begins), and by a holder sample right after it raises
 *     clock_moved (mutex_sampled.c). That handler runs on the owner,
 *     the only thread that sets the bit while the slot has waiters (its
 *     accounted release, which holds the mutex), so the settle reads
 *     clock_moved again after setting the bit, and takes it back if the
 *     handler interrupted it in between.
 * The bit is written only by a compare-and-swap from the value that names
 * the lb_mon without it or with it (lb_mutex_stash_of, which the hot slot
 * keeps, with the mutex's address: mutex_sampled.h): the other writers
 * of the stash (conversion, counting afresh, retirement) compare-and-swap
 * or store whole values, and a re-initialized mutex is left alone.
 *
 * The bit comes back only at a release that takes mon's meta lock. A
 * timed waiter's own release, which finds nobody waiting and nothing
 * owed, skips the lock (blame.c's hold_ends), so the fast paths read the
 * lb_mon again until the next release that collects owed blame: no blame
 * is lost, only the saving, for a while. */
#ifndef LB_BLAME_MUTEX_QUIET_H
#define LB_BLAME_MUTEX_QUIET_H
#include <pthread.h>
#include <stdint.h>

#include "blame/mon.h"

#define LB_STASH_TAG   ((uintptr_t)1)
#define LB_STASH_QUIET ((uintptr_t)2)

/* Where the stash of mutex m lives (locks/mutex_ops.h says what it holds). */
static inline uintptr_t *lb_mutex_stash(pthread_mutex_t *m)
{
    return (uintptr_t *)&m->__data.__list.__next;
}

/* The mutex's stash (at `stash`) may need its lb_mon again: it loses the
 * bit if it holds `named | LB_STASH_QUIET`, named being the value that
 * names the lb_mon (locks/mutex_ops.h's lb_mutex_stash_of; the mutex's
 * memory may hold another mutex by now in a program that re-initialized
 * it, where nothing is ours to change). */
static inline void lb_mutex_quiet_clear(uintptr_t *stash, uintptr_t named)
{
    uintptr_t quiet = named | LB_STASH_QUIET;
    if (__atomic_load_n(stash, __ATOMIC_RELAXED) == quiet)
        __atomic_compare_exchange_n(stash, &quiet, named, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
}

/* Under mon->meta, mon a mutex in a sampled slot whose stash is at
 * `stash` and names it as `named`: quiet if nothing waits for its fast
 * paths. */
static inline void lb_mutex_quiet_settle(const lb_mon_t *mon, uintptr_t *stash, uintptr_t named)
{
    if (mon->waiters != 0 || __atomic_load_n(&mon->hold_flags, __ATOMIC_RELAXED) != 0)
        return;
    uintptr_t seen = named;
    if (!__atomic_compare_exchange_n(stash, &seen, named | LB_STASH_QUIET, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED))
        return; /* quiet already, or no longer mon's mutex */
    if (__atomic_load_n(&mon->clock_moved, __ATOMIC_SEQ_CST) != 0)
        lb_mutex_quiet_clear(stash, named); /* the owner's sample handler, meanwhile */
}
#endif
