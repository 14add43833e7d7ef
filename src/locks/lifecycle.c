#include "locks/lifecycle.h"

#include <sys/single_threaded.h>

#include "blame/blame_clock.h"
#include "blame/mutex_sampled.h"
#include "blame/signal_waits.h"
#include "blame/object_stats.h"
#include "locks/mutex_ops.h"
#include "locks/acq_counts.h"

/* A mutex's acquisitions are in the per-kind totals already, one by one
 * (mutex_ops.h): a count that goes into its record is taken back out. */
static void fold(lb_mon_t *mon)
{
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    uint64_t acquisitions = mon->acquisitions; /* the object is dying or quiesced */
    bool in_totals = mon->kind == LB_OBJ_MUTEX;
    mon->acquisitions = 0;
    if (stats) {
        __atomic_fetch_add(&stats->acquisitions, acquisitions, __ATOMIC_RELAXED);
        if (in_totals)
            lb_object_totals_take((lb_obj_kind)mon->kind, acquisitions);
    } else if (!in_totals) {
        lb_object_totals_add((lb_obj_kind)mon->kind, acquisitions);
    }
}

bool lb_mon_claim(lb_mon_t *mon, const void *addr)
{
    /* Destroy/init and the orphan sweep (mon_gc.c) may race to retire the
     * same lb_mon; whoever clears addr does it. With one thread in the
     * process nobody can race (the sweep runs on the thread that converts,
     * and no signal handler retires), so no atomic read-modify-write,
     * as glibc's own locks skip theirs then. */
    if (!addr)
        return false;
    if (__libc_single_threaded) {
        if (__atomic_load_n(&mon->addr, __ATOMIC_RELAXED) != addr)
            return false;
        __atomic_store_n(&mon->addr, NULL, __ATOMIC_RELAXED);
        return true;
    }
    return __atomic_compare_exchange_n(&mon->addr, &addr, NULL, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

/* The acquisitions that threads counted in their own tables, into the
 * lb_mon (acq_counts.h: only a hot spin lock or a semaphore has any). */
static void take_thread_counts(lb_mon_t *mon)
{
    if (lb_acq_counts_kept(mon))
        lb_acq_counts_take(mon);
}

void lb_mon_retire_claimed(lb_mon_t *mon)
{
    if (mon->kind == LB_OBJ_MUTEX)
        lb_mutex_sampled_forget(mon); /* its slot's counts first: fold reads the record */
    else if (lb_obj_kind_is_signalled(mon->kind))
        lb_signal_waits_forget(mon);
    take_thread_counts(mon);
    fold(mon);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    if (stats)
        stats->retired = 1;
    lb_mon_free(mon);
}

void lb_mon_retire(lb_mon_t *mon)
{
    if (lb_mon_claim(mon, __atomic_load_n(&mon->addr, __ATOMIC_ACQUIRE)))
        lb_mon_retire_claimed(mon);
}

void lb_mon_fold_live(lb_mon_t *mon, void *unused)
{
    if (mon->kind == LB_OBJ_MUTEX)
        lb_mutex_fold_count(mon); /* its count lives in the mutex */
    take_thread_counts(mon);
    fold(mon);
}

void lb_mon_accrue_live(lb_mon_t *mon, void *now)
{
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    if (stats) {
        lb_meta_lock(&mon->meta);
        lb_clock_advance(mon, stats, *(const uint64_t *)now);
        lb_meta_unlock(&mon->meta);
    }
}

void lb_mon_settle_live(lb_mon_t *mon, void *now)
{
    /* The clock first: for a mutex, folding its count reuses the word
     * that holds a pending hold's start (blame/mon.h). */
    lb_mon_accrue_live(mon, now);
    lb_mon_fold_live(mon, NULL);
}
