/* The locks layer's per-thread hooks (core/thread_hooks.h): a thread keeps
 * a small cache of free lb_mon slots while it is attached, and gives it
 * back to the pool when it ends. */
#include "core/thread_hooks.h"
#include "locks/monitored.h"

static void locks_start(lb_thread_t *t)
{
    lb_mon_cache_enable();
}

static void locks_stop(lb_thread_t *t)
{
    lb_mon_cache_flush();
}

LB_THREAD_HOOKS(locks_hooks) = {
    .rank = LB_RANK_LOCKS,
    .start = locks_start,
    .stop = locks_stop,
};
