/* Helpers shared by the conformance workloads (conf_*.c): each workload
 * checks its own results, prints only lines that are the same on every
 * correct run (so a driver can diff a native run against a preloaded one),
 * and exits 0 when every check held, 1 otherwise. */
#ifndef CONF_H
#define CONF_H
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int conf_failures;

/* CONF_EXPECT(cond, fmt, ...): count and report a failed check. Callable
 * from any thread; uses only write(2)-backed stdio on stderr. */
#define CONF_EXPECT(cond, ...)                                             \
    do {                                                                   \
        if (!(cond)) {                                                     \
            atomic_fetch_add(&conf_failures, 1);                           \
            fprintf(stderr, "check failed (%s:%d): ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static inline int conf_exit_status(void)
{
    return atomic_load(&conf_failures) ? 1 : 0;
}

static inline void conf_sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A signal storm: a thread that sends SIGUSR1 to the whole process every
 * `period_us` microseconds until conf_storm_stop(). The handler counts the
 * deliveries and preserves errno. SA_RESTART keeps the program's own
 * blocking calls restartable, as a careful program would do. */
static atomic_long conf_storm_received;
static atomic_int conf_storm_run;
static pthread_t conf_storm_thread;
static atomic_long conf_storm_sent;

static void conf_storm_handler(int sig)
{
    int e = errno;
    (void)sig;
    atomic_fetch_add_explicit(&conf_storm_received, 1, memory_order_relaxed);
    errno = e;
}

static void *conf_storm_main(void *arg)
{
    long period_us = (long)(intptr_t)arg;
    pid_t pid = getpid();
    while (atomic_load(&conf_storm_run)) {
        kill(pid, SIGUSR1);
        conf_storm_sent++;
        if (period_us > 0)
            conf_sleep_us(period_us);
    }
    return NULL;
}

static inline void conf_storm_start(long period_us)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = conf_storm_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    atomic_store(&conf_storm_run, 1);
    /* The storm thread itself never takes the signal. */
    sigset_t all, old;
    sigemptyset(&all);
    sigaddset(&all, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&conf_storm_thread, NULL, conf_storm_main, (void *)(intptr_t)period_us);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    CONF_EXPECT(rc == 0, "storm pthread_create returned %d", rc);
}

/* Waits (at most max_ms) until the storm has sent at least n signals: on
 * a loaded machine the storm thread may get little CPU, and the workload
 * must run under a storm that is really blowing. */
static inline void conf_storm_wait_sent(long n, int max_ms)
{
    for (int i = 0; i < max_ms && atomic_load(&conf_storm_sent) < n; i++)
        conf_sleep_us(1000);
}

/* Stops the storm; returns how many signals it sent. */
static inline long conf_storm_stop(void)
{
    atomic_store(&conf_storm_run, 0);
    pthread_join(conf_storm_thread, NULL);
    return atomic_load(&conf_storm_sent);
}
#endif
