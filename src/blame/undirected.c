#include "blame/undirected.h"

#include "interpose/thread.h"

static int32_t live_threads;    /* attached and not yet detached */
static int32_t waiting_threads; /* inside a wrapped wait */

void lb_undirected_thread_live(int delta)
{
    __atomic_fetch_add(&live_threads, delta, __ATOMIC_RELAXED);
}

void lb_waiting_begin(lb_thread_t *self, lb_obj_kind kind)
{
    if (!self->waiting)
        __atomic_fetch_add(&waiting_threads, 1, __ATOMIC_RELAXED);
    self->waiting = (uint32_t)kind + 1;
}

void lb_waiting_end(lb_thread_t *self)
{
    if (self->waiting)
        __atomic_fetch_sub(&waiting_threads, 1, __ATOMIC_RELAXED);
    self->waiting = 0;
}

void lb_undirected_after_fork(void)
{
    __atomic_store_n(&live_threads, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&waiting_threads, 0, __ATOMIC_RELAXED);
}

double lb_undirected_ratio(void)
{
    int32_t waiting = __atomic_load_n(&waiting_threads, __ATOMIC_RELAXED);
    int32_t working = __atomic_load_n(&live_threads, __ATOMIC_RELAXED) - waiting;
    if (waiting <= 0)
        return 0;
    return (double)waiting / (double)(working > 0 ? working : 1);
}
