/* A single-threaded program that computes and locks an uncontended mutex
 * at 3,000 call sites of its own, once each: lockblame's exit write names
 * every site (a frame each, found by its return address), which makes the
 * write long beside the program (0.2 s against its 0.1 s on a loaded
 * 2-core VM). Its one thread is on a CPU, or runnable waiting for one,
 * all its life: none of its time is spent off CPU in a wait, seen or not
 * (tests/integration/unseen_waits.sh).
 *
 *   many_sites [CPU_MS [parked]]
 *       compute CPU_MS (default 100) of CPU time, lock at each site, and
 *       print "end_mono_ns T cpu_ns C" with CLOCK_MONOTONIC and the main
 *       thread's CPU clock as main returns: the time from there to the
 *       process's end is lockblame's exit write. With "parked", a second
 *       thread waits on a condition variable that is never signalled,
 *       from before the computing to the process's end: a wait still
 *       open at the write. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int parked;
static volatile unsigned long sink;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One site: a call of pthread_mutex_lock of its own. */
#define SITE                         \
    do {                             \
        pthread_mutex_lock(&lock);   \
        sink++;                      \
        pthread_mutex_unlock(&lock); \
    } while (0);
#define SITES_10 SITE SITE SITE SITE SITE SITE SITE SITE SITE SITE
#define SITES_100 \
    SITES_10 SITES_10 SITES_10 SITES_10 SITES_10 SITES_10 SITES_10 SITES_10 SITES_10 SITES_10
#define SITES_1000                                                                            \
    SITES_100 SITES_100 SITES_100 SITES_100 SITES_100 SITES_100 SITES_100 SITES_100 SITES_100 \
        SITES_100

__attribute__((noinline)) static void lock_at_every_site(void)
{
    SITES_1000 SITES_1000 SITES_1000
}

static void *park(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&park_lock);
    parked = 1;
    pthread_cond_broadcast(&never); /* to main, waiting for this */
    for (;;)
        pthread_cond_wait(&never, &park_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "parked") == 0) {
        pthread_t parker;
        if (pthread_create(&parker, NULL, park, NULL) != 0)
            return 1;
        pthread_mutex_lock(&park_lock);
        while (!parked)
            pthread_cond_wait(&never, &park_lock);
        pthread_mutex_unlock(&park_lock);
    }
    double until = cpu_s() + (argc > 1 ? atoi(argv[1]) : 100) / 1e3;
    while (cpu_s() < until)
        sink++;
    lock_at_every_site();
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double cpu = cpu_s();
    printf("end_mono_ns %lld cpu_ns %lld\n", (long long)now.tv_sec * 1000000000 + now.tv_nsec,
           (long long)(cpu * 1e9));
    fflush(stdout);
    return 0;
}
