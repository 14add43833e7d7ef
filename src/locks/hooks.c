/* The locks layer's hooks (core/hooks.h).
 *
 * Per thread: a thread keeps a small cache of free lb_mon slots while it
 * is attached, and gives it back to the pool when it ends; and its counts
 * of hot spin locks' and semaphores' acquisitions (acq_counts.h), zeroed
 * in a fork child.
 * Per process: the lb_mon pool is reserved at start (with the object
 * records), the address map and the recent conversions at the first
 * contention or before the first fork (unless the address space is
 * limited), so that fork children inherit them (a child would otherwise
 * reserve its own, two system calls a table); across fork, prepare then
 * holds the pool lock, the parent releases it, and the child also
 * releases every lb_mon's meta lock (see lb_mon_fork_child), and counts
 * the parent's counted mutexes afresh (lb_mutex_fork_child). */
#include "blame/mutex_sampled.h"
#include "blame/signal_sampled.h"
#include "blame/signal_waits.h"
#include "core/hooks.h"
#include "core/phase.h"
#include "locks/mon_gc.h"
#include "locks/monitored.h"
#include "locks/objmap.h"
#include "locks/mutex_ops.h"
#include "locks/acq_counts.h"
#include "locks/spin_ops.h"
#include "util/log.h"
#include "util/pages.h"

static int locks_init(lb_thread_t *t)
{
    return lb_acq_counts_init(t);
}

static void locks_start(lb_thread_t *t)
{
    lb_mon_cache_enable();
}

static void locks_stop(lb_thread_t *t)
{
    lb_mon_cache_flush();
    lb_acq_counts_close(t);
}

LB_THREAD_HOOKS(locks_hooks) = {
    .rank = LB_RANK_LOCKS,
    .init = locks_init,
    .start = locks_start,
    .stop = locks_stop,
};

static void locks_setup(void)
{
    if (lb_mon_pool_setup() != 0)
        lb_warn("cannot reserve memory for monitored locks; locks stay unmonitored");
    lb_spin_sampling_setup();
    lb_hot_shards_setup();
    lb_mutex_sampled_setup();
    lb_signal_sampled_setup();
}

static void locks_fork_child(lb_thread_t *self)
{
    lb_mon_fork_child();
    lb_mutex_fork_child();
    lb_mutex_sampled_fork_child();
    lb_signal_waits_fork_child();
    if (self)
        lb_acq_counts_fork_child(self);
}

static void locks_fork_prepare(void)
{
    /* what a child's contention would reserve, ahead only where that
     * takes no address space a limit counts */
    if (lb_runtime_monitoring() && lb_mon_pool.base && !lb_pages_address_space_limited()) {
        lb_objmap_reserve();
        lb_mon_gc_reserve();
    }
    lb_mon_fork_prepare();
}

LB_PROCESS_HOOKS(locks_process_hooks) = {
    .rank = LB_RANK_LOCKS,
    .setup = locks_setup,
    .fork_prepare = locks_fork_prepare,
    .fork_parent = lb_mon_fork_parent,
    .fork_child = locks_fork_child,
};
