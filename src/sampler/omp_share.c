/* See omp_share.h. Tallent's undirected blame (thesis ch. 5), kept per
 * share: a sample taken while I teammates idle and W work (this thread
 * among them) stands for I / W of the idleness that accrues meanwhile. */
#include "sampler/omp_share.h"

#include <string.h>

void lb_omp_share_init(lb_omp_share_t *share, const uint32_t *ended, const uint32_t *waiting,
                       uint32_t team, uint32_t level)
{
    memset(share, 0, sizeof *share);
    share->ended = ended;
    share->waiting = waiting;
    share->team = team;
    share->level = level;
}

void lb_omp_share_forget(lb_omp_share_t *share)
{
    share->used = 0;
    share->unplaced = 0;
}

void lb_omp_share_sample(lb_omp_share_t *share, lb_cct_node_t *node, uint32_t periods)
{
    uint32_t idle = __atomic_load_n(share->ended, __ATOMIC_RELAXED);
    if (share->waiting)
        idle += __atomic_load_n(share->waiting, __ATOMIC_RELAXED);
    if (idle == 0 || idle >= share->team)
        return;
    double weight = (double)periods * idle / (double)(share->team - idle);
    for (uint32_t i = 0; i < share->used; i++) {
        if (share->slot[i].node == node) {
            share->slot[i].weight += weight;
            return;
        }
    }
    if (share->used == LB_OMP_SHARE_SLOTS) {
        share->unplaced += weight;
        return;
    }
    share->slot[share->used].node = node;
    share->slot[share->used].weight = weight;
    share->used++;
}
