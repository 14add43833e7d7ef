/*
 * gt_cond_hot: ground truth for a hot condition variable, built the way
 * users build (gcc -O2 -g), signalled from two call sites a few
 * microseconds apart: the rate at which lockblame attributes a cond's
 * blame at CPU samples instead of at every signal
 * (src/blame/signal_sampled.h; DESIGN.md rule 3 either way).
 *
 * One producer and CONSUMERS consumers share a counter of queued tasks
 * under one mutex and one cond. The producer computes FAST_NS before each
 * of three pushes signalled from fast_push_site() and SLOW_NS before one
 * signalled from slow_push_site(), round after round; the consumers take
 * a task and go back to waiting at once, so they wait nearly all the
 * time and nearly every signal has a waiter. At the end the producer wakes
 * everyone from shutdown_broadcast_site().
 *
 * Ground truth: the consumers log each cond-wait interval, the producer
 * the time just before each signal with its site; gt_sweep_signal gives
 * each signal the idleness accrued since the previous one (gt.h).
 *
 * Usage: gt_cond_hot [CONSUMERS [ROUNDS]]   (defaults 2 and 30000: ~0.6 s)
 *        GT_FAST_NS, GT_SLOW_NS: the work before each push (2500, 12000)
 */
#include "gt.h"

enum { SITE_FAST, SITE_SLOW, SITE_SHUTDOWN, N_SITES };
static const char *const site_names[N_SITES] = { "fast_push_site", "slow_push_site",
                                                 "shutdown_broadcast_site" };

/* The work before each push, ns: GT_FAST_NS and GT_SLOW_NS in the
 * environment override them (a faster producer: more signals a second). */
static int64_t fast_ns = 2500, slow_ns = 12000;

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static long queued, consumed;
static int done;

/* Push one task and signal; the log entry is the signal's time. A macro,
 * so that each site's signal is its own call (an inline helper would be
 * the release site of both, DESIGN.md rule 5). */
#define PUSH(lg, site)                                                                             \
    do {                                                                                           \
        pthread_mutex_lock(&qlock);                                                                \
        queued++;                                                                                  \
        gt_log_add(lg, gt_now(), 0, site);                                                         \
        int rc_ = pthread_cond_signal(&qcond);                                                     \
        if (rc_)                                                                                   \
            gt_die("pthread_cond_signal", rc_);                                                    \
        pthread_mutex_unlock(&qlock);                                                              \
    } while (0)

__attribute__((noinline)) void fast_push_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + fast_ns);
    PUSH(lg, SITE_FAST);
}

__attribute__((noinline)) void slow_push_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + slow_ns);
    PUSH(lg, SITE_SLOW);
}

__attribute__((noinline)) void shutdown_broadcast_site(struct gt_log *lg)
{
    pthread_mutex_lock(&qlock);
    done = 1;
    gt_log_add(lg, gt_now(), 0, SITE_SHUTDOWN);
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
}

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (queued == 0 && !done) {
            int64_t t0 = gt_now();
            pthread_cond_wait(&qcond, &qlock);
            gt_log_add(lg, t0, gt_now(), -1);
        }
        if (queued == 0)
            break;
        queued--;
        consumed++;
    }
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static long rounds;

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        fast_push_site(lg);
        fast_push_site(lg);
        fast_push_site(lg);
        slow_push_site(lg);
    }
    for (;;) { /* the consumers drain the queue and wait again */
        pthread_mutex_lock(&qlock);
        long left = queued;
        pthread_mutex_unlock(&qlock);
        if (left == 0)
            break;
        sched_yield();
    }
    gt_sleep_until(gt_now() + 1000000);
    shutdown_broadcast_site(lg);
    return NULL;
}

int main(int argc, char **argv)
{
    int nconsumers;
    int bad = gt_consumer_args(argc, argv, 30000, &nconsumers, &rounds);
    if (bad)
        return bad;
    if (getenv("GT_FAST_NS"))
        fast_ns = atol(getenv("GT_FAST_NS"));
    if (getenv("GT_SLOW_NS"))
        slow_ns = atol(getenv("GT_SLOW_NS"));
    int nthreads = nconsumers + 1;
    long tasks = 4 * rounds;
    struct gt_log *logs = gt_consumer_logs(nthreads, (size_t)tasks + 8, (size_t)tasks + 64);
    double duration = gt_run_logged(nthreads, producer, consumer, logs);
    if (consumed != tasks) {
        fprintf(stderr, "gt_cond_hot: %ld tasks consumed, %ld produced\n", consumed, tasks);
        return 1;
    }
    gt_write_signal_truth("gt_cond_hot", "cond", &qcond, site_names, N_SITES, logs, nthreads,
                          duration);
    fprintf(stderr, "gt_cond_hot: %.0f signals a second\n", (double)tasks / duration);
    return 0;
}
