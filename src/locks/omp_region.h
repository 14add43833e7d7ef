/* OpenMP parallel regions and their team barriers (docs/DESIGN.md rule 3,
 * OpenMP).
 *
 * GOMP_parallel's wrapper (interpose/gomp.c) hands libgomp
 * lb_omp_share_run and a region record in place of the outlined function
 * and its data, so each thread of the team runs its share inside
 * lockblame: the end of every share is timed, and the thread whose share
 * ends last blames the others' idleness until then (blame/omp_idle.h).
 * Inside the region, the team's barriers are a barrier of team-size
 * episodes: GOMP_barrier (`omp barrier`, and the end of a static
 * `omp for` or a `single`) blamed on the barrier call of the last thread
 * to arrive; GOMP_loop_end and GOMP_sections_end (the end of any other
 * worksharing loop) on where that thread worked before it arrived, as
 * at the region's end.
 *
 * Invariants: the record lives in the frame of GOMP_parallel's wrapper on
 * the thread that starts the region, which outlives every share (libgomp
 * returns from GOMP_parallel after the team's final barrier). Each member
 * writes its own member slot once, before its atomic increment of
 * `ended` publishes it; the member whose increment completes the team is
 * the only reader of the slots. A team larger than the record's capacity
 * runs unmonitored. The teammates' waits after their shares are never
 * seen ending (they block inside libgomp): they are counted complete at
 * the last share's end, and the wake-up after it is not counted. */
#ifndef LB_OMP_REGION_H
#define LB_OMP_REGION_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/blame.h"
#include "sampler/cct.h"

#define LB_OMP_TEAM_MAX 256 /* members a region record has room for */

typedef struct lb_omp_member {
    uint64_t ended_ns;   /* when its share ended */
    lb_cct_node_t *node; /* its wait's context in its own CCT (NULL: none) */
} lb_omp_member_t;

typedef struct lb_omp_region {
    void (*fn)(void *); /* the outlined function and its data */
    void *data;
    uint32_t ended; /* members whose share has ended (atomic) */
    lb_omp_member_t member[LB_OMP_TEAM_MAX];
} lb_omp_region_t;

/* Whether the calling thread's region can be monitored (lockblame runs on
 * it); if not, call the real GOMP_parallel with fn and data. */
bool lb_omp_region_wanted(void);
void lb_omp_region_init(lb_omp_region_t *region, void (*fn)(void *), void *data);
/* The trampoline libgomp runs on each thread of the team; arg: the
 * region record. */
void lb_omp_share_run(void *arg);

typedef struct lb_omp_barrier {
    lb_thread_t *self; /* NULL: not monitored */
    bool waits;        /* a wait was begun in `wait` */
    lb_wait_t wait;
} lb_omp_barrier_t;

/* Before and after a team barrier call (site: its return address).
 * ends_loop: the barrier that ends a worksharing loop (GOMP_loop_end,
 * GOMP_sections_end), whose idleness goes to where the last thread
 * worked (blame/omp_idle.h); otherwise (GOMP_barrier) to the last
 * arrival's call. */
void lb_omp_barrier_begin(uintptr_t site, lb_omp_barrier_t *b, bool ends_loop);
void lb_omp_barrier_end(lb_omp_barrier_t *b);
#endif
