/* A signal storm (SIGUSR1 to the process, thousands a second) while
 * threads are created, detached and joined, and take mutexes, rwlocks,
 * condition variables and semaphores: every call returns what POSIX says,
 * errno is untouched by successful calls, and the expected errors come back
 * unchanged (EBUSY, ETIMEDOUT, EAGAIN, EDEADLK). */
#include "conf.h"

#include <semaphore.h>

#define WORKERS 4
#define ROUNDS  400

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER; /* main holds it throughout */
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static long counter;

static void deadline_in(struct timespec *ts, long us)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += us * 1000;
    ts->tv_sec += ts->tv_nsec / 1000000000;
    ts->tv_nsec %= 1000000000;
}

static void *short_lived(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        errno = 4242;
        int rc = pthread_mutex_lock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "lock %d errno %d", rc, errno);
        counter++;
        rc = pthread_mutex_unlock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "unlock %d errno %d", rc, errno);

        rc = pthread_mutex_trylock(&held);
        CONF_EXPECT(rc == EBUSY && errno == 4242, "trylock held %d errno %d", rc, errno);
        if (r % 40 == 0) {
            struct timespec ts;
            deadline_in(&ts, 2000);
            rc = pthread_mutex_timedlock(&held, &ts);
            CONF_EXPECT(rc == ETIMEDOUT && errno == 4242, "timedlock %d errno %d", rc, errno);
            deadline_in(&ts, 2000);
            pthread_mutex_lock(&m);
            rc = pthread_cond_timedwait(&cv, &m, &ts);
            pthread_mutex_unlock(&m);
            CONF_EXPECT(rc == ETIMEDOUT && errno == 4242, "cond_timedwait %d errno %d", rc, errno);
            deadline_in(&ts, 2000);
            errno = 4242;
            rc = sem_timedwait(&sem, &ts);
            CONF_EXPECT(rc == -1 && (errno == ETIMEDOUT || errno == EINTR),
                        "sem_timedwait %d errno %d", rc, errno);
            errno = 4242;
        }
        rc = sem_trywait(&sem);
        CONF_EXPECT(rc == -1 && errno == EAGAIN, "sem_trywait %d errno %d", rc, errno);
        errno = 4242;
        rc = pthread_rwlock_rdlock(&rw);
        CONF_EXPECT(rc == 0 && errno == 4242, "rdlock %d errno %d", rc, errno);
        rc = pthread_rwlock_trywrlock(&rw);
        CONF_EXPECT(rc == EBUSY, "trywrlock under own read lock %d", rc);
        pthread_rwlock_unlock(&rw);

        if (r % 20 == 0) { /* create, detach, join under the storm */
            pthread_t t;
            rc = pthread_create(&t, NULL, short_lived, NULL);
            CONF_EXPECT(rc == 0 && errno == 4242, "create %d errno %d", rc, errno);
            if (r % 40 == 0) {
                rc = pthread_detach(t);
                CONF_EXPECT(rc == 0 && errno == 4242, "detach %d errno %d", rc, errno);
            } else {
                rc = pthread_join(t, NULL);
                CONF_EXPECT(rc == 0 && errno == 4242, "join %d errno %d", rc, errno);
            }
        }
    }
    int rc = pthread_join(pthread_self(), NULL);
    CONF_EXPECT(rc == EDEADLK, "self-join %d", rc);
    return NULL;
}

/* Without SA_RESTART, a signal handler interrupts sem_wait: -1 with errno
 * EINTR, natively, and so under lockblame. */
static sem_t never;
static atomic_int blocked;

static void on_usr2(int sig)
{
    (void)sig;
}

static void *interrupted(void *arg)
{
    (void)arg;
    atomic_store(&blocked, 1);
    errno = 0;
    int rc = sem_wait(&never);
    int e = errno;
    CONF_EXPECT(rc == -1 && e == EINTR, "sem_wait: rc %d errno %d, expected -1 EINTR", rc, e);
    atomic_store(&blocked, 0);
    return NULL;
}

static void eintr_phase(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    sem_init(&never, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, interrupted, NULL);
    while (!atomic_load(&blocked))
        conf_sleep_us(1000);
    /* Until it is out: a signal that came before it blocked is lost. */
    for (int i = 0; i < 5000 && atomic_load(&blocked); i++) {
        pthread_kill(t, SIGUSR2);
        conf_sleep_us(1000);
    }
    if (atomic_load(&blocked)) { /* never interrupted: report, then let it go */
        CONF_EXPECT(0, "sem_wait was not interrupted");
        sem_post(&never);
    }
    pthread_join(t, NULL);
    printf("sem_wait interrupted by a handler without SA_RESTART: %s\n",
           conf_exit_status() ? "unexpected results" : "-1 EINTR");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    eintr_phase();
    sem_init(&sem, 0, 0);
    pthread_mutex_lock(&held);
    conf_storm_start(50); /* up to ~20,000 signals a second */
    conf_storm_wait_sent(200, 30000);
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        int rc = pthread_create(&t[i], NULL, worker, NULL);
        CONF_EXPECT(rc == 0, "create rc %d", rc);
    }
    for (int i = 0; i < WORKERS; i++)
        CONF_EXPECT(pthread_join(t[i], NULL) == 0, "join worker");
    long sent = conf_storm_stop();
    pthread_mutex_unlock(&held);
    /* The detached short-lived threads may still run: wait for them. */
    long want = (long)WORKERS * ROUNDS + (long)WORKERS * (ROUNDS / 20);
    for (int i = 0; i < 5000; i++) {
        pthread_mutex_lock(&m);
        long c = counter;
        pthread_mutex_unlock(&m);
        if (c == want)
            break;
        conf_sleep_us(1000);
    }
    CONF_EXPECT(counter == want, "counter %ld, expected %ld", counter, want);
    CONF_EXPECT(sent > 100, "storm sent only %ld signals", sent);
    printf(
        "%d workers x %d rounds under a signal storm: counter %ld, all results as POSIX says: %s\n",
        WORKERS, ROUNDS, counter, conf_exit_status() ? "no" : "yes");
    return conf_exit_status();
}
