/* When a hot lock's blame is measured by CPU samples instead of
 * timestamps in its holds (spin_sampled.h for spin locks,
 * mutex_sampled.h for mutexes), and when a hot cond's or semaphore's
 * signal blame is estimated from a random sample of its signal intervals
 * (signal_sampled.h; the same modes and rate, counted on signals).
 *
 * The mode comes from the environment (LOCKBLAME_SPIN, LOCKBLAME_MUTEX,
 * LOCKBLAME_COND: exact | sampled | auto, default auto). In auto mode a lock starts exact
 * and turns sampled for good once its accounted holds (holds while others
 * wait) come at LB_SAMPLED_RATE a second or faster, measured over
 * LB_SAMPLED_RATE_HOLDS holds: at that rate exact accounting, a few clock
 * reads and meta round trips inside every hold, changes how the lock
 * passes between threads (docs/PERFORMANCE.md). Holds, not waits: exact
 * accounting in the holds keeps the waiters from winning, so waits become
 * few and long.
 *
 * Both kinds owe blame the same way: a sample that finds idleness accrued
 * while the lock is held adds it to the lock's record as owed, and the
 * holder's release takes it (lb_sampled_owe, lb_sampled_owed_take).
 *
 * Invariants: the rate fields of lb_object_stats are written under the
 * lock's meta only; the owed blame changes only by atomic adds (the
 * handler) and the release's exchange (under meta). */
#ifndef LB_BLAME_SAMPLED_MODE_H
#define LB_BLAME_SAMPLED_MODE_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/object_stats.h"

#ifndef LB_SAMPLED_RATE       /* (a build may set another, to measure the choice) */
#define LB_SAMPLED_RATE 50000 /* accounted holds per second per lock */
#endif
#define LB_SAMPLED_RATE_HOLDS 512 /* accounted holds per rate measurement */

typedef enum {
    LB_SAMPLED_AUTO,
    LB_SAMPLED_EXACT,
    LB_SAMPLED_ALWAYS
} lb_sampled_mode_t;

/* The mode the variable `var` asks for (one lockblame: line for a bad
 * value: auto then). If `needs_samples` (spin waits, mutex holders:
 * measured by CPU samples), sampled modes need CPU sampling with a known
 * period; without it the mode is exact (one line, ending in `fallback`,
 * if `var` asked for sampled). */
lb_sampled_mode_t lb_sampled_mode_from_env(const char *var, bool needs_samples,
                                           const char *fallback);

/* The shards that count a hot object's waiters (mutex_sampled.h,
 * signal_waits.h) in use - 1: thread id & mask picks a waiter's shard.
 * The largest power of two at most half the CPUs the process may run on
 * (its affinity mask), up to 8 (1 on
 * 2-3 CPUs, where the cores share a cache and one line cost nothing; 8
 * from 16): each shard is a line a reader must fetch, and on 2 vCPUs 8
 * shards made the task queue's hand-off rate 15-40% higher than one
 * (docs/PERFORMANCE.md, "Hot objects' shards"). Set once by
 * lb_hot_shards_setup, before any thread waits. */
#define LB_HOT_SHARDS 8
extern uint32_t lb_hot_shard_mask;
void lb_hot_shards_setup(void);

/* Under meta, at an accounted release at now: true when this hold ends a
 * measurement that found the lock hot. */
bool lb_sampled_rate_is_hot(lb_object_stats_t *stats, uint64_t now);

/* Signal handler: ns of idleness that a sample found accrued while mon
 * was held, owed by the holder. The holder's release collects it
 * (lb_sampled_owed_take): raising clock_moved sends it to the accounted
 * path. */
static inline void lb_sampled_owe(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t ns)
{
    __atomic_fetch_add(&stats->sampled_held_ns, ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&stats->sampled_owed_ns, ns, __ATOMIC_RELEASE);
    /* after the add: a release that clears the flag before taking the
     * owed blame either takes this add or sees the flag again */
    __atomic_store_n(&mon->clock_moved, 1, __ATOMIC_RELEASE);
}

/* Under meta, by the releasing holder: the owed blame, taken (ns). */
static inline double lb_sampled_owed_take(lb_object_stats_t *stats)
{
    if (!stats || __atomic_load_n(&stats->sampled_owed_ns, __ATOMIC_RELAXED) == 0)
        return 0;
    return (double)__atomic_exchange_n(&stats->sampled_owed_ns, 0, __ATOMIC_ACQ_REL);
}
#endif
