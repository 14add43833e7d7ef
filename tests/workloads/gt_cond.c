/*
 * gt_cond: ground truth for condition-variable blame (docs/DESIGN.md rule 3:
 * idleness accrued since the previous signal or broadcast is blamed on the
 * next signal/broadcast call site).
 *
 * CONSUMERS threads take tasks from a queue guarded by a mutex and a cond;
 * they wait in pthread_cond_wait while it is empty, then "process" each
 * task off the CPU for 0.3 ms. One producer pushes tasks and signals from
 * two call sites, in the pattern quick, quick, late:
 *   quick_signal_site  pushes and signals at once (the producer spends
 *                      0.6 ms preparing the task before calling it)
 *   late_signal_site   computes for 4 ms, then pushes and signals
 * and at the end sets `done` and wakes everyone from
 * shutdown_broadcast_site. Signals are made with the mutex held.
 *
 * Ground truth: every consumer logs each cond-wait interval [just before
 * pthread_cond_wait, just after it returns]; the producer logs the time
 * just before each signal/broadcast with its site. gt_sweep_signal gives
 * each signal the integral of the number of waiting threads since the
 * previous signal (any site). See gt.h for the JSON.
 *
 * Usage: gt_cond [CONSUMERS [ROUNDS]]   (defaults 2 and 180: about 1 s)
 */
#include "gt.h"

enum {
    SITE_QUICK,
    SITE_LATE,
    SITE_SHUTDOWN,
    N_SITES
};
static const char *const site_names[N_SITES] = { "quick_signal_site", "late_signal_site",
                                                 "shutdown_broadcast_site" };

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static long queued;   /* tasks in the queue, under qlock */
static long consumed; /* tasks taken, under qlock */
static int done;      /* no more tasks, under qlock */

static struct gt_log *logs; /* [0] the producer, [1..] consumers */

#define PREP_NS    600000
#define LATE_NS    4000000
#define PROCESS_NS 300000

__attribute__((noipa)) void quick_signal_site(struct gt_log *lg);
__attribute__((noipa)) void late_signal_site(struct gt_log *lg);
__attribute__((noipa)) void shutdown_broadcast_site(struct gt_log *lg);
__attribute__((noipa)) void consumer_wait_site(struct gt_log *lg);

static void lock_queue(void)
{
    int rc = pthread_mutex_lock(&qlock);
    if (rc)
        gt_die("pthread_mutex_lock", rc);
}

static void unlock_queue(void)
{
    int rc = pthread_mutex_unlock(&qlock);
    if (rc)
        gt_die("pthread_mutex_unlock", rc);
}

void quick_signal_site(struct gt_log *lg)
{
    lock_queue();
    queued++;
    gt_log_add(lg, gt_now(), 0, SITE_QUICK);
    int rc = pthread_cond_signal(&qcond);
    if (rc)
        gt_die("pthread_cond_signal (quick)", rc);
    unlock_queue();
}

void late_signal_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + LATE_NS); /* the late producer's computation */
    lock_queue();
    queued++;
    gt_log_add(lg, gt_now(), 0, SITE_LATE);
    int rc = pthread_cond_signal(&qcond);
    if (rc)
        gt_die("pthread_cond_signal (late)", rc);
    unlock_queue();
}

void shutdown_broadcast_site(struct gt_log *lg)
{
    lock_queue();
    done = 1;
    gt_log_add(lg, gt_now(), 0, SITE_SHUTDOWN);
    int rc = pthread_cond_broadcast(&qcond);
    if (rc)
        gt_die("pthread_cond_broadcast", rc);
    unlock_queue();
}

/* One pthread_cond_wait, logged; called with qlock held. */
void consumer_wait_site(struct gt_log *lg)
{
    int64_t t0 = gt_now();
    int rc = pthread_cond_wait(&qcond, &qlock);
    int64_t t1 = gt_now();
    if (rc)
        gt_die("pthread_cond_wait", rc);
    gt_log_add(lg, t0, t1, -1);
}

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (;;) {
        lock_queue();
        while (queued == 0 && !done)
            consumer_wait_site(lg);
        if (queued == 0) {
            unlock_queue();
            break;
        }
        queued--;
        consumed++;
        unlock_queue();
        gt_sleep_until(gt_now() + PROCESS_NS);
    }
    return NULL;
}

static long rounds;

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        gt_spin_until(gt_now() + PREP_NS);
        quick_signal_site(lg);
        gt_spin_until(gt_now() + PREP_NS);
        quick_signal_site(lg);
        late_signal_site(lg);
    }
    /* Let the consumers drain the queue and go back to waiting. */
    for (;;) {
        lock_queue();
        long left = queued;
        unlock_queue();
        if (left == 0)
            break;
        gt_sleep_until(gt_now() + PROCESS_NS);
    }
    shutdown_broadcast_site(lg);
    return NULL;
}

int main(int argc, char **argv)
{
    int nconsumers;
    int bad = gt_consumer_args(argc, argv, 180, &nconsumers, &rounds);
    if (bad)
        return bad;
    int nthreads = nconsumers + 1;
    long tasks = 3 * rounds;
    logs = gt_consumer_logs(nthreads, (size_t)tasks + 8, 4 * (size_t)tasks + 64);
    double duration = gt_run_logged(nthreads, producer, consumer, logs);
    if (consumed != tasks) {
        fprintf(stderr, "gt_cond: %ld tasks consumed, %ld produced\n", consumed, tasks);
        return 1;
    }
    gt_write_signal_truth("gt_cond", "cond", &qcond, site_names, N_SITES, logs, nthreads, duration);
    return 0;
}
