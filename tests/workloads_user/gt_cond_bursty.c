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

enum {
    SITE_FIRST,
    SITE_BURST,
    SITE_SHUTDOWN,
    N_SITES
};
static const char *const site_names[N_SITES] = { "first_push_site", "burst_push_site",
                                                 "shutdown_broadcast_site" };

enum {
    SERIAL_NS = 1000000,
    BURST = 16,
    BURST_GAP_NS = 2000,
    TASK_NS = 20000
};

static struct gt_queue q = GT_QUEUE_INIT;

GT_QUEUE_PUSH_SITE(first_push_site, &q, SERIAL_NS, SITE_FIRST)
GT_QUEUE_PUSH_SITE(burst_push_site, &q, BURST_GAP_NS, SITE_BURST)
GT_QUEUE_SHUTDOWN_SITE(&q, SITE_SHUTDOWN)

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (;;) {
        pthread_mutex_lock(&q.lock);
        int took = gt_queue_take(&q, lg);
        pthread_mutex_unlock(&q.lock);
        if (!took)
            return NULL;
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
    gt_queue_drained(&q);
    shutdown_broadcast_site(lg);
    return NULL;
}

int main(int argc, char **argv)
{
    return gt_queue_main(argc, argv, "gt_cond_bursty", &q, 300, BURST, &rounds, producer, consumer,
                         site_names, N_SITES);
}
