/* The CPU samples of one thread's share of an OpenMP parallel region,
 * weighted by how many of its teammates were idle when each was taken:
 * where the team's last working thread spent the time the others waited
 * at the region's end or at a loop's end (blame/omp_idle.h turns them
 * into blame).
 *
 * Invariants: a share lives in its thread's frame of the region's
 * trampoline (locks/omp_region.c) and is reachable from lb_thread.omp_share
 * only while that frame runs the thread's share; the thread's own sampling
 * handler is its only writer meanwhile (the thread itself reads it after
 * taking it out of lb_thread.omp_share). So no atomics and no lock: the
 * handler adds, the owner reads afterwards. Teammates never touch it. */
#ifndef LB_SAMPLER_OMP_SHARE_H
#define LB_SAMPLER_OMP_SHARE_H
#include <stdint.h>

#include "sampler/cct.h"

#define LB_OMP_SHARE_SLOTS 32 /* distinct sample contexts kept per share */

typedef struct lb_omp_share {
    const uint32_t *ended;   /* teammates whose share has ended (read atomically) */
    const uint32_t *waiting; /* teammates waiting at the team's barrier, or NULL */
    uint32_t team;           /* threads in the team */
    uint32_t level;          /* its nesting level (omp_get_level) */
    uint32_t used;           /* slots in use */
    double unplaced;         /* weight of samples that found no free slot */
    struct {
        lb_cct_node_t *node; /* the sample's context in the owner's CCT */
        double weight;       /* sample periods x idle / working teammates */
    } slot[LB_OMP_SHARE_SLOTS];
} lb_omp_share_t;

/* A start for a share of a team of `team` threads at nesting level
 * `level`; its idle teammates are *ended + *waiting (waiting may be NULL). */
void lb_omp_share_init(lb_omp_share_t *share, const uint32_t *ended, const uint32_t *waiting,
                       uint32_t team, uint32_t level);
/* Forget the samples so far (the owner, with busy raised: its handler
 * adds nothing meanwhile), at each team barrier: what the thread ran
 * before it does not explain the waits after it. */
void lb_omp_share_forget(lb_omp_share_t *share);
/* From the sampling handler: a work sample of `periods` periods at node.
 * Async-signal-safe; nothing is recorded while no teammate is idle. */
void lb_omp_share_sample(lb_omp_share_t *share, lb_cct_node_t *node, uint32_t periods);
#endif
