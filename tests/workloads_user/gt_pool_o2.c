/*
 * gt_pool_o2: structural waits beside real contention (docs/DESIGN.md rule 6),
 * built -O2 -g.
 *
 * POOL pool threads wait on a condition variable for tasks; main hands
 * them one task each at the start, after which they stay parked until the
 * shutdown broadcast at the end. Meanwhile WORKERS threads contend for one
 * mutex (`hot`), released at hot_release (a function that ends in the
 * unlock: a tail jump at -O2), and main joins them. Joins and the parked
 * pool are the program's shape; the mutex is what a user can act on, so
 * the default release-site view must rank hot_release first.
 *
 * Ground truth (gt.h format) for the mutex: its wait and hold spans, swept
 * per site. Plus "structural_parked_s": the pool threads' last waits, from
 * where each parked after its task to the shutdown wake-up, and
 * "structural_last_s": of that, their last cond waits' (the same but with
 * GT_POOL_TIMED).
 *
 * GT_POOL_TIMED=1: the pool threads wait with a 20 ms timeout, again and
 * again (a server's background threads checking for work now and then):
 * each parked span is a run of timed waits, the last one ended by the
 * shutdown broadcast; the others ran out, ended by no signal
 * (docs/DESIGN.md rule 3: unattributed).
 *
 * GT_POOL_AFTER=1: after the shutdown broadcast, pool thread 0 waits once
 * more on the pool's cond (up to 50 ms) and main signals it 3 ms later:
 * the cond's last signal is then not the one that ended the parked waits.
 *
 * GT_POOL_LATE=1: main keeps the mutex through the shutdown broadcast and
 * signals the pool's cond 3 ms later, before it lets go: the woken pool
 * threads return from their parked waits only after that signal (as a
 * busy machine that keeps them off a CPU makes them), which collects the
 * little waiting since the broadcast and is the cond's last.
 *
 * GT_POOL_HANDSHAKE=1: once woken for shutdown, each pool thread waits
 * again, ~2 ms, on a second cond that main broadcasts (a server's
 * background threads acknowledging shutdown): the parked wait is then no
 * longer the thread's last.
 *
 * Usage: gt_pool_o2 [WORKERS [DURATION_MS]]   (defaults 3 and 1000)
 */
#include "hot_workers.h"

#define POOL 3

static pthread_mutex_t pool_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t handshake_cv = PTHREAD_COND_INITIALIZER;
static int tasks, shutting_down, handshake, handshake_done, timed, after, late;
static int64_t parked_ns[POOL]; /* each pool thread's last wait */
static int64_t last_ns[POOL];   /* ... its last cond wait (a run's last, GT_POOL_TIMED) */
static volatile long done_tasks;

static __attribute__((noinline)) void hot_release(struct gt_log *lg, int64_t t1)
{
    gt_log_add(lg, t1, gt_now(), 0);
    pthread_mutex_unlock(&hot);
}

static void hot_after_hold(long holds)
{
    (void)holds;
}

static void *pool_thread(void *arg)
{
    int me = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool_m);
    for (;;) {
        int64_t t0 = gt_now(), w0 = t0;
        while (!tasks && !shutting_down) {
            int woke;
            w0 = gt_now();
            if (!timed) {
                woke = pthread_cond_wait(&pool_cv, &pool_m);
            } else {
                struct timespec until = gt_realtime_in(20000000);
                woke = pthread_cond_timedwait(&pool_cv, &pool_m, &until);
            }
            /* Woken by a signal that left no task for it (others took
             * them): that wait was the signaller's to answer for, and the
             * parked span starts again (a timeout continues it). */
            if (woke == 0 && !tasks && !shutting_down)
                t0 = gt_now();
        }
        parked_ns[me] = gt_now() - t0;
        last_ns[me] = gt_now() - w0;
        if (shutting_down && !tasks)
            break;
        tasks--;
        pthread_mutex_unlock(&pool_m);
        done_tasks++; /* the task */
        pthread_mutex_lock(&pool_m);
    }
    while (handshake && !handshake_done) /* the way out: one more, short wait */
        pthread_cond_wait(&handshake_cv, &pool_m);
    if (after && me == 0) { /* one more wait on the pool's cond, which main signals */
        struct timespec until = gt_realtime_in(50000000);
        pthread_cond_timedwait(&pool_cv, &pool_m, &until);
    }
    pthread_mutex_unlock(&pool_m);
    return NULL;
}

int main(int argc, char **argv)
{
    struct hot_run run;
    hot_args(&run, argc, argv);
    handshake = getenv("GT_POOL_HANDSHAKE") && atoi(getenv("GT_POOL_HANDSHAKE"));
    timed = getenv("GT_POOL_TIMED") && atoi(getenv("GT_POOL_TIMED"));
    after = getenv("GT_POOL_AFTER") && atoi(getenv("GT_POOL_AFTER"));
    late = getenv("GT_POOL_LATE") && atoi(getenv("GT_POOL_LATE"));
    pthread_t pool[POOL];
    for (int i = 0; i < POOL; i++)
        if (pthread_create(&pool[i], NULL, pool_thread, (void *)(intptr_t)i))
            gt_die("pthread_create", EAGAIN);
    /* The pool's one task each, given at once: how long pool threads wait
     * for work before the workers start is not what the test is about (on
     * a loaded machine the workers' start takes a while). */
    pthread_mutex_lock(&pool_m);
    tasks = POOL;
    pthread_cond_broadcast(&pool_cv);
    pthread_mutex_unlock(&pool_m);
    hot_run_workers(&run);
    pthread_mutex_lock(&pool_m);
    shutting_down = 1;
    pthread_cond_broadcast(&pool_cv);
    if (late) {
        gt_sleep_until(gt_now() + 3000000);
        pthread_cond_signal(&pool_cv);
    }
    pthread_mutex_unlock(&pool_m);
    if (after) {
        gt_sleep_until(gt_now() + 3000000);
        pthread_mutex_lock(&pool_m);
        pthread_cond_signal(&pool_cv);
        pthread_mutex_unlock(&pool_m);
    }
    if (handshake) {
        gt_sleep_until(gt_now() + 2000000);
        pthread_mutex_lock(&pool_m);
        handshake_done = 1;
        pthread_cond_broadcast(&handshake_cv);
        pthread_mutex_unlock(&pool_m);
    }
    for (int i = 0; i < POOL; i++)
        pthread_join(pool[i], NULL);

    double parked = 0, last = 0;
    for (int i = 0; i < POOL; i++) {
        parked += (double)parked_ns[i] / 1e9;
        last += (double)last_ns[i] / 1e9;
    }
    FILE *f = hot_write_truth(&run, "gt_pool_o2");
    fprintf(f,
            "{\"structural_parked_s\": %.9f, \"structural_last_s\": %.9f, \"pool_threads\": %d,"
            " \"tasks_done\": %ld}\n",
            parked, last, POOL, done_tasks);
    fclose(f);
    return 0;
}
