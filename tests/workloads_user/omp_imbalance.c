/* omp_imbalance: an imbalanced OpenMP loop (gcc -fopenmp -O2 -g).
 *
 * Usage: omp_imbalance region|loop [late]
 *   region  ROUNDS `omp parallel for` regions: the threads wait at the
 *           region's end (the implicit barrier of GOMP_parallel)
 *   loop    one region with ROUNDS `omp for schedule(dynamic)` loops: the
 *           threads wait at each loop's end (GOMP_loop_end)
 *   late    in the second round the fast iterations take twice the slow
 *           one's steps: their threads end that round last, as a busy
 *           machine's preemption can make them
 *
 * Each loop has NTHREADS iterations, one per thread; the first one is
 * slow_iteration, ten times the others' fast_iteration (first, so that
 * under dynamic scheduling no thread runs a fast iteration before it:
 * the straggler runs slow_iteration alone). The others wait
 * until the straggler's share ends, and lockblame must blame that
 * idleness on slow_iteration, where the straggler ran meanwhile.
 *
 * Truth: each thread notes when its share of a loop ended (after its
 * last iteration; at the loop's start if it got none), which iteration
 * it ran last, and, in the loop mode, when the loop's end returned. Per
 * loop, the idleness is the sum over threads of (last end - own end),
 * blamed on what the thread that ended last ran last (the rule blames the
 * calling context of the last thread still working): slow_iteration,
 * unless a fast one's thread was kept off the CPU past the slow one's end
 * (a busy machine: more threads than CPUs); the waiters' time beyond it
 * is hand-off latency. The
 * loop mode's region end adds its own small wait (total only). Written as
 * gt.h's JSON; the team's barrier has no address the program knows, so
 * conservation is checked on every barrier row. */
#include <omp.h>

#include "gt.h"

#define NTHREADS 4
#define ROUNDS   4

static int64_t share_end[ROUNDS][NTHREADS], returned[ROUNDS][NTHREADS], region_end[NTHREADS];
static int last_ran[ROUNDS][NTHREADS]; /* 0: slow_iteration last (or none), 1: a fast one */

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

/* Per loop r: the idleness at its end, onto res. */
static void loop_truth(struct gt_result *res, int r)
{
    int last = 0;
    for (int t = 1; t < NTHREADS; t++)
        if (share_end[r][t] > share_end[r][last])
            last = t;
    int site = last_ran[r][last];
    for (int t = 0; t < NTHREADS; t++) {
        if (t == last)
            continue; /* its own call ending the loop waits for nobody */
        double idle = (double)(share_end[r][last] - share_end[r][t]);
        res->blame_ns[site] += idle;
        res->total_wait_ns += returned[r][t] ? (double)(returned[r][t] - share_end[r][t]) : idle;
    }
    res->counts[site]++;
}

int main(int argc, char **argv)
{
    if ((argc != 2 && (argc != 3 || strcmp(argv[2], "late") != 0)) ||
        (strcmp(argv[1], "region") != 0 && strcmp(argv[1], "loop") != 0)) {
        fprintf(stderr, "usage: %s region|loop [late]\n", argv[0]);
        return 2;
    }
    bool by_region = strcmp(argv[1], "region") == 0;
    long slow = 40 * steps_per_ms(), fast_steps[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        fast_steps[r] = argc == 3 && r == 1 ? 2 * slow : slow / 10;
    double sink = 0;
    int64_t t0 = gt_now();
    if (by_region) {
        for (int r = 0; r < ROUNDS; r++) {
            long fast = fast_steps[r];
#pragma omp parallel for schedule(static, 1) num_threads(NTHREADS) reduction(+ : sink)
            for (int i = 0; i < NTHREADS; i++) {
                sink += i == 0 ? slow_iteration(slow) : fast_iteration(fast);
                share_end[r][omp_get_thread_num()] = gt_now();
                last_ran[r][omp_get_thread_num()] = i != 0;
            }
        }
    } else {
#pragma omp parallel num_threads(NTHREADS) reduction(+ : sink)
        {
            int me = omp_get_thread_num();
            for (int r = 0; r < ROUNDS; r++) {
                share_end[r][me] = gt_now();
#pragma omp for schedule(dynamic, 1)
                for (int i = 0; i < NTHREADS; i++) {
                    sink += i == 0 ? slow_iteration(slow) : fast_iteration(fast_steps[r]);
                    share_end[r][me] = gt_now();
                    last_ran[r][me] = i != 0;
                }
                returned[r][me] = gt_now();
            }
            region_end[me] = gt_now();
        }
    }
    struct gt_result res = { .workload = "omp_imbalance",
                             .object = "barrier",
                             .threads = NTHREADS,
                             .nsites = 2,
                             .site_names = { "slow_iteration", "fast_iteration" },
                             .all_objects_of_kind = true };
    res.duration_s = (double)(gt_now() - t0) / 1e9;
    for (int r = 0; r < ROUNDS; r++)
        loop_truth(&res, r);
    res.handoff_ns = res.total_wait_ns - res.blame_ns[0] - res.blame_ns[1];
    if (!by_region) {
        int64_t last = 0;
        for (int t = 0; t < NTHREADS; t++)
            if (region_end[t] > last)
                last = region_end[t];
        for (int t = 0; t < NTHREADS; t++)
            res.total_wait_ns += (double)(last - region_end[t]);
    }
    gt_write_json(&res);
    return sink == 0; /* keeps the work; never 0 */
}
