#include "locks/lifecycle.h"

#include "blame/blame_clock.h"
#include "blame/object_stats.h"
#include "locks/mutex_ops.h"

static void fold(lb_mon_t *mon)
{
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    uint64_t acquisitions = mon->acquisitions; /* the object is dying or quiesced */
    mon->acquisitions = 0;
    if (stats)
        stats->acquisitions += acquisitions;
    else
        lb_object_totals_add((lb_obj_kind)mon->kind, acquisitions);
}

void lb_mon_retire(lb_mon_t *mon)
{
    /* Claim it: destroy/init and the orphan sweep (mon_gc.c) may race to
     * retire the same lb_mon; whoever clears addr does it. */
    const void *addr = __atomic_load_n(&mon->addr, __ATOMIC_ACQUIRE);
    if (!addr || !__atomic_compare_exchange_n(&mon->addr, &addr, NULL, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_RELAXED))
        return;
    fold(mon);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    if (stats)
        stats->retired = 1;
    lb_mon_free(mon);
}

void lb_mon_fold_live(lb_mon_t *mon, void *unused)
{
    if (mon->kind == LB_OBJ_MUTEX)
        lb_mutex_fold_count(mon); /* its count lives in the mutex */
    fold(mon);
}

void lb_mon_settle_live(lb_mon_t *mon, void *now)
{
    lb_mon_fold_live(mon, NULL);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    if (!stats)
        return;
    lb_meta_lock(&mon->meta);
    lb_clock_advance(mon, stats, *(const uint64_t *)now);
    lb_meta_unlock(&mon->meta);
}
