/* Undirected idleness counts. See undirected.h.
 *
 * The waiting count changes on every contended wait, so it is sharded:
 * each thread updates the shard of its id, on a cache line of its own,
 * and the sampling handler sums the shards. One shared counter cost the
 * 2-thread lock mix +15% CPU from line bouncing alone, and +70% when it
 * also shared a line with data every fast path reads. */
#include "core/undirected.h"

#include "core/thread.h"
#include "util/common.h"

#define LB_WAIT_SHARDS 16

typedef struct {
    int32_t count;
    char pad[LB_CACHELINE - sizeof(int32_t)];
} lb_shard_t __attribute__((aligned(LB_CACHELINE)));

/* Written by a fork child's hook (lb_undirected_after_fork) and its
 * first threads: LB_FORK_WRITTEN (util/common.h). */
static lb_shard_t live LB_FORK_WRITTEN;                          /* attached and not yet detached */
static lb_shard_t waiting[LB_WAIT_SHARDS] LB_FORK_WRITTEN_ARRAY; /* inside a wrapped wait, by id */

void lb_undirected_thread_live(int delta)
{
    __atomic_fetch_add(&live.count, delta, __ATOMIC_RELAXED);
}

void lb_waiting_begin(lb_thread_t *self, lb_obj_kind kind)
{
    if (!self->waiting)
        __atomic_fetch_add(&waiting[self->id % LB_WAIT_SHARDS].count, 1, __ATOMIC_RELAXED);
    self->waiting = (uint32_t)kind + 1;
}

void lb_waiting_end(lb_thread_t *self)
{
    if (self->waiting)
        __atomic_fetch_sub(&waiting[self->id % LB_WAIT_SHARDS].count, 1, __ATOMIC_RELAXED);
    self->waiting = 0;
}

void lb_undirected_after_fork(void)
{
    __atomic_store_n(&live.count, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < LB_WAIT_SHARDS; i++)
        __atomic_store_n(&waiting[i].count, 0, __ATOMIC_RELAXED);
}

double lb_undirected_ratio(void)
{
    int32_t waiters = 0;
    for (int i = 0; i < LB_WAIT_SHARDS; i++)
        waiters += __atomic_load_n(&waiting[i].count, __ATOMIC_RELAXED);
    int32_t working = __atomic_load_n(&live.count, __ATOMIC_RELAXED) - waiters;
    if (waiters <= 0)
        return 0;
    return (double)waiters / (double)(working > 0 ? working : 1);
}
