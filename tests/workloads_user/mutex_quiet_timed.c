/*
 * mutex_quiet_timed: a hot mutex, then one timed wait on it, built -O2 -g.
 *
 * First 2 threads take one mutex HOT_ITERS times each with nothing inside
 * (released at hot_release_site()), their first locks waiting while main
 * holds it: under LOCKBLAME_MUTEX=sampled its
 * waits are blamed by the holders' CPU samples, and its lock and unlock
 * skip its lb_mon while nothing needs it (src/blame/mutex_quiet.h). Then
 * main takes the mutex, a waiter thread calls pthread_mutex_timedlock on
 * it (a timed wait is always timed exactly) and main releases it HOLD_MS
 * after the waiter entered the call, at long_release_site(). That wait is
 * the only one during main's hold: the blame at long_release_site is the
 * waiter's wait, which the waiter times itself (its wall time inside the
 * call; the hand-off after the release is a few us of it).
 *
 * The test's premise, read from lockblame's state in the mutex (glibc's
 * __list.__next, which lockblame keeps for the kinds it monitors): were
 * the stash's two low bits both set (an lb_mon, quiet) just before main
 * took the mutex? Natively the word is 0.
 *
 * Output (stdout, one "key value" a line):
 *   hot_acquisitions N  the hot phase's acquisitions (checked: 2 x HOT_ITERS)
 *   quiet_before Q      1 if the mutex was quiet before the timed wait, else 0
 *   timed_wait_s W      the waiter's wall time inside pthread_mutex_timedlock
 * Exit status 0, or 1 if a call failed or an update was lost.
 *
 * Usage: mutex_quiet_timed [HOT_ITERS [HOLD_MS]] (default 300000 and 80)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static long hot_iters = 300000;
static uint64_t hot_count;  /* under the_lock */
static int waiter_entering; /* atomic: the waiter is about to call timedlock */
static double timed_wait_s;
static int waiter_rc = -1;
static volatile int last_release; /* which site released last: keeps the two apart (-O2's
                                   * identical code folding would merge them) */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void hot_release_site(void)
{
    last_release = 1;
    pthread_mutex_unlock(&the_lock);
}

__attribute__((noinline)) static void long_release_site(void)
{
    last_release = 2;
    pthread_mutex_unlock(&the_lock);
}

static void *hot_thread(void *arg)
{
    (void)arg;
    for (long i = 0; i < hot_iters; i++) {
        pthread_mutex_lock(&the_lock);
        hot_count++;
        hot_release_site();
    }
    return NULL;
}

static void *timed_waiter(void *arg)
{
    (void)arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    __atomic_store_n(&waiter_entering, 1, __ATOMIC_RELEASE);
    double t0 = now_s();
    waiter_rc = pthread_mutex_timedlock(&the_lock, &deadline);
    timed_wait_s = now_s() - t0;
    if (waiter_rc == 0)
        pthread_mutex_unlock(&the_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    long hold_ms = 80;
    if (argc > 1)
        hot_iters = atol(argv[1]);
    if (argc > 2)
        hold_ms = atol(argv[2]);
    if (hot_iters <= 0 || hold_ms <= 0) {
        fprintf(stderr, "usage: %s [HOT_ITERS [HOLD_MS]]\n", argv[0]);
        return 2;
    }
    pthread_t hot[2], waiter;
    /* the hot threads' first locks wait (20 ms): the mutex is contended
     * at least once, whatever the machine's load */
    pthread_mutex_lock(&the_lock);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&hot[i], NULL, hot_thread, NULL) != 0)
            return 1;
    usleep(20000);
    pthread_mutex_unlock(&the_lock);
    for (int i = 0; i < 2; i++)
        pthread_join(hot[i], NULL);
    uintptr_t stash = (uintptr_t)the_lock.__data.__list.__next;

    pthread_mutex_lock(&the_lock);
    if (pthread_create(&waiter, NULL, timed_waiter, NULL) != 0)
        return 1;
    while (!__atomic_load_n(&waiter_entering, __ATOMIC_ACQUIRE))
        usleep(100);
    usleep((useconds_t)(hold_ms * 1000));
    long_release_site();
    pthread_join(waiter, NULL);

    printf("hot_acquisitions %llu\n", (unsigned long long)hot_count);
    printf("quiet_before %d\n", (stash & 3) == 3);
    printf("timed_wait_s %.6f\n", timed_wait_s);
    return waiter_rc == 0 && hot_count == 2 * (uint64_t)hot_iters ? 0 : 1;
}
