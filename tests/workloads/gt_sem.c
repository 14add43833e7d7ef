/*
 * gt_sem: ground truth for semaphore blame (docs/DESIGN.md rule 3: as for cond
 * vars, idleness accrued since the previous sem_post is blamed on the next
 * sem_post call site; rule 1: sem_trywait never waits).
 *
 * A two-stage pipeline over one counting semaphore `items`: one producer
 * stage posts a token per task, CONSUMERS threads take them and "process"
 * each off the CPU for 0.3 ms. The producer posts from two call sites, in
 * the pattern fast, fast, slow:
 *   fast_post_site  posts at once (the producer spends 0.6 ms preparing
 *                   the task before calling it)
 *   slow_post_site  computes for 4 ms, then posts
 * and finally posts one stop token per consumer from shutdown_post_site.
 * Every other task a consumer first polls with sem_trywait and only calls
 * sem_wait if that fails (EAGAIN): the poll is not a wait.
 *
 * Ground truth: consumers log each sem_wait interval [just before the call,
 * just after it returns]; the producer logs the time just before each
 * sem_post with its site. gt_sweep_signal gives each post the integral of
 * the number of waiting threads since the previous post (any site).
 *
 * Usage: gt_sem [CONSUMERS [ROUNDS]]   (defaults 2 and 180: about 1 s)
 */
#include "gt.h"

#include <semaphore.h>

enum {
    SITE_FAST,
    SITE_SLOW,
    SITE_SHUTDOWN,
    N_SITES
};
static const char *const site_names[N_SITES] = { "fast_post_site", "slow_post_site",
                                                 "shutdown_post_site" };

static sem_t items;
static atomic_long tickets; /* tokens taken; the first `tasks` are work */
static long tasks;
static atomic_long polls_ok, polls_failed;

#define PREP_NS    600000
#define SLOW_NS    4000000
#define PROCESS_NS 300000

__attribute__((noipa)) void fast_post_site(struct gt_log *lg);
__attribute__((noipa)) void slow_post_site(struct gt_log *lg);
__attribute__((noipa)) void shutdown_post_site(struct gt_log *lg, int n);
__attribute__((noipa)) void consumer_wait_site(struct gt_log *lg);

/* A macro, not a function: the site function itself must make the call
 * (the report names the innermost program frame that calls sem_post). */
#define POST(lg, site)                         \
    do {                                       \
        gt_log_add((lg), gt_now(), 0, (site)); \
        if (sem_post(&items) != 0)             \
            gt_die("sem_post", errno);         \
    } while (0)

void fast_post_site(struct gt_log *lg)
{
    POST(lg, SITE_FAST);
}

void slow_post_site(struct gt_log *lg)
{
    gt_spin_until(gt_now() + SLOW_NS); /* the slow stage's computation */
    POST(lg, SITE_SLOW);
}

void shutdown_post_site(struct gt_log *lg, int n)
{
    for (int i = 0; i < n; i++)
        POST(lg, SITE_SHUTDOWN);
}

/* One sem_wait, logged. */
void consumer_wait_site(struct gt_log *lg)
{
    int64_t t0 = gt_now();
    int rc;
    while ((rc = sem_wait(&items)) != 0 && errno == EINTR)
        ;
    int64_t t1 = gt_now();
    if (rc)
        gt_die("sem_wait", errno);
    gt_log_add(lg, t0, t1, -1);
}

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long i = 0;; i++) {
        if (i % 2 == 1 && sem_trywait(&items) == 0) {
            atomic_fetch_add(&polls_ok, 1);
        } else {
            if (i % 2 == 1) {
                if (errno != EAGAIN)
                    gt_die("sem_trywait", errno);
                atomic_fetch_add(&polls_failed, 1);
            }
            consumer_wait_site(lg);
        }
        if (atomic_fetch_add(&tickets, 1) >= tasks)
            break; /* a stop token */
        gt_sleep_until(gt_now() + PROCESS_NS);
    }
    return NULL;
}

static long rounds;
static int nconsumers;

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        gt_spin_until(gt_now() + PREP_NS);
        fast_post_site(lg);
        gt_spin_until(gt_now() + PREP_NS);
        fast_post_site(lg);
        slow_post_site(lg);
    }
    /* Let the consumers take the last tasks and go back to waiting. */
    int v;
    do {
        gt_sleep_until(gt_now() + PROCESS_NS);
        sem_getvalue(&items, &v);
    } while (v > 0);
    gt_sleep_until(gt_now() + PROCESS_NS);
    shutdown_post_site(lg, nconsumers);
    return NULL;
}

int main(int argc, char **argv)
{
    int bad = gt_consumer_args(argc, argv, 180, &nconsumers, &rounds);
    if (bad)
        return bad;
    if (sem_init(&items, 0, 0) != 0)
        gt_die("sem_init", errno);
    int nthreads = nconsumers + 1;
    tasks = 3 * rounds;
    struct gt_log *logs =
        gt_consumer_logs(nthreads, (size_t)tasks + (size_t)nconsumers + 8, (size_t)tasks + 64);
    double duration = gt_run_logged(nthreads, producer, consumer, logs);
    if (atomic_load(&tickets) != tasks + nconsumers) {
        fprintf(stderr, "gt_sem: %ld tokens taken, %ld posted\n", atomic_load(&tickets),
                tasks + nconsumers);
        return 1;
    }
    if (sem_destroy(&items) != 0)
        gt_die("sem_destroy", errno);
    /* Not part of the JSON (they vary from run to run); for the log. */
    fprintf(stderr, "gt_sem: sem_trywait polls: %ld succeeded, %ld failed\n",
            atomic_load(&polls_ok), atomic_load(&polls_failed));
    gt_write_signal_truth("gt_sem", "sem", &items, site_names, N_SITES, logs, nthreads, duration);
    return 0;
}
