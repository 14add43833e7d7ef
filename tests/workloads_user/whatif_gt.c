/*
 * whatif_gt.c: ground truth for `lockblame whatif`. Nine programs, chosen
 * by argv[1], each with one named release site whose holds WHATIF_FIX
 * really shortens (built twice: whatif_gt as it is, whatif_gt_fixed with
 * -DWHATIF_FIX), so that a test can set whatif's prediction for that site
 * beside the measured change of the real fix:
 *
 *   queue     one producer's queue_push holds the queue lock 100 us (50
 *             fixed) per task; two consumers pop and work 15 us: the push
 *             is the bottleneck, halving it gains much.
 *   offpath   two helpers take turns on a lock in helper_update, sleeping
 *             200 us in a hold (100 fixed): nearly all the blame; main
 *             computes alone for longer, so the run's length does not move.
 *   series    two workers pass each item through stage_one (lock A, 100 us,
 *             50 fixed) then stage_two (lock B, 70 us): fixing the first
 *             moves the bottleneck to the second, the gain is capped.
 *   oversub   16 threads on one lock, hot_update holding it 200 us (100 us
 *             less fixed: the fixed 100 us cut) and working 300 us outside.
 *   spin      two workers on one spin lock, spin_update holding it 60 us (30
 *             fixed) and working 20 us outside: the lock is the bottleneck.
 *   rwlock    two workers write-lock one rwlock in rw_update for 60 us (30
 *             fixed), then read-lock it for 10 us and work 10 us outside:
 *             the write holds are the bottleneck.
 *   plt       two workers call plt_update in libwhatif_plt.so through the
 *             PLT, which holds its lock 60 us (30 fixed) and releases it by
 *             a tail jump; they work 40 us outside: the lock is the
 *             bottleneck until the fix, which leaves the workers' own
 *             70 us a round as the limit (the gain is capped).
 *   posted    a producer makes each item with 60 us of work (30 fixed) in
 *             produce_item and posts a semaphore, under no lock; one
 *             consumer waits for it and works 45 us an item: the code
 *             before the post is the bottleneck until the fix, which
 *             leaves the consumer's 45 us as the limit (the gain is capped).
 *             argv[3] sets the consumer's work per item in us: a small one
 *             keeps the consumer waiting at every post even on a busy
 *             machine, where one barely faster than the producer may fall
 *             behind for a whole run and never wait.
 *   rated     the task queue for a fixed time (0.4 s times the scale) instead
 *             of a fixed number of tasks, as a server or benchmark runs: its
 *             figure is the rate of progress_point() calls, one a task done.
 *             Its consumers are never joined: once the queue is drained they
 *             sleep until the process exits, as a server's workers do.
 *
 * Work is CPU work in 2 us time slices (gt_work): a thread that is
 * descheduled or sleeps makes no progress, as with real computation.
 * argv[2] scales the item counts (default 1). With $GT_LOG set, appends
 * one line "site=NAME holds=N hold_ns=T progress=C" (the named site's holds,
 * as the program timed them, and its own count of progress_point() calls)
 * to that file at exit.
 */
#include <pthread.h>
#include <semaphore.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"

#ifdef WHATIF_FIX
#define SHORTER(us, fixed_us) (fixed_us)
#else
#define SHORTER(us, fixed_us) (us)
#endif

static int64_t site_holds, site_hold_ns; /* under the site's own lock */
void plt_update(int64_t work_ns);        /* libwhatif_plt.so */
void plt_holds(int64_t *n, int64_t *ns);
static const char *site_name;

/* The site's hold: work, timed, counted. Called with the lock held. */
static void timed_hold(int64_t ns)
{
    int64_t t = gt_now();
    gt_work(ns);
    site_holds++;
    site_hold_ns += gt_now() - t;
}

static int scale = 1;
static int64_t progress_calls; /* progress_point() calls, counted by the program */

/* One task done: the progress point that `whatif --progress` counts. It
 * starts, as most functions do, with a plain instruction (the worker's own
 * tally): a uprobe, which counts where breakpoints do not, cannot sit on a
 * lock-prefixed first instruction. */
__attribute__((noinline)) static void progress_point(int64_t *tasks_done)
{
    ++*tasks_done;
    __asm__ volatile("" ::: "memory");
    __atomic_fetch_add(&progress_calls, 1, __ATOMIC_RELAXED);
}

enum {
    OVERSUB_THREADS = 16 /* oversub's threads: the most run_workers starts */
};

/* Run n threads of worker (at most OVERSUB_THREADS) and join them. */
static void run_workers(int n, void *(*worker)(void *))
{
    pthread_t w[OVERSUB_THREADS];
    for (int i = 0; i < n; i++)
        pthread_create(&w[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(w[i], NULL);
}

/* queue */
enum {
    QCAP = 64
};
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qnonempty = PTHREAD_COND_INITIALIZER, qnonfull = PTHREAD_COND_INITIALIZER;
static int qbuf[QCAP], qhead, qlen, qdone;
static int64_t queue_deadline; /* rated: push until then; 0: a fixed number of tasks */

__attribute__((noinline)) static void queue_push(int v)
{
    pthread_mutex_lock(&qlock);
    while (qlen == QCAP)
        pthread_cond_wait(&qnonfull, &qlock);
    timed_hold(SHORTER(100, 50) * 1000);
    qbuf[(qhead + qlen++) % QCAP] = v;
    pthread_cond_signal(&qnonempty);
    pthread_mutex_unlock(&qlock);
}

__attribute__((noinline)) static int queue_pop(void)
{
    pthread_mutex_lock(&qlock);
    while (qlen == 0 && !qdone)
        pthread_cond_wait(&qnonempty, &qlock);
    int v = -1;
    if (qlen) {
        v = qbuf[qhead];
        qhead = (qhead + 1) % QCAP;
        qlen--;
        pthread_cond_signal(&qnonfull);
    }
    pthread_mutex_unlock(&qlock);
    return v;
}

static int consumers_done; /* rated: consumers that drained the queue */

static void *consumer(void *arg)
{
    (void)arg;
    int64_t tasks_done = 0;
    while (queue_pop() >= 0) {
        gt_work(15000);
        progress_point(&tasks_done);
    }
    if (queue_deadline) { /* rated: running at exit, not joined */
        __atomic_fetch_add(&consumers_done, 1, __ATOMIC_RELEASE);
        for (;;)
            pause();
    }
    return NULL;
}

static void run_queue(void)
{
    pthread_t c[2];
    site_name = "queue_push";
    for (int i = 0; i < 2; i++)
        pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; queue_deadline ? gt_now() < queue_deadline : i < 3000 * scale; i++)
        queue_push(i);
    pthread_mutex_lock(&qlock);
    qdone = 1;
    pthread_cond_broadcast(&qnonempty);
    pthread_mutex_unlock(&qlock);
    while (queue_deadline && __atomic_load_n(&consumers_done, __ATOMIC_ACQUIRE) < 2) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    for (int i = 0; !queue_deadline && i < 2; i++)
        pthread_join(c[i], NULL);
}

static void run_rated(void)
{
    queue_deadline = gt_now() + (int64_t)400000000 * scale;
    run_queue();
}

/* offpath */
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;

/* The helpers' hold waits (a slow call made under the lock), so that
 * they leave main's CPU alone even on a machine with few CPUs. */
__attribute__((noinline)) static void helper_update(void)
{
    pthread_mutex_lock(&hlock);
    int64_t t = gt_now();
    struct timespec ts = { 0, SHORTER(200, 100) * 1000 };
    nanosleep(&ts, NULL);
    site_holds++;
    site_hold_ns += gt_now() - t;
    pthread_mutex_unlock(&hlock);
}

static void *helper(void *arg)
{
    (void)arg;
    for (int i = 0; i < 600 * scale; i++) {
        helper_update();
        gt_work(5000);
    }
    return NULL;
}

static void run_offpath(void)
{
    pthread_t h[2];
    site_name = "helper_update";
    for (int i = 0; i < 2; i++)
        pthread_create(&h[i], NULL, helper, NULL);
    gt_work((int64_t)400000000 * scale); /* main's own computation: the run's length */
    for (int i = 0; i < 2; i++)
        pthread_join(h[i], NULL);
}

/* series */
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void stage_one(void)
{
    pthread_mutex_lock(&lock_a);
    timed_hold(SHORTER(100, 50) * 1000);
    pthread_mutex_unlock(&lock_a);
}

__attribute__((noinline)) static void stage_two(void)
{
    pthread_mutex_lock(&lock_b);
    gt_work(70000);
    pthread_mutex_unlock(&lock_b);
}

static void *series_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1500 * scale; i++) {
        stage_one();
        stage_two();
    }
    return NULL;
}

static void run_series(void)
{
    site_name = "stage_one";
    run_workers(2, series_worker);
}

/* oversub */
static pthread_mutex_t olock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void hot_update(void)
{
    pthread_mutex_lock(&olock);
    timed_hold(SHORTER(200, 100) * 1000);
    pthread_mutex_unlock(&olock);
}

static void *oversub_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100 * scale; i++) {
        hot_update();
        gt_work(300000);
    }
    return NULL;
}

static void run_oversub(void)
{
    site_name = "hot_update";
    run_workers(OVERSUB_THREADS, oversub_worker);
}

/* spin */
static pthread_spinlock_t slock;

__attribute__((noinline)) static void spin_update(void)
{
    pthread_spin_lock(&slock);
    timed_hold(SHORTER(60, 30) * 1000);
    pthread_spin_unlock(&slock);
}

static void *spin_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1500 * scale; i++) {
        spin_update();
        gt_work(20000);
    }
    return NULL;
}

static void run_spin(void)
{
    site_name = "spin_update";
    pthread_spin_init(&slock, PTHREAD_PROCESS_PRIVATE);
    run_workers(2, spin_worker);
    pthread_spin_destroy(&slock);
}

/* rwlock */
static pthread_rwlock_t rwl = PTHREAD_RWLOCK_INITIALIZER;

__attribute__((noinline)) static void rw_update(void)
{
    pthread_rwlock_wrlock(&rwl);
    timed_hold(SHORTER(60, 30) * 1000);
    pthread_rwlock_unlock(&rwl);
}

__attribute__((noinline)) static void rw_read(void)
{
    pthread_rwlock_rdlock(&rwl);
    gt_work(10000);
    pthread_rwlock_unlock(&rwl);
}

static void *rw_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1500 * scale; i++) {
        rw_update();
        rw_read();
        gt_work(10000);
    }
    return NULL;
}

static void run_rwlock(void)
{
    site_name = "rw_update";
    run_workers(2, rw_worker);
}

/* plt: the release site in another module, reached through the PLT */
static void *plt_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1500 * scale; i++) {
        plt_update(SHORTER(60, 30) * 1000);
        gt_work(40000);
    }
    return NULL;
}

static void run_plt(void)
{
    site_name = "plt_update";
    run_workers(2, plt_worker);
    plt_holds(&site_holds, &site_hold_ns); /* the library counts and times them */
}

/* posted: a signal site, the post made under no lock */
static sem_t items;
static long consumer_us = 45;

__attribute__((noinline)) static void produce_item(void)
{
    timed_hold(SHORTER(60, 30) * 1000); /* not a hold: the code before the post */
    sem_post(&items);
}

static void *item_consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3000 * scale; i++) {
        while (sem_wait(&items) != 0)
            ;
        gt_work(consumer_us * 1000);
    }
    return NULL;
}

static void run_posted(void)
{
    pthread_t c;
    site_name = "produce_item";
    sem_init(&items, 0, 0);
    pthread_create(&c, NULL, item_consumer, NULL);
    for (int i = 0; i < 3000 * scale; i++)
        produce_item();
    pthread_join(c, NULL);
    sem_destroy(&items);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } programs[] = {
        { "queue", run_queue },     { "offpath", run_offpath }, { "series", run_series },
        { "oversub", run_oversub }, { "rated", run_rated },     { "spin", run_spin },
        { "rwlock", run_rwlock },   { "plt", run_plt },         { "posted", run_posted },
    };
    if (argc > 2)
        scale = atoi(argv[2]);
    if (argc > 3)
        consumer_us = atol(argv[3]);
    prctl(PR_SET_TIMERSLACK, 1UL); /* offpath's sleeps: as long as asked */
    for (size_t i = 0; argc > 1 && scale > 0 && i < sizeof programs / sizeof programs[0]; i++) {
        if (strcmp(argv[1], programs[i].name) != 0)
            continue;
        int64_t t = gt_now();
        programs[i].run();
        printf("%s: %.3f s, %lld holds at %s, %.1f us each\n", argv[1], (gt_now() - t) * 1e-9,
               (long long)site_holds, site_name, site_holds ? site_hold_ns * 1e-3 / site_holds : 0);
        const char *log = getenv("GT_LOG");
        FILE *f = log ? fopen(log, "a") : NULL;
        if (f) {
            fprintf(f, "site=%s holds=%lld hold_ns=%lld progress=%lld\n", site_name,
                    (long long)site_holds, (long long)site_hold_ns, (long long)progress_calls);
            fclose(f);
        }
        return 0;
    }
    fprintf(stderr, "usage: %s queue|offpath|series|oversub|rated|spin|rwlock|plt|posted [SCALE]\n",
            argv[0]);
    return 2;
}
