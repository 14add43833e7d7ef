/*
 * idle_helper: an idle helper thread woken early, beside real contention
 * (docs/DESIGN.md rule 6), built -O2 -g. The shape of jemalloc's
 * background thread: it sleeps in timed waits on its own condition
 * variable and does a tiny job each time it wakes; the threads that do
 * the program's work signal it now and then to wake it early
 * (background_thread_wakeup_early). Nobody waits for what it does.
 *
 * WORKERS threads contend for one mutex (`hot`), released at hot_release
 * (a function that ends in the unlock: a tail jump at -O2); every
 * WAKE_EVERY-th hold, a worker also calls wake_helper_early, which
 * signals the helper's cond. The helper waits with a 50 ms timeout,
 * again and again, until main stops it (stop_helper) after joining the
 * workers. The helper's waiting is the program's shape; the mutex is
 * what a user can act on, so the default release-site view must rank
 * hot_release first and list wake_helper_early apart, as structural.
 *
 * Ground truth (gt.h format) for the mutex: its wait and hold spans, swept
 * per site. Plus, in GROUND_TRUTH.structural: "helper_wait_s", the
 * helper's own measure of its time in its cond waits (all of them, the
 * last one ended by stop_helper), "helper_last_wait_s" (that last one:
 * a thread parked until shutdown, which rule 6 may list apart),
 * "helper_waits" and "helper_timeouts".
 *
 * Two shapes that are not idle helpers, whose waiting stays blame on the
 * early wake's site (a consumer starved by its producers):
 *  - GT_IDLE_UNTIMED=1: the helper waits with no timeout: it has no
 *    schedule of its own, each signal is what it waits for;
 *  - GT_IDLE_BUSY=1: its job per wake is long (3 ms, more than the time
 *    between wakes): it is busy, not idle.
 *
 * Usage: idle_helper [WORKERS [DURATION_MS]]   (defaults 3 and 1000)
 */
#include "hot_workers.h"

#define WAKE_EVERY  40       /* holds between a worker's early wakes */
#define HELPER_WAIT 50000000 /* the helper's timeout */
#define HELPER_JOB  20000    /* its job per wake (GT_IDLE_BUSY: 3 ms) */

static pthread_mutex_t helper_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t helper_cv = PTHREAD_COND_INITIALIZER;
static int stopping, untimed;
static int64_t helper_job = HELPER_JOB;
static int64_t helper_wait_ns, helper_last_wait_ns;
static long helper_waits, helper_timeouts;

static __attribute__((noinline)) void hot_release(struct gt_log *lg, int64_t t1)
{
    gt_log_add(lg, t1, gt_now(), 0);
    pthread_mutex_unlock(&hot);
}

/* Under no lock of the workers': a signal the helper may not be waiting
 * for (as jemalloc's, made when enough memory was freed). */
static __attribute__((noinline)) void wake_helper_early(void)
{
    pthread_mutex_lock(&helper_m);
    pthread_cond_signal(&helper_cv);
    pthread_mutex_unlock(&helper_m);
}

static __attribute__((noinline)) void stop_helper(void)
{
    pthread_mutex_lock(&helper_m);
    stopping = 1;
    pthread_cond_signal(&helper_cv);
    pthread_mutex_unlock(&helper_m);
}

static void hot_after_hold(long holds)
{
    if (holds % WAKE_EVERY == 0)
        wake_helper_early();
}

static void *helper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&helper_m);
    while (!stopping) {
        struct timespec until = gt_realtime_in(HELPER_WAIT);
        int64_t t0 = gt_now();
        int rc = untimed ? pthread_cond_wait(&helper_cv, &helper_m)
                         : pthread_cond_timedwait(&helper_cv, &helper_m, &until);
        helper_last_wait_ns = gt_now() - t0;
        helper_wait_ns += helper_last_wait_ns;
        helper_waits++;
        helper_timeouts += rc == ETIMEDOUT;
        if (stopping)
            break;
        pthread_mutex_unlock(&helper_m);
        gt_work(helper_job); /* its job: nobody waits for it */
        pthread_mutex_lock(&helper_m);
    }
    pthread_mutex_unlock(&helper_m);
    return NULL;
}

int main(int argc, char **argv)
{
    struct hot_run run;
    hot_args(&run, argc, argv);
    untimed = getenv("GT_IDLE_UNTIMED") && atoi(getenv("GT_IDLE_UNTIMED"));
    if (getenv("GT_IDLE_BUSY") && atoi(getenv("GT_IDLE_BUSY")))
        helper_job = 3000000;
    pthread_t help;
    if (pthread_create(&help, NULL, helper, NULL))
        gt_die("pthread_create", EAGAIN);
    hot_run_workers(&run);
    stop_helper();
    pthread_join(help, NULL);

    FILE *f = hot_write_truth(&run, "idle_helper");
    fprintf(f,
            "{\"helper_wait_s\": %.9f, \"helper_last_wait_s\": %.9f, \"helper_waits\": %ld,"
            " \"helper_timeouts\": %ld}\n",
            (double)helper_wait_ns / 1e9, (double)helper_last_wait_ns / 1e9, helper_waits,
            helper_timeouts);
    fclose(f);
    return 0;
}
