/* See omp_idle.h. */
#include "blame/omp_idle.h"

#include <errno.h>

#include "blame/context.h"
#include "blame/object_blame.h"
#include "blame/object_stats.h"

/* Put blame_ns on node (self's CCT) for the object with record index
 * `object`. Caller holds busy. */
static void deposit(lb_thread_t *self, uint32_t object, lb_cct_node_t *node, double blame_ns)
{
    node->m.idle_ns[LB_OBJ_BARRIER] += blame_ns;
    node->m.blamed_count++;
    if (object)
        lb_object_blame_add(self->object_blame, object, lb_cct_id(self->cct, node), blame_ns);
}

/* Split blame_ns over the share's weighted contexts, in proportion; the
 * weight that found no slot, or all of it without weights, goes to
 * fallback. Caller holds busy; self has a CCT. */
static void split(lb_thread_t *self, uint32_t object, double blame_ns, const lb_omp_share_t *share,
                  lb_cct_node_t *fallback)
{
    double weights = share->unplaced;
    for (uint32_t i = 0; i < share->used; i++)
        weights += share->slot[i].weight;
    for (uint32_t i = 0; i < share->used && weights > 0; i++)
        deposit(self, object, share->slot[i].node, blame_ns * share->slot[i].weight / weights);
    if (weights <= 0 || share->unplaced > 0)
        deposit(self, object, fallback,
                weights > 0 ? blame_ns * share->unplaced / weights : blame_ns);
}

void lb_omp_idle_blame(lb_thread_t *self, lb_mon_t *mon, uint64_t total_ns, uint32_t victims,
                       const lb_omp_share_t *share, uintptr_t fallback_pc)
{
    if (total_ns == 0)
        return;
    int saved_errno = errno;
    lb_enter(self);
    double total = (double)total_ns;
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats) {
        stats->wait_ns += total_ns;
        stats->accrued_held_ns += total;
        stats->blamed_ns += self->cct ? total : 0;
        stats->contended += victims;
        stats->acquisitions += victims;
    }
    lb_meta_unlock(&mon->meta);
    if (self->cct)
        split(self, stats ? mon->stats : 0, total, share,
              lb_cct_insert(self->cct, &fallback_pc, 1));
    lb_leave(self);
    errno = saved_errno;
}

void lb_omp_idle_episode(lb_thread_t *self, const lb_hold_t *hold, const lb_omp_share_t *share)
{
    if (hold->blame_ns <= 0 || !self->cct)
        return;
    int saved_errno = errno;
    lb_enter(self);
    uint32_t id;
    split(self, hold->stats, hold->blame_ns, share, lb_context_here(self, &id));
    lb_leave(self);
    errno = saved_errno;
}

lb_cct_node_t *lb_omp_idle_wait_node(lb_thread_t *self, uintptr_t pc)
{
    if (!self->cct)
        return NULL;
    int saved_errno = errno;
    lb_enter(self);
    lb_cct_node_t *node = lb_cct_insert(self->cct, &pc, 1);
    lb_leave(self);
    errno = saved_errno;
    return node;
}
