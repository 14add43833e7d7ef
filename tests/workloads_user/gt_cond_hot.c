/*
 * gt_cond_hot: ground truth for a hot condition variable, built the way
 * users build (gcc -O2 -g), signalled from two call sites a few
 * microseconds apart: the rate at which lockblame attributes a cond's
 * blame at CPU samples instead of at every signal
 * (src/blame/signal_sampled.h; docs/DESIGN.md rule 3 either way).
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

enum {
    SITE_FAST,
    SITE_SLOW,
    SITE_SHUTDOWN,
    N_SITES
};
static const char *const site_names[N_SITES] = { "fast_push_site", "slow_push_site",
                                                 "shutdown_broadcast_site" };

/* The work before each push, ns: GT_FAST_NS and GT_SLOW_NS in the
 * environment override them (a faster producer: more signals a second). */
static int64_t fast_ns = 2500, slow_ns = 12000;

static struct gt_queue q = GT_QUEUE_INIT;

/* Each push site its own function, its signal its own call. */
GT_QUEUE_PUSH_SITE(fast_push_site, &q, fast_ns, SITE_FAST)
GT_QUEUE_PUSH_SITE(slow_push_site, &q, slow_ns, SITE_SLOW)
GT_QUEUE_SHUTDOWN_SITE(&q, SITE_SHUTDOWN)

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    pthread_mutex_lock(&q.lock);
    while (gt_queue_take(&q, lg))
        ;
    pthread_mutex_unlock(&q.lock);
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
    gt_queue_drained(&q);
    shutdown_broadcast_site(lg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (getenv("GT_FAST_NS"))
        fast_ns = atol(getenv("GT_FAST_NS"));
    if (getenv("GT_SLOW_NS"))
        slow_ns = atol(getenv("GT_SLOW_NS"));
    return gt_queue_main(argc, argv, "gt_cond_hot", &q, 30000, 4, &rounds, producer, consumer,
                         site_names, N_SITES);
}
