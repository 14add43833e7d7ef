/*
 * hot_workers.h: the contended mutex that the structural-wait workloads
 * (gt_pool_o2.c, idle_helper.c) run beside what they are about. WORKERS
 * threads, released together through gt.h's gate, hold `hot` for
 * HOT_HOLD_NS and think HOT_THINK_NS off it, for DURATION_MS; main joins
 * them and writes the mutex's ground truth (gt.h format, swept per site).
 *
 * The workload defines, before including this:
 *   hot_release(lg, t1)  noinline: logs the hold and unlocks `hot`, so the
 *                        release site is the workload's own file:line;
 *   hot_after_hold(n)    what a worker does after its n-th hold (nothing,
 *                        or more of the workload's shape).
 */
#ifndef HOT_WORKERS_H
#define HOT_WORKERS_H
#include "gt.h"

#define HOT_HOLD_NS  100000
#define HOT_THINK_NS 60000

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static int64_t hot_deadline;

static void hot_release(struct gt_log *lg, int64_t t1);
static void hot_after_hold(long holds);

static void *hot_worker(void *arg)
{
    struct gt_log *lg = arg;
    long holds = 0;
    gt_gate_arrive();
    while (gt_now() < hot_deadline) {
        int64_t t0 = gt_now();
        pthread_mutex_lock(&hot);
        int64_t t1 = gt_now();
        gt_log_add(lg, t0, t1, -1);
        gt_spin_until(t1 + HOT_HOLD_NS);
        hot_release(lg, t1);
        hot_after_hold(++holds);
        gt_sleep_until(gt_now() + HOT_THINK_NS);
    }
    return NULL;
}

struct hot_run {
    int nworkers, ms;
    struct gt_log *logs;
    pthread_t *tids;
    double duration_s;
};

/* [WORKERS [DURATION_MS]] (defaults 3 and 1000); a usage error exits 2. */
static void hot_args(struct hot_run *r, int argc, char **argv)
{
    r->nworkers = argc > 1 ? atoi(argv[1]) : 3;
    r->ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (r->nworkers < 2 || r->nworkers > 16 || r->ms < 1) {
        fprintf(stderr, "usage: %s [WORKERS 2..16 [DURATION_MS]]\n", argv[0]);
        exit(2);
    }
}

/* Start the workers, run them for DURATION_MS and join them. */
static void hot_run_workers(struct hot_run *r)
{
    r->logs = gt_alloc((size_t)r->nworkers, sizeof *r->logs);
    for (int i = 0; i < r->nworkers; i++)
        gt_log_init(&r->logs[i], 2 * (size_t)r->ms * 1000000 / (HOT_HOLD_NS + HOT_THINK_NS) + 64);
    r->tids = gt_alloc((size_t)r->nworkers, sizeof *r->tids);
    for (int i = 0; i < r->nworkers; i++)
        if (pthread_create(&r->tids[i], NULL, hot_worker, &r->logs[i]))
            gt_die("pthread_create", EAGAIN);
    int64_t t0 = gt_gate_open(r->nworkers, &hot_deadline, (int64_t)r->ms * 1000000);
    for (int i = 0; i < r->nworkers; i++)
        pthread_join(r->tids[i], NULL);
    r->duration_s = (double)(gt_now() - t0) / 1e9;
}

/* Write the mutex's ground truth (gt_write_json), and open the file for
 * the workload's own further truth: $GROUND_TRUTH.structural, or stdout
 * (appended to, not truncated: it may be a test's log file). */
static FILE *hot_write_truth(struct hot_run *r, const char *workload)
{
    struct gt_result res = {
        .workload = workload,
        .object = "mutex",
        .addresses = { &hot },
        .naddresses = 1,
        .threads = r->nworkers,
        .duration_s = r->duration_s,
        .nsites = 1,
        .site_names = { "hot_release" },
    };
    gt_sweep_holders(&res, r->logs, r->nworkers);
    gt_write_json(&res);
    const char *gt = getenv("GROUND_TRUTH");
    char path[4096];
    snprintf(path, sizeof path, "%s.structural", gt && *gt ? gt : "/dev/stdout");
    FILE *f = fopen(gt && *gt ? path : "/dev/stdout", gt && *gt ? "w" : "a");
    if (!f)
        gt_die(path, errno);
    return f;
}
#endif
