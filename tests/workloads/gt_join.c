/*
 * gt_join: ground truth for join blame (docs/DESIGN.md rule 3: the joiner's
 * waiting is blamed on the joined thread's exit, in the calling context of
 * its start routine).
 *
 * main creates two threads: long_worker computes (spins) for LONG_MS
 * (default 300 ms), short_worker for a tenth of that. main joins
 * short_worker first, then long_worker, so both joins wait: about 30 ms and
 * about 270 ms.
 *
 * Ground truth: main measures each pthread_join call [just before, just
 * after] with CLOCK_MONOTONIC; that wait is the blame of the joined
 * thread's start routine. The report names the start routine as the
 * blamed function, object "join". Each joined thread is its own object
 * (its pthread_t), so "object_addresses" lists both.
 *
 * Usage: gt_join [LONG_MS]
 */
#include "gt.h"

enum {
    SITE_LONG,
    SITE_SHORT,
    N_SITES
};
static const char *const site_names[N_SITES] = { "long_worker", "short_worker" };

static int64_t long_ns;

static void *long_worker(void *arg)
{
    gt_spin_until(gt_now() + long_ns);
    return arg;
}

static void *short_worker(void *arg)
{
    gt_spin_until(gt_now() + long_ns / 10);
    return arg;
}

__attribute__((noipa)) int64_t join_site(pthread_t t, void *expect);

/* One join, timed; returns the wait in ns. */
int64_t join_site(pthread_t t, void *expect)
{
    void *ret = NULL;
    int64_t t0 = gt_now();
    int rc = pthread_join(t, &ret);
    int64_t t1 = gt_now();
    if (rc)
        gt_die("pthread_join", rc);
    if (ret != expect) {
        fprintf(stderr, "gt_join: wrong return value from a joined thread\n");
        exit(1);
    }
    return t1 - t0;
}

int main(int argc, char **argv)
{
    int ms = argc > 1 ? atoi(argv[1]) : 300;
    if (ms < 10) {
        fprintf(stderr, "usage: %s [LONG_MS >= 10]\n", argv[0]);
        return 2;
    }
    long_ns = (int64_t)ms * 1000000;
    static int tag[N_SITES];
    pthread_t tids[N_SITES];
    int64_t t0 = gt_now();
    int rc = pthread_create(&tids[SITE_LONG], NULL, long_worker, &tag[SITE_LONG]);
    if (rc)
        gt_die("pthread_create", rc);
    rc = pthread_create(&tids[SITE_SHORT], NULL, short_worker, &tag[SITE_SHORT]);
    if (rc)
        gt_die("pthread_create", rc);

    struct gt_result res = {
        .workload = "gt_join",
        .object = "join",
        .addresses = { (void *)tids[SITE_LONG], (void *)tids[SITE_SHORT] },
        .naddresses = 2,
        .threads = 3,
        .nsites = N_SITES,
    };
    res.blame_ns[SITE_SHORT] = (double)join_site(tids[SITE_SHORT], &tag[SITE_SHORT]);
    res.blame_ns[SITE_LONG] = (double)join_site(tids[SITE_LONG], &tag[SITE_LONG]);
    res.duration_s = (double)(gt_now() - t0) / 1e9;
    for (int s = 0; s < N_SITES; s++) {
        res.site_names[s] = site_names[s];
        res.counts[s] = 1;
        res.total_wait_ns += res.blame_ns[s];
    }
    gt_write_json(&res);
    return 0;
}
