/* omp_barrier: an explicit `omp barrier` with one late thread (gcc
 * -fopenmp -O2 -g), blamed by the barrier rule (docs/DESIGN.md rule 3): an
 * episode's idleness goes to the barrier call of the last thread to
 * arrive.
 *
 * Four threads meet at ROUNDS barriers. Thread LATE reaches each through
 * late_arrival, after 25 ms; the others through prompt_arrival, after
 * 3 ms. The work before a barrier sleeps, so the figures stay what they
 * are on a loaded machine.
 *
 * Truth: each thread logs when it called the barrier and when the call
 * returned. Per episode, the last caller's site is blamed the sum of the
 * others' (last call - own call); what the waiters waited beyond that is
 * hand-off latency. The region's end adds the wait of the threads whose
 * share ended first (total wait only: its blame goes to where the last
 * one ran, which is nothing here). */
#include <omp.h>

#include "gt.h"

#define NTHREADS 4
#define ROUNDS   8
#define LATE     2
#define MS       1000000

enum {
    SITE_LATE,
    SITE_PROMPT,
    NSITES
};

static int64_t called[ROUNDS][NTHREADS], returned[ROUNDS][NTHREADS], share_end[NTHREADS];

/* Work for work_ns, then the barrier; logs the call and its return. A
 * macro, so that the barrier call is the named function's own line (an
 * inlined helper would be a release site of its own, docs/DESIGN.md rule 5). */
#define ARRIVE(r, me, work_ns)                             \
    do {                                                   \
        gt_sleep_until(gt_now() + (work_ns));              \
        called[r][me] = gt_now();                          \
        _Pragma("omp barrier") returned[r][me] = gt_now(); \
    } while (0)

static __attribute__((noinline)) void late_arrival(int r, int me)
{
    ARRIVE(r, me, 25 * MS);
}

static __attribute__((noinline)) void prompt_arrival(int r, int me)
{
    ARRIVE(r, me, 3 * MS);
}

int main(void)
{
    int64_t t0 = gt_now();
#pragma omp parallel num_threads(NTHREADS)
    {
        int me = omp_get_thread_num();
        for (int r = 0; r < ROUNDS; r++) {
            if (me == LATE)
                late_arrival(r, me);
            else
                prompt_arrival(r, me);
        }
        share_end[me] = gt_now();
    }
    struct gt_result res = { .workload = "omp_barrier",
                             .object = "barrier",
                             .threads = NTHREADS,
                             .nsites = NSITES,
                             .site_names = { "late_arrival", "prompt_arrival" },
                             .all_objects_of_kind = true };
    res.duration_s = (double)(gt_now() - t0) / 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        int last = 0;
        for (int t = 1; t < NTHREADS; t++)
            if (called[r][t] > called[r][last])
                last = t;
        double idle = 0;
        for (int t = 0; t < NTHREADS; t++) {
            if (t == last)
                continue;
            idle += (double)(called[r][last] - called[r][t]);
            res.total_wait_ns += (double)(returned[r][t] - called[r][t]);
        }
        int site = last == LATE ? SITE_LATE : SITE_PROMPT;
        res.blame_ns[site] += idle;
        res.counts[site]++;
        res.handoff_ns -= idle;
    }
    res.handoff_ns += res.total_wait_ns;
    int64_t end = 0;
    for (int t = 0; t < NTHREADS; t++)
        if (share_end[t] > end)
            end = share_end[t];
    for (int t = 0; t < NTHREADS; t++)
        res.total_wait_ns += (double)(end - share_end[t]);
    gt_write_json(&res);
    return 0;
}
