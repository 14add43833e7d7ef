/*
 * gt_cond_bursty: ground truth for a cond signalled in bursts between
 * serial phases, the shape of a thread pool's work queue in a program
 * that alternates parallel and serial work (a linker, a build step): most
 * of the idleness lies in a few long intervals, the serial phases, during
 * which the workers wait for the next burst. Built the way users build
 * (gcc -O2 -g). Under sampled attribution (src/blame/signal_sampled.h)
 * those intervals are measured whole ("Gaps"), not one in N.
 *
 * One producer and CONSUMERS consumers share a queue counter under one
 * mutex and one cond. Each round the producer works SERIAL_NS alone, then
 * pushes a burst: one task from first_push_site() and BURST - 1 from
 * burst_push_site(), BURST_GAP_NS apart, each signalled under the mutex.
 * A consumer takes one task at a time and works TASK_NS on it outside the
 * mutex. Ground truth: every cond-wait interval and every signal's time
 * and site (gt.h's gt_sweep_signal), as JSON to $GROUND_TRUTH.
 *
 * Usage: gt_cond_bursty [CONSUMERS [ROUNDS]]   (defaults 2 and 300)
 */
#include "gt.h"

enum { SITE_FIRST, SITE_BURST, SITE_SHUTDOWN, N_SITES };
static const char *const site_names[N_SITES] = { "first_push_site", "burst_push_site",
                                                 "shutdown_broadcast_site" };

enum { SERIAL_NS = 1000000, BURST = 16, BURST_GAP_NS = 2000, TASK_NS = 20000 };

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static long queued, consumed;
static int done;

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

__attribute__((noinline)) void first_push_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + SERIAL_NS);
    PUSH(lg, SITE_FIRST);
}

__attribute__((noinline)) void burst_push_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + BURST_GAP_NS);
    PUSH(lg, SITE_BURST);
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
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (queued == 0 && !done) {
            int64_t t0 = gt_now();
            pthread_cond_wait(&qcond, &qlock);
            gt_log_add(lg, t0, gt_now(), -1);
        }
        if (queued == 0) {
            pthread_mutex_unlock(&qlock);
            return NULL;
        }
        queued--;
        consumed++;
        pthread_mutex_unlock(&qlock);
        gt_spin_until(gt_now() + TASK_NS);
    }
}

static long rounds;

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        first_push_site(lg);
        for (int b = 1; b < BURST; b++)
            burst_push_site(lg);
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
    int bad = gt_consumer_args(argc, argv, 300, &nconsumers, &rounds);
    if (bad)
        return bad;
    int nthreads = nconsumers + 1;
    long tasks = BURST * rounds;
    struct gt_log *logs = gt_consumer_logs(nthreads, (size_t)tasks + 8, (size_t)tasks + 64);
    double duration = gt_run_logged(nthreads, producer, consumer, logs);
    if (consumed != tasks) {
        fprintf(stderr, "gt_cond_bursty: %ld tasks consumed, %ld produced\n", consumed, tasks);
        return 1;
    }
    gt_write_signal_truth("gt_cond_bursty", "cond", &qcond, site_names, N_SITES, logs, nthreads,
                          duration);
    return 0;
}
