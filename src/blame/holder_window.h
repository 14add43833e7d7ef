/* How much CPU time one sample of a thread may owe to a hot mutex's hold
 * (blame/mutex_sampled.h): a bound for samples of the CPU-time timer.
 *
 * Why: that timer is checked only at scheduler ticks, and a sample
 * stands for all the CPU its thread used since its last one. A waiter's
 * CPU while it waits comes in bursts of a few us (each release that finds
 * a sleeper wakes it; it fails its exchange and sleeps again) that the
 * ticks seldom find, so without a bound that CPU rides on the thread's
 * next sample, which mostly finds it holding: on
 * tests/workloads_user/mutex_hot (2 threads, 2 vCPUs) 80% of the samples'
 * CPU is then seen as holding against 66% by the workload's own clocks,
 * and the blame 1.06-1.36x the holds' CPU time (0.98-1.21x with it).
 *
 * The bound: a sample inside a sampled mutex wait owes nothing and hands
 * its CPU on; a sample outside one may owe the CPU of the samples since
 * the thread's last sample outside one, up to the wall time since then
 * that the thread spent outside its sampled mutex waits (where alone it
 * can have held). Waits of other kinds and preemption only loosen it.
 * Samples of a perf event, taken at their period wherever the thread
 * runs, see the bursts in place and are not bounded.
 *
 * Invariants: waited_ns only grows, by the thread's own stores, and
 * in_wait is the thread's own; cpu_ns, from_ns and waited_at_from are
 * written by the thread's own handler only (signals of one kind do not
 * nest), or reset by the thread in a fork child. Async-signal-safe. */
#ifndef LB_BLAME_HOLDER_WINDOW_H
#define LB_BLAME_HOLDER_WINDOW_H
#include <stdint.h>

#include "core/thread.h"

/* The thread's sampled mutex wait credits `waited` ns (its own call). */
static inline void lb_holder_window_waited(lb_holder_window_t *w, uint64_t waited)
{
    __atomic_store_n(&w->waited_ns, w->waited_ns + waited, __ATOMIC_RELAXED);
}

/* The thread enters (1) or leaves (0) a sampled mutex wait. */
static inline void lb_holder_window_in_wait(lb_holder_window_t *w, uint32_t in_wait)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&w->in_wait, in_wait, __ATOMIC_RELAXED);
}

/* Signal handler: a timer sample of ns CPU ns at now; returns what it may
 * owe to a hold (0 inside a sampled mutex wait). */
static inline uint64_t lb_holder_window_take(lb_holder_window_t *w, uint64_t ns, uint64_t now)
{
    uint64_t cpu = w->cpu_ns + ns;
    if (__atomic_load_n(&w->in_wait, __ATOMIC_RELAXED)) {
        w->cpu_ns = cpu;
        return 0;
    }
    uint64_t waited = __atomic_load_n(&w->waited_ns, __ATOMIC_RELAXED);
    uint64_t in_waits = waited - w->waited_at_from;
    uint64_t outside = w->from_ns == 0 || now <= w->from_ns ? UINT64_MAX
                       : now - w->from_ns > in_waits        ? now - w->from_ns - in_waits
                                                            : 0;
    w->cpu_ns = 0;
    w->from_ns = now;
    w->waited_at_from = waited;
    return cpu < outside ? cpu : outside;
}

/* A fork child: its thread is in no wait, and its parent's samples are
 * not its own. */
static inline void lb_holder_window_fork_child(lb_holder_window_t *w)
{
    w->cpu_ns = 0;
    w->from_ns = 0;
    w->in_wait = 0;
}
#endif
