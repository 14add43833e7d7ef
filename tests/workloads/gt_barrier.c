/*
 * gt_barrier: ground truth for barrier blame (docs/DESIGN.md rule 3: the
 * idleness of an episode is blamed on the barrier-wait call of the last
 * thread to arrive, which need not be the one that gets
 * PTHREAD_BARRIER_SERIAL_THREAD).
 *
 * THREADS threads (default 3) meet at one barrier, initialised in main (the
 * library needs to see the init to know the count), EPISODES times. Before
 * each arrival every thread does some work:
 *   thread 0, the straggler: computes (spins) 2 ms, then arrives at
 *             straggler_arrives();
 *   the others: sleep 0.2-0.4 ms, then arrive at prompt_arrives().
 * Every 5th episode the roles swap: the straggler computes only 0.1 ms and
 * the last prompt thread sleeps 1.5 ms more, so it arrives last and
 * prompt_arrives() takes that episode's blame.
 *
 * Ground truth: each thread logs per episode its arrival time (just before
 * pthread_barrier_wait) and return time. Per episode, with L the last
 * arrival: every other thread waits from its arrival a_i to L (blame for
 * the last arriver's site: the integral of the number of waiters from each
 * arrival until L) and from L to its return (hand-off latency: wake-up).
 * The last arriver does not wait.
 *
 * Usage: gt_barrier [THREADS [EPISODES]]   (defaults 3 and 300: about 0.8 s)
 */
#include "gt.h"

enum {
    SITE_STRAGGLER,
    SITE_PROMPT,
    N_SITES
};
static const char *const site_names[N_SITES] = { "straggler_arrives", "prompt_arrives" };

#define STRAGGLE_NS          2000000
#define SHORT_STRAGGLE_NS    100000
#define PROMPT_NS            200000
#define LATE_PROMPT_EXTRA_NS 1500000

static pthread_barrier_t bar;
static int nthreads;
static long episodes;
static int64_t *arrive, *leave; /* [episode * nthreads + thread] */
static atomic_long serial_count;

__attribute__((noipa)) void straggler_arrives(long e, int i);
__attribute__((noipa)) void prompt_arrives(long e, int i);

static void note_return(int rc)
{
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
        atomic_fetch_add(&serial_count, 1);
    else if (rc != 0)
        gt_die("pthread_barrier_wait", rc);
}

void straggler_arrives(long e, int i)
{
    arrive[e * nthreads + i] = gt_now();
    int rc = pthread_barrier_wait(&bar);
    leave[e * nthreads + i] = gt_now();
    note_return(rc);
}

void prompt_arrives(long e, int i)
{
    arrive[e * nthreads + i] = gt_now();
    int rc = pthread_barrier_wait(&bar);
    leave[e * nthreads + i] = gt_now();
    note_return(rc);
}

static int swapped(long e)
{
    return e % 5 == 4;
}

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    gt_gate_arrive();
    for (long e = 0; e < episodes; e++) {
        if (i == 0) {
            gt_spin_until(gt_now() + (swapped(e) ? SHORT_STRAGGLE_NS : STRAGGLE_NS));
            straggler_arrives(e, i);
        } else {
            int64_t work = PROMPT_NS + (int64_t)(i - 1) * 100000;
            if (swapped(e) && i == nthreads - 1)
                work += LATE_PROMPT_EXTRA_NS;
            gt_sleep_until(gt_now() + work);
            prompt_arrives(e, i);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    nthreads = argc > 1 ? atoi(argv[1]) : 3;
    episodes = argc > 2 ? atol(argv[2]) : 300;
    if (nthreads < 2 || nthreads > 16 || episodes < 1) {
        fprintf(stderr, "usage: %s [THREADS 2..16 [EPISODES]]\n", argv[0]);
        return 2;
    }
    int rc = pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    if (rc)
        gt_die("pthread_barrier_init", rc);
    arrive = gt_alloc((size_t)(episodes * nthreads), sizeof *arrive);
    leave = gt_alloc((size_t)(episodes * nthreads), sizeof *leave);
    pthread_t *tids = gt_alloc((size_t)nthreads, sizeof *tids);
    for (int i = 0; i < nthreads; i++) {
        rc = pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i);
        if (rc)
            gt_die("pthread_create", rc);
    }
    int64_t t0 = gt_gate_open(nthreads, NULL, 0);
    for (int i = 0; i < nthreads; i++) {
        rc = pthread_join(tids[i], NULL);
        if (rc)
            gt_die("pthread_join", rc);
    }
    double duration = (double)(gt_now() - t0) / 1e9;
    if (atomic_load(&serial_count) != episodes) {
        fprintf(stderr, "gt_barrier: %ld serial returns for %ld episodes\n",
                atomic_load(&serial_count), episodes);
        return 1;
    }
    rc = pthread_barrier_destroy(&bar);
    if (rc)
        gt_die("pthread_barrier_destroy", rc);

    struct gt_result res = {
        .workload = "gt_barrier",
        .object = "barrier",
        .addresses = { &bar },
        .naddresses = 1,
        .threads = nthreads,
        .duration_s = duration,
        .nsites = N_SITES,
    };
    for (int s = 0; s < N_SITES; s++)
        res.site_names[s] = site_names[s];
    for (long e = 0; e < episodes; e++) {
        const int64_t *a = &arrive[e * nthreads], *r = &leave[e * nthreads];
        int last = 0;
        for (int i = 1; i < nthreads; i++)
            if (a[i] > a[last])
                last = i;
        int site = last == 0 ? SITE_STRAGGLER : SITE_PROMPT;
        res.counts[site]++;
        for (int i = 0; i < nthreads; i++) {
            if (i == last)
                continue;
            res.blame_ns[site] += (double)(a[last] - a[i]);
            res.handoff_ns += (double)(r[i] - a[last]);
            res.total_wait_ns += (double)(r[i] - a[i]);
        }
    }
    gt_write_json(&res);

    /* Diagnostic, not part of the truth: the wake-up (hand-off) time of
     * episode e's waiters that overlaps episode e+1, i.e. falls after the
     * first arrival of e+1. A model that does not keep episodes apart would
     * count it as e+1's idleness and blame e+1's last arriver for it. */
    double overlap[N_SITES] = { 0 };
    long overlapping = 0;
    for (long e = 0; e + 1 < episodes; e++) {
        const int64_t *a = &arrive[e * nthreads], *r = &leave[e * nthreads];
        const int64_t *a1 = &arrive[(e + 1) * nthreads];
        int last = 0, last1 = 0, first1 = 0;
        for (int i = 1; i < nthreads; i++) {
            if (a[i] > a[last])
                last = i;
            if (a1[i] > a1[last1])
                last1 = i;
            if (a1[i] < a1[first1])
                first1 = i;
        }
        int any = 0;
        for (int i = 0; i < nthreads; i++) {
            if (i != last && r[i] > a1[first1]) {
                overlap[last1 == 0 ? SITE_STRAGGLER : SITE_PROMPT] += (double)(r[i] - a1[first1]);
                any = 1;
            }
        }
        overlapping += any;
    }
    fprintf(stderr,
            "gt_barrier: wake-ups overlapping the next episode in %ld episodes: %.6f s "
            "(next last arriver %s), %.6f s (%s)\n",
            overlapping, overlap[SITE_STRAGGLER] / 1e9, site_names[SITE_STRAGGLER],
            overlap[SITE_PROMPT] / 1e9, site_names[SITE_PROMPT]);
    return 0;
}
