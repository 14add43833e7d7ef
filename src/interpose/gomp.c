/* The exported libgomp entry points (OpenMP, gcc -fopenmp): the program
 * calls them through its PLT, so these definitions come first. Each
 * forwards to libgomp's own (core/gomp_real.h, resolved on first call)
 * between the verbs of locks/omp_lock_ops.h (locks, critical sections)
 * or locks/omp_region.h (parallel regions, team barriers), passing the
 * program's call site (our return address). The real calls' arguments,
 * results and effects are untouched.
 *
 * The lock types are opaque here (void *): omp.h is gcc's, and only the
 * pointer crosses these functions. */
#include <stdint.h>

#include "core/gomp_real.h"
#include "locks/omp_lock_ops.h"
#include "locks/omp_region.h"
#include "util/common.h"

/* The entry points as libgomp declares them (libgomp_g.h, omp.h). */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count,
                            unsigned flags);
void GOMP_barrier(void);
void GOMP_loop_end(void);
void GOMP_sections_end(void);
void GOMP_critical_start(void);
void GOMP_critical_end(void);
void GOMP_critical_name_start(void **pptr);
void GOMP_critical_name_end(void **pptr);
void omp_set_lock(void *lock);
int omp_test_lock(void *lock);
void omp_unset_lock(void *lock);
void omp_set_nest_lock(void *lock);
int omp_test_nest_lock(void *lock);
void omp_unset_nest_lock(void *lock);

/* In section lb_omp_share with the share trampoline (locks/omp_region.c):
 * the master's share runs under this frame, which walks go through. */
LB_EXPORT __attribute__((section("lb_omp_share"))) void
GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    LB_GOMP(parallel, "GOMP_parallel");
    if (!lb_omp_region_wanted()) {
        lb_gomp.parallel(fn, data, num_threads, flags);
        return;
    }
    lb_omp_region_t region;
    lb_omp_region_init(&region, fn, data);
    lb_gomp.parallel(lb_omp_share_run, &region, num_threads, flags);
}

/* `omp parallel sections`: the same, with the sections' count. */
LB_EXPORT __attribute__((section("lb_omp_share"))) void
GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count,
                       unsigned flags)
{
    LB_GOMP(parallel_sections, "GOMP_parallel_sections");
    if (!lb_omp_region_wanted()) {
        lb_gomp.parallel_sections(fn, data, num_threads, count, flags);
        return;
    }
    lb_omp_region_t region;
    lb_omp_region_init(&region, fn, data);
    lb_gomp.parallel_sections(lb_omp_share_run, &region, num_threads, count, flags);
}

LB_EXPORT void GOMP_barrier(void)
{
    lb_omp_barrier_t b;
    lb_omp_barrier_begin(LB_CALLER(), &b, false);
    LB_GOMP(barrier, "GOMP_barrier")();
    lb_omp_barrier_end(&b);
}

LB_EXPORT void GOMP_loop_end(void)
{
    lb_omp_barrier_t b;
    lb_omp_barrier_begin(LB_CALLER(), &b, true);
    LB_GOMP(loop_end, "GOMP_loop_end")();
    lb_omp_barrier_end(&b);
}

LB_EXPORT void GOMP_sections_end(void)
{
    lb_omp_barrier_t b;
    lb_omp_barrier_begin(LB_CALLER(), &b, true);
    LB_GOMP(sections_end, "GOMP_sections_end")();
    lb_omp_barrier_end(&b);
}

LB_EXPORT void GOMP_critical_start(void)
{
    lb_omp_hold_t h;
    lb_omp_lock_begin(&lb_omp_unnamed_critical, &h);
    LB_GOMP(critical_start, "GOMP_critical_start")();
    lb_omp_lock_end(&h);
}

LB_EXPORT void GOMP_critical_end(void)
{
    lb_omp_hold_t h;
    lb_omp_unlock_begin(&lb_omp_unnamed_critical, LB_CALLER(), &h);
    LB_GOMP(critical_end, "GOMP_critical_end")();
    lb_omp_unlock_end(&h);
}

LB_EXPORT void GOMP_critical_name_start(void **pptr)
{
    lb_omp_hold_t h;
    lb_omp_lock_begin(pptr, &h);
    LB_GOMP(critical_name_start, "GOMP_critical_name_start")(pptr);
    lb_omp_lock_end(&h);
}

LB_EXPORT void GOMP_critical_name_end(void **pptr)
{
    lb_omp_hold_t h;
    lb_omp_unlock_begin(pptr, LB_CALLER(), &h);
    LB_GOMP(critical_name_end, "GOMP_critical_name_end")(pptr);
    lb_omp_unlock_end(&h);
}

LB_EXPORT void omp_set_lock(void *lock)
{
    lb_omp_hold_t h;
    lb_omp_lock_begin(lock, &h);
    LB_GOMP(set_lock, "omp_set_lock")(lock);
    lb_omp_lock_end(&h);
}

LB_EXPORT int omp_test_lock(void *lock)
{
    int got = LB_GOMP(test_lock, "omp_test_lock")(lock);
    if (got)
        lb_omp_lock_taken(lock);
    return got;
}

LB_EXPORT void omp_unset_lock(void *lock)
{
    lb_omp_hold_t h;
    lb_omp_unlock_begin(lock, LB_CALLER(), &h);
    LB_GOMP(unset_lock, "omp_unset_lock")(lock);
    lb_omp_unlock_end(&h);
}

/* A nest lock's acquisition tries first: a non-zero result is the new
 * depth (the caller owned it already, or it was free), zero means
 * another thread owns it, and only then does the blocking call wait. */
LB_EXPORT void omp_set_nest_lock(void *lock)
{
    int depth = LB_GOMP(test_nest_lock, "omp_test_nest_lock")(lock);
    if (depth == 0) {
        lb_omp_hold_t h;
        lb_omp_lock_begin(lock, &h);
        LB_GOMP(set_nest_lock, "omp_set_nest_lock")(lock);
        lb_omp_lock_end(&h);
        depth = 1;
    } else if (depth == 1) {
        lb_omp_lock_taken(lock);
    }
    lb_omp_nest_depth_set(lock, (uint32_t)depth);
}

LB_EXPORT int omp_test_nest_lock(void *lock)
{
    int depth = LB_GOMP(test_nest_lock, "omp_test_nest_lock")(lock);
    if (depth == 1)
        lb_omp_lock_taken(lock);
    if (depth > 0)
        lb_omp_nest_depth_set(lock, (uint32_t)depth);
    return depth;
}

LB_EXPORT void omp_unset_nest_lock(void *lock)
{
    if (!lb_omp_nest_unset_frees(lock)) {
        LB_GOMP(unset_nest_lock, "omp_unset_nest_lock")(lock);
        return;
    }
    lb_omp_hold_t h;
    lb_omp_unlock_begin(lock, LB_CALLER(), &h);
    LB_GOMP(unset_nest_lock, "omp_unset_nest_lock")(lock);
    lb_omp_unlock_end(&h);
}
