/*
 * gt_timed: ground truth for timed waits that run out (docs/DESIGN.md rule
 * 3: a cond or semaphore wait that ran out of time was ended by no signal
 * or post; its accrual since the last one stays unattributed, and a waiter
 * is never blamed for its own wait).
 *
 * One object, a condition variable (with its mutex) or a semaphore, and
 * three threads:
 *   timer     a timer thread, as rocksdb::Timer::Run: it waits on the
 *             object with a deadline every TICK_NS; each wait that runs
 *             out is followed by its own broadcast (cond) or post (sem)
 *             on the same object, from timer_wake_site. A wait that
 *             something else ends goes on to the same deadline.
 *   producer  in each round, a burst of BURST items, one every GAP_NS,
 *             each a broadcast or post from producer_signal_site; then
 *             QUIET_NS of nothing
 *   consumer  sleeps until each burst begins (so that it waits only
 *             during bursts), then waits for the burst's items: its waits
 *             are ended by the producer's signals (or now and then by the
 *             timer's)
 * and at the end main wakes the timer from shutdown_signal_site.
 *
 * Items are counted under a mutex (the semaphore's tokens only wake: the
 * timer's own posts, and a producer's token the timer takes, cannot make
 * the consumer take an item twice or miss one).
 *
 * Ground truth: every wait is logged [just before the call, just after it
 * returns], marked GT_TIMED_OUT when it returned ETIMEDOUT; every signal
 * or post its time and site. gt_sweep_signal gives each signal the
 * integral of the waiters since the previous one, less what the waits
 * that ran out in between accrued since it (their own, unattributed).
 * timer_wake_site's truth is then what the timer's broadcasts collect of
 * the consumer's waiting (little), not the timer's own waits.
 *
 * Mode poll (poll-cond, poll-sem): a coordinator that polls, as xz's main
 * thread waits for its workers: `while (!done) timed wait of POLL_NS`,
 * beside a worker that signals the object once from worker_done_site,
 * WORK_NS after each round begins. Each of the coordinator's waits but
 * the last runs out and the next begins right after it, with no signal
 * in between: the run is one wait (docs/DESIGN.md rule 3), and the
 * worker's signal that ends it collects all of it (gt_sweep_signal).
 *
 * Usage: gt_timed cond|sem|poll-cond|poll-sem [ROUNDS]
 *        (default 12: about 0.5 s; poll: ROUNDS * WORK_NS)
 */
#include "gt.h"

#include <semaphore.h>

enum {
    SITE_TIMER,
    SITE_PRODUCER,
    SITE_SHUTDOWN,
    SITE_WORKER,
    N_SITES
};
static const char *const site_names[N_SITES] = { "timer_wake_site", "producer_signal_site",
                                                 "shutdown_signal_site", "worker_done_site" };

#define TICK_NS   25000000
#define BURST     4
#define GAP_NS    2000000
#define QUIET_NS  30000000
#define PERIOD_NS ((int64_t)BURST * GAP_NS + QUIET_NS)
#define POLL_NS   5000000  /* poll: the coordinator's timed waits */
#define WORK_NS   40000000 /* poll: each round's work, before the worker's signal */

static int use_sem;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static long items; /* produced, not yet taken; under mu */
static int stop;   /* the timer ends; under mu */
static long rounds;
static int64_t start_ns; /* the schedule's origin, set before the gate opens */

static struct gt_log *logs; /* [0] timer, [1] producer, [2] consumer, [3] main; poll: [0]
                            * coordinator, [1] worker, [2] main */

__attribute__((noipa)) void timer_wake_site(struct gt_log *lg);
__attribute__((noipa)) void producer_signal_site(struct gt_log *lg);
__attribute__((noipa)) void shutdown_signal_site(struct gt_log *lg);
__attribute__((noipa)) void worker_done_site(struct gt_log *lg);

static void lock(void)
{
    int rc = pthread_mutex_lock(&mu);
    if (rc)
        gt_die("pthread_mutex_lock", rc);
}

static void unlock(void)
{
    int rc = pthread_mutex_unlock(&mu);
    if (rc)
        gt_die("pthread_mutex_unlock", rc);
}

/* The object's signal (cond: broadcast, mu held by the caller; sem: post),
 * logged at site. A macro: each site function makes the call itself
 * (docs/DESIGN.md rule 5). */
#define SIGNAL(lg, site)                               \
    do {                                               \
        gt_log_add((lg), gt_now(), 0, (site));         \
        if (use_sem) {                                 \
            if (sem_post(&sem) != 0)                   \
                gt_die("sem_post", errno);             \
        } else {                                       \
            int rc_ = pthread_cond_broadcast(&cv);     \
            if (rc_)                                   \
                gt_die("pthread_cond_broadcast", rc_); \
        }                                              \
    } while (0)

void timer_wake_site(struct gt_log *lg)
{
    SIGNAL(lg, SITE_TIMER);
}

void producer_signal_site(struct gt_log *lg)
{
    SIGNAL(lg, SITE_PRODUCER);
}

void shutdown_signal_site(struct gt_log *lg)
{
    SIGNAL(lg, SITE_SHUTDOWN);
}

void worker_done_site(struct gt_log *lg)
{
    SIGNAL(lg, SITE_WORKER);
}

/* One wait on the object until the monotonic time `until` (forever if 0),
 * logged; cond: mu held. Returns 0, or ETIMEDOUT. */
static int wait_logged(struct gt_log *lg, int64_t until)
{
    int64_t t0 = gt_now();
    struct timespec deadline = gt_realtime_in(until > t0 ? until - t0 : 0);
    int rc;
    if (use_sem) {
        rc = until ? sem_timedwait(&sem, &deadline) : sem_wait(&sem);
        if (rc != 0) {
            rc = errno;
            if (rc == EINTR)
                rc = 0; /* (a wait again, logged as ended) */
        }
    } else {
        rc = until ? pthread_cond_timedwait(&cv, &mu, &deadline) : pthread_cond_wait(&cv, &mu);
    }
    int64_t t1 = gt_now();
    if (rc != 0 && rc != ETIMEDOUT)
        gt_die(use_sem ? "sem_timedwait" : "pthread_cond_timedwait", rc);
    gt_log_add(lg, t0, t1, rc == ETIMEDOUT ? GT_TIMED_OUT : -1);
    return rc;
}

/* Locked: one wait (wait_logged), the mutex released across a
 * semaphore's (it needs none), held across a cond's. */
static int wait_locked(struct gt_log *lg, int64_t until)
{
    if (!use_sem)
        return wait_logged(lg, until);
    unlock();
    int rc = wait_logged(lg, until);
    lock();
    return rc;
}

/* Locked: the change made under the mutex released, and its signal at
 * site: a semaphore's post after the unlock, a cond's broadcast before. */
static void unlock_signalling(void (*site)(struct gt_log *), struct gt_log *lg)
{
    if (use_sem) {
        unlock();
        site(lg);
    } else {
        site(lg);
        unlock();
    }
}

static void *timer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    int64_t next = start_ns + TICK_NS;
    lock();
    while (!stop) {
        int rc = wait_locked(lg, next);
        if (rc == ETIMEDOUT && !stop) {
            if (use_sem)
                unlock();
            timer_wake_site(lg); /* "the task ran": tell the waiters */
            if (use_sem)
                lock();
            next += TICK_NS;
        }
    }
    unlock();
    return NULL;
}

static void *producer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        for (int k = 1; k <= BURST; k++) {
            gt_sleep_until(start_ns + r * PERIOD_NS + (int64_t)k * GAP_NS);
            lock();
            items++;
            unlock_signalling(producer_signal_site, lg);
        }
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 0; r < rounds; r++) {
        gt_sleep_until(start_ns + r * PERIOD_NS); /* off the object until the burst */
        for (int k = 0; k < BURST; k++) {
            lock();
            while (items == 0)
                wait_locked(lg, 0);
            items--;
            unlock();
        }
    }
    return NULL;
}

/* poll: the worker's rounds (done: the round the coordinator may end,
 * under mu) */
static long done;

static void *worker(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 1; r <= rounds; r++) {
        gt_sleep_until(start_ns + r * WORK_NS);
        lock();
        done = r;
        unlock_signalling(worker_done_site, lg);
    }
    return NULL;
}

static void *coordinator(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long r = 1; r <= rounds; r++) {
        lock();
        while (done < r) /* (a semaphore's token a round's end left: again) */
            wait_locked(lg, gt_now() + POLL_NS);
        unlock();
    }
    return NULL;
}

/* Starts one thread per routine, each on its log, and opens the gate;
 * returns the time before the schedule (2 ms ahead of its start). */
static int64_t start_threads(void *(*const *routines)(void *), int n, pthread_t *tids)
{
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&tids[i], NULL, routines[i], &logs[i]);
        if (rc)
            gt_die("pthread_create", rc);
    }
    /* the schedule begins a little after the gate, so that no thread is late
     * for its first step */
    gt_gate_open(n, &start_ns, 2000000);
    return start_ns - 2000000;
}

static void join_thread(pthread_t tid)
{
    int rc = pthread_join(tid, NULL);
    if (rc)
        gt_die("pthread_join", rc);
}

/* The truth of the run since t0, every thread's log swept, as JSON. */
static void write_truth(int threads, int64_t t0)
{
    gt_write_signal_truth("gt_timed", use_sem ? "sem" : "cond",
                          use_sem ? (const void *)&sem : (const void *)&cv, site_names, N_SITES,
                          logs, threads, (double)(gt_now() - t0) / 1e9);
}

static int poll_main(void)
{
    logs = gt_alloc(3, sizeof *logs);
    gt_log_init(&logs[0], (size_t)(rounds * (WORK_NS / POLL_NS + 4)) + 64);
    gt_log_init(&logs[1], (size_t)rounds + 8);
    gt_log_init(&logs[2], 8); /* main's: it waits on nothing */
    void *(*const routines[2])(void *) = { coordinator, worker };
    pthread_t tids[2];
    int64_t t0 = start_threads(routines, 2, tids);
    for (int i = 0; i < 2; i++)
        join_thread(tids[i]);
    write_truth(3, t0);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    bool poll = strncmp(mode, "poll-", 5) == 0;
    if (poll)
        mode += 5;
    if (strcmp(mode, "cond") != 0 && strcmp(mode, "sem") != 0) {
        fprintf(stderr, "usage: %s cond|sem|poll-cond|poll-sem [ROUNDS]\n", argv[0]);
        return 2;
    }
    use_sem = strcmp(mode, "sem") == 0;
    rounds = argc > 2 ? atol(argv[2]) : 12;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s cond|sem|poll-cond|poll-sem [ROUNDS]\n", argv[0]);
        return 2;
    }
    if (use_sem && sem_init(&sem, 0, 0) != 0)
        gt_die("sem_init", errno);
    if (poll)
        return poll_main();
    logs = gt_alloc(4, sizeof *logs);
    long ticks = rounds * PERIOD_NS / TICK_NS + 8;
    gt_log_init(&logs[0], 4 * (size_t)(ticks + rounds * BURST) + 64);
    gt_log_init(&logs[1], (size_t)(rounds * BURST) + 8);
    gt_log_init(&logs[2], 4 * (size_t)(rounds * BURST) + 64);
    gt_log_init(&logs[3], 8);
    void *(*const routines[3])(void *) = { timer, producer, consumer };
    pthread_t tids[3];
    int64_t t0 = start_threads(routines, 3, tids);
    for (int i = 1; i < 3; i++)
        join_thread(tids[i]);
    lock();
    stop = 1;
    unlock_signalling(shutdown_signal_site, &logs[3]);
    join_thread(tids[0]);
    write_truth(4, t0);
    return 0;
}
