/*
 * gt_cond_deferred: ground truth for a hot cond whose waiters keep its
 * mutex a while after waking, the case that lockblame's deferred wait
 * ends (src/blame/wait_deferred.h) must get right. Built the way users
 * build (gcc -O2 -g).
 *
 * Queue mode (default): one producer and CONSUMERS consumers share a
 * counter of queued tasks under one mutex and one cond. The producer
 * computes PUSH_NS before each push; one push in two is signalled under
 * the mutex (locked_push_site), the other after releasing it
 * (unlocked_push_site, where a waiter's deferred end can still be pending
 * when the signal is measured). Each consumer waits, then works HOLD_NS
 * inside the mutex (the deferred end is pending meanwhile), releases it
 * and works OUTSIDE_NS before taking the mutex again. A consumer that
 * finds the queue empty again after waking waits again without releasing
 * (its previous wait's end is finished at the new wait's beginning).
 * Ground truth: every cond-wait interval and every signal's time and site
 * (gt.h's gt_sweep_signal), as JSON to $GROUND_TRUTH; and on stderr
 * "consumer_spin_s S", the consumers' work inside and outside the mutex
 * (their thread CPU time in it).
 *
 * Exit mode (`gt_cond_deferred exit`): the main thread waits on a cond
 * that a helper signals, twice (the first wait makes the cond hot under
 * LOCKBLAME_COND=sampled), then keeps the mutex for EXIT_HOLD_MS and
 * calls exit() still holding it: the second wait's end is still deferred
 * when the profile is written, and must count as ended when the thread
 * woke, not at exit. It prints "exit_waits_s S" (both waits' total) and
 * "exit_hold_s H" on stderr.
 *
 * Usage: gt_cond_deferred [CONSUMERS [ROUNDS]]   (defaults 2 and 20000)
 *        gt_cond_deferred exit
 */
#include "gt.h"

enum {
    SITE_LOCKED,
    SITE_UNLOCKED,
    SITE_SHUTDOWN,
    N_SITES
};
static const char *const site_names[N_SITES] = { "locked_push_site", "unlocked_push_site",
                                                 "shutdown_broadcast_site" };

enum {
    PUSH_NS = 14000,
    HOLD_NS = 4000,
    OUTSIDE_NS = 2000,
    EXIT_HOLD_MS = 300
};

static struct gt_queue q = GT_QUEUE_INIT;

GT_QUEUE_PUSH_SITE(locked_push_site, &q, PUSH_NS, SITE_LOCKED)
GT_QUEUE_SHUTDOWN_SITE(&q, SITE_SHUTDOWN)

__attribute__((noinline)) void unlocked_push_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + PUSH_NS);
    pthread_mutex_lock(&q.lock);
    q.queued++;
    pthread_mutex_unlock(&q.lock);
    gt_log_add(lg, gt_now(), 0, SITE_UNLOCKED);
    int rc = pthread_cond_signal(&q.cond);
    if (rc)
        gt_die("pthread_cond_signal", rc);
}

/* The consumers' CPU time in their spins (ns, atomic): on a busy machine a
 * spin's wall time is more than the CPU time its samples can see. */
static int64_t consumer_spin_cpu_ns;

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (;;) {
        pthread_mutex_lock(&q.lock);
        if (!gt_queue_take(&q, lg)) {
            pthread_mutex_unlock(&q.lock);
            return NULL;
        }
        int64_t cpu = gt_thread_cpu_ns();
        gt_spin_until(gt_now() + HOLD_NS); /* inside the hold, after the wake */
        int64_t inside = gt_thread_cpu_ns() - cpu;
        pthread_mutex_unlock(&q.lock);
        cpu = gt_thread_cpu_ns();
        gt_spin_until(gt_now() + OUTSIDE_NS);
        __atomic_add_fetch(&consumer_spin_cpu_ns, inside + gt_thread_cpu_ns() - cpu,
                           __ATOMIC_RELAXED);
    }
}

static long rounds;

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        locked_push_site(lg);
        unlocked_push_site(lg);
    }
    gt_queue_drained(&q);
    shutdown_broadcast_site(lg);
    return NULL;
}

/* Exit mode: the helper signals `turn` twice, 100 ms after main asked. */
static int turn;

static void *exit_helper(void *arg)
{
    (void)arg;
    for (int t = 1; t <= 2; t++) {
        gt_sleep_until(gt_now() + 100000000);
        pthread_mutex_lock(&q.lock);
        turn = t;
        pthread_cond_signal(&q.cond);
        pthread_mutex_unlock(&q.lock);
    }
    return NULL;
}

static int exit_mode(void)
{
    pthread_t helper;
    int rc = pthread_create(&helper, NULL, exit_helper, NULL);
    if (rc)
        gt_die("pthread_create", rc);
    int64_t waited = 0;
    pthread_mutex_lock(&q.lock);
    for (int t = 1; t <= 2; t++) {
        while (turn < t) {
            int64_t t0 = gt_now();
            pthread_cond_wait(&q.cond, &q.lock);
            waited += gt_now() - t0;
        }
        if (t == 1) { /* let the helper go on to its second signal */
            pthread_mutex_unlock(&q.lock);
            pthread_mutex_lock(&q.lock);
        }
    }
    rc = pthread_join(helper, NULL);
    if (rc)
        gt_die("pthread_join", rc);
    int64_t hold_from = gt_now();
    gt_sleep_until(hold_from + (int64_t)EXIT_HOLD_MS * 1000000);
    fprintf(stderr, "exit_waits_s %.6f\nexit_hold_s %.6f\n", waited / 1e9,
            (gt_now() - hold_from) / 1e9);
    exit(0); /* still holding q.lock */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit") == 0)
        return exit_mode();
    int rc = gt_queue_main(argc, argv, "gt_cond_deferred", &q, 20000, 2, &rounds, producer,
                           consumer, site_names, N_SITES);
    if (rc == 0)
        fprintf(stderr, "consumer_spin_s %.6f\n",
                (double)__atomic_load_n(&consumer_spin_cpu_ns, __ATOMIC_RELAXED) / 1e9);
    return rc;
}
