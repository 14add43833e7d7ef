/* omp_imbalance: an imbalanced `omp parallel for` (gcc -fopenmp -O2 -g).
 *
 * Each of ROUNDS regions runs NTHREADS iterations, one per thread
 * (schedule(static, 1)); the last one is slow_iteration, ten times the
 * others' fast_iteration. The others then wait at the region's implicit
 * barrier until the straggler's share ends, and lockblame must blame that
 * idleness on slow_iteration, where the straggler ran meanwhile.
 *
 * Truth: each thread notes when its share ended (after its iteration);
 * per region, the idleness is the sum over threads of (last end - own
 * end), all of it blamed on slow_iteration. Written as gt.h's JSON
 * (object barrier; the team's barrier has no address the program knows,
 * so conservation is checked on every barrier row). */
#include <omp.h>

#include "gt.h"

#define NTHREADS 4
#define ROUNDS   4

static int64_t share_end[ROUNDS][NTHREADS];

/* A dependent chain of floating-point steps: CPU time in this frame. */
static __attribute__((noinline)) double fast_iteration(long steps)
{
    double x = 1.0;
    for (long i = 0; i < steps; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static __attribute__((noinline)) double slow_iteration(long steps)
{
    double x = 2.0;
    for (long i = 0; i < steps; i++)
        x = x * 0.9999999 + 1e-9;
    return x;
}

/* This thread's CPU time, ns. */
static int64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Steps of fast_iteration per millisecond of CPU time (a loaded machine
 * stretches the wall time, not this). */
static long steps_per_ms(void)
{
    const long probe = 1L << 21;
    int64_t t0 = cpu_now();
    volatile double sink = fast_iteration(probe);
    (void)sink;
    int64_t ns = cpu_now() - t0;
    return ns > 0 ? (long)((double)probe * 1e6 / (double)ns) + 1 : probe;
}

int main(void)
{
    long per_ms = steps_per_ms();
    double sink = 0;
    int64_t t0 = gt_now();
    for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel for schedule(static, 1) num_threads(NTHREADS) reduction(+ : sink)
        for (int i = 0; i < NTHREADS; i++) {
            if (i == NTHREADS - 1)
                sink += slow_iteration(40 * per_ms);
            else
                sink += fast_iteration(4 * per_ms);
            share_end[r][omp_get_thread_num()] = gt_now();
        }
    }
    struct gt_result res = { .workload = "omp_imbalance",
                             .object = "barrier",
                             .threads = NTHREADS,
                             .all_objects_of_kind = true };
    res.duration_s = (double)(gt_now() - t0) / 1e9;
    res.nsites = 1;
    res.site_names[0] = "slow_iteration";
    for (int r = 0; r < ROUNDS; r++) {
        int64_t last = 0;
        for (int t = 0; t < NTHREADS; t++)
            if (share_end[r][t] > last)
                last = share_end[r][t];
        for (int t = 0; t < NTHREADS; t++)
            res.blame_ns[0] += (double)(last - share_end[r][t]);
        res.counts[0]++;
    }
    res.total_wait_ns = res.blame_ns[0];
    gt_write_json(&res);
    return sink == 0; /* keeps the work; never 0 */
}
