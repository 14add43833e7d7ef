/* Blame for the idleness at the end of an OpenMP parallel region or
 * worksharing loop (docs/DESIGN.md rule 3, OpenMP): each teammate's time
 * from the end of its share to the end of the last share is blamed on the
 * calling contexts where the last working thread ran while the others
 * waited, as its CPU samples weighted by the idle teammates saw them
 * (sampler/omp_share.h), split in proportion; with no such sample
 * (sampling off, or a straggler that blocked), on its outlined function
 * (a region) or its call ending the loop. The amount is measured exactly,
 * by the shares' end times or the barrier's blame clock; only its split
 * among contexts is sampled.
 *
 * Invariants: called by the thread whose share ended last, once per
 * region or loop, with busy low; it writes its own CCT and object-blame
 * table, and the region's record under mon->meta. Leaves errno as it
 * found it. */
#ifndef LB_BLAME_OMP_IDLE_H
#define LB_BLAME_OMP_IDLE_H
#include <stdint.h>

#include "blame/blame.h"
#include "blame/mon.h"
#include "core/thread.h"
#include "sampler/omp_share.h"

/* total_ns of idleness in `victims` teammates' waits, recorded on mon's
 * record (wait, accrual, blame) and blamed as above; fallback_pc: the
 * outlined function. Without a CCT the blame stays unattributed. */
void lb_omp_idle_blame(lb_thread_t *self, lb_mon_t *mon, uint64_t total_ns, uint32_t victims,
                       const lb_omp_share_t *share, uintptr_t fallback_pc);
/* The same for a team barrier episode at the end of a worksharing loop,
 * by its last arrival: the episode's idleness, collected in hold
 * (lb_barrier_arrive), split over the share's weighted samples since the
 * team's previous barrier, the rest on this barrier call's context. */
void lb_omp_idle_episode(lb_thread_t *self, const lb_hold_t *hold, const lb_omp_share_t *share);
/* The calling thread's context for a wait at the end of its share: a
 * root-level node for its outlined function (pc), in its own CCT; NULL
 * without a CCT. */
lb_cct_node_t *lb_omp_idle_wait_node(lb_thread_t *self, uintptr_t pc);
#endif
