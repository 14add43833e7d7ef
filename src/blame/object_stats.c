#include "blame/object_stats.h"

#include "blame/mutex_sampled.h"
#include "blame/signal_waits.h"

#include <stdbool.h>

#include "util/common.h"

#include "util/pages.h"

#define LB_STATS_SLOTS (1u << 22)

lb_object_stats_t *lb_object_stats_top LB_FORK_WRITTEN; /* the records' in use */
static uint32_t next_index LB_FORK_WRITTEN = 1;
static lb_object_stats_t *placed_top LB_FORK_WRITTEN; /* below the lock pool, not yet opened */
static void *own_reservation LB_FORK_WRITTEN;         /* where none was placed, or it failed */

size_t lb_object_stats_bytes(void)
{
    return (size_t)LB_STATS_SLOTS * sizeof(lb_object_stats_t);
}

void lb_object_stats_place(void *top)
{
    lb_object_stats_t *none = NULL; /* records already in a mapping of their own stay there */
    if (!__atomic_load_n(&lb_object_stats_top, __ATOMIC_ACQUIRE))
        __atomic_compare_exchange_n(&placed_top, &none, top, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
}

/* The records' top at the first contention anywhere: the placed one,
 * made usable now (its address space charged only now, as a mapping of
 * their own would be: racing first users both open it, which is the same
 * call twice), else a reservation of their own. */
static lb_object_stats_t *records_top(void)
{
    lb_object_stats_t *top = __atomic_load_n(&lb_object_stats_top, __ATOMIC_ACQUIRE);
    if (lb_likely(top != NULL))
        return top;
    size_t bytes = lb_object_stats_bytes();
    top = __atomic_load_n(&placed_top, __ATOMIC_ACQUIRE);
    if (!top || !lb_pages_open((char *)top - bytes, bytes)) {
        char *base = lb_pages_reserve_once(&own_reservation, bytes);
        if (!base)
            return NULL;
        top = (lb_object_stats_t *)(base + bytes);
    }
    lb_object_stats_t *expected = NULL;
    __atomic_compare_exchange_n(&lb_object_stats_top, &expected, top, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return __atomic_load_n(&lb_object_stats_top, __ATOMIC_ACQUIRE);
}

uint32_t lb_object_stats_new(uintptr_t addr, lb_obj_kind kind)
{
    if (!records_top())
        return 0;
    /* an index past the last is never taken: the count stays the number
     * of records however often a full table is asked again */
    uint32_t index = __atomic_load_n(&next_index, __ATOMIC_ACQUIRE);
    do {
        if (index >= LB_STATS_SLOTS)
            return 0;
    } while (!__atomic_compare_exchange_n(&next_index, &index, index + 1, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    lb_object_stats_t *s = lb_object_stats_slot(index);
    s->addr = addr;
    s->kind = (uint32_t)kind;
    return index;
}

lb_object_stats_t *lb_object_stats_at(uint32_t index)
{
    if (index == 0 || index >= lb_object_stats_count())
        return NULL;
    return lb_object_stats_slot(index);
}

uint32_t lb_object_stats_count(void)
{
    uint32_t n = __atomic_load_n(&next_index, __ATOMIC_ACQUIRE);
    return n > LB_STATS_SLOTS ? LB_STATS_SLOTS : n;
}

/* Acquisitions of retired objects that had no record, per kind: kept per
 * thread (no shared counter on the churn path) and summed at the write. */
static LB_TLS uint64_t *thread_totals;
static uint64_t exited_totals[LB_OBJ_KINDS];

void lb_object_totals_bind(uint64_t *per_thread)
{
    thread_totals = per_thread;
}

void lb_object_totals_add(lb_obj_kind kind, uint64_t acquisitions)
{
    if (thread_totals)
        thread_totals[kind] += acquisitions;
    else
        __atomic_fetch_add(&exited_totals[kind], acquisitions, __ATOMIC_RELAXED);
}

void lb_object_totals_take(lb_obj_kind kind, uint64_t acquisitions)
{
    lb_object_totals_add(kind, (uint64_t)0 - acquisitions); /* modulo 2^64 */
}

uint64_t lb_object_totals_unbound(lb_obj_kind kind)
{
    return __atomic_load_n(&exited_totals[kind], __ATOMIC_RELAXED);
}

uint64_t lb_object_stats_fold_sampled(lb_object_stats_t *s)
{
    if (s->kind == LB_OBJ_MUTEX)
        lb_mutex_sampled_drain(s);
    else if (lb_obj_kind_is_signalled(s->kind))
        lb_signal_waits_drain(s);
    uint64_t waits = __atomic_exchange_n(&s->sampled_contended, 0, __ATOMIC_ACQ_REL);
    uint64_t wait_ns = __atomic_exchange_n(&s->sampled_wait_ns, 0, __ATOMIC_ACQ_REL);
    uint64_t held_ns = __atomic_exchange_n(&s->sampled_held_ns, 0, __ATOMIC_ACQ_REL);
    uint64_t handoff_ns = __atomic_exchange_n(&s->sampled_handoff_ns, 0, __ATOMIC_ACQ_REL);
    /* A mutex's sampled waits are timed, and only the part its holders'
     * samples owe is measured: the rest is hand-off (mutex_sampled.h). */
    if (s->kind == LB_OBJ_MUTEX)
        handoff_ns = wait_ns > held_ns ? wait_ns - held_ns : 0;
    /* A sampled cond's or semaphore's waits are timed and counted already;
     * only their attribution was sampled (signal_sampled.h). */
    if (!lb_obj_kind_is_signalled(s->kind))
        s->contended += waits;
    s->wait_ns += wait_ns;
    s->accrued_held_ns += (double)held_ns;
    s->handoff_ns += (double)handoff_ns;
    /* owed blame no release took stays out of blamed_ns: unattributed */
    __atomic_store_n(&s->sampled_owed_ns, 0, __ATOMIC_RELEASE);
    return waits;
}
