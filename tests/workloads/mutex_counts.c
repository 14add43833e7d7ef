/* Mutex acquisition counts, whatever each mutex's life. Every successful
 * lock, trylock, timedlock and condition-wait re-acquisition is counted
 * here and printed as the truth:
 *   total N            all mutex acquisitions of this process
 *   record ADDR N      a contended mutex (it gets a per-object record):
 *                      its acquisitions, those before its first
 *                      contention included
 *   child N            the fork child's own acquisitions (its profile is
 *                      a run of its own)
 *   pid N              this process's
 * The mutexes: one never contended and still alive at exit, used alone
 * and then by two threads; one never contended and destroyed; a recursive
 * one (nested locks count) alive at exit; one re-initialized without
 * destroy; one copied with memcpy while counted; two locked alone many
 * times and then contended, one destroyed afterwards, one alive at exit;
 * condition waits on a never-contended mutex; and a fork child that
 * locks a mutex its parent had counted. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER; /* counted too */

static void add(long n)
{
    pthread_mutex_lock(&total_lock);
    total += n + 1; /* + this lock itself */
    pthread_mutex_unlock(&total_lock);
}

static long lock_n(pthread_mutex_t *m, long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
    }
    return n;
}

static pthread_mutex_t alive_plain = PTHREAD_MUTEX_INITIALIZER;

static void *use_alive_plain(void *arg)
{
    add(lock_n(&alive_plain, 1000));
    return NULL;
}

static void *use_in_child(void *arg)
{
    lock_n(&alive_plain, 150);
    return NULL;
}

static void *lock_once(void *arg)
{
    pthread_mutex_lock(arg);
    pthread_mutex_unlock(arg);
    return NULL;
}

/* Locked `alone` times, then held by main for 100 ms while a second
 * thread blocks on it, then locked 500 times more; returns the count. */
static long contended(pthread_mutex_t *m, long alone)
{
    long count = lock_n(m, alone);
    pthread_t t;
    pthread_mutex_lock(m);
    count++;
    if (pthread_create(&t, NULL, lock_once, m) != 0)
        exit(1);
    struct timespec pause = { 0, 100 * 1000 * 1000 };
    nanosleep(&pause, NULL); /* the other thread blocks on m meanwhile */
    pthread_mutex_unlock(m);
    pthread_join(t, NULL);
    count++;                 /* lock_once's */
    count += lock_n(m, 500); /* after the contention */
    return count;
}

int main(void)
{
    long n;
    /* never contended, alive at exit: alone, then from two threads in turn */
    add(lock_n(&alive_plain, 3000));
    pthread_t t;
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&t, NULL, use_alive_plain, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }

    /* never contended, destroyed */
    pthread_mutex_t *gone = malloc(sizeof *gone);
    pthread_mutex_init(gone, NULL);
    add(lock_n(gone, 700));
    if (pthread_mutex_trylock(gone) == 0) {
        pthread_mutex_unlock(gone);
        add(1);
    }
    struct timespec later;
    clock_gettime(CLOCK_REALTIME, &later);
    later.tv_sec += 5;
    if (pthread_mutex_timedlock(gone, &later) == 0) {
        pthread_mutex_unlock(gone);
        add(1);
    }
    pthread_mutex_destroy(gone);
    free(gone);

    /* recursive, nested, alive at exit */
    static pthread_mutex_t recursive;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&recursive, &attr);
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&recursive);
        pthread_mutex_lock(&recursive);
        pthread_mutex_unlock(&recursive);
        pthread_mutex_unlock(&recursive);
    }
    add(100);

    /* re-initialized without destroy, then alive at exit */
    static pthread_mutex_t reinit;
    pthread_mutex_init(&reinit, NULL);
    add(lock_n(&reinit, 40));
    pthread_mutex_init(&reinit, NULL);
    add(lock_n(&reinit, 60));

    /* copied while counted: both go on counting */
    static pthread_mutex_t original = PTHREAD_MUTEX_INITIALIZER, copy;
    add(lock_n(&original, 30));
    memcpy(&copy, &original, sizeof copy);
    add(lock_n(&copy, 20));
    add(lock_n(&original, 10));

    /* condition waits re-acquire a never-contended mutex inside glibc */
    static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&cond_lock);
    for (int i = 0; i < 3; i++) {
        struct timespec soon;
        clock_gettime(CLOCK_REALTIME, &soon);
        soon.tv_nsec += 1000 * 1000;
        if (soon.tv_nsec >= 1000 * 1000 * 1000) {
            soon.tv_sec++;
            soon.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait(&cond, &cond_lock, &soon); /* times out: re-acquired */
    }
    pthread_mutex_unlock(&cond_lock);
    add(1 + 3);

    /* counted alone, then contended: the record has every acquisition */
    static pthread_mutex_t live_contended = PTHREAD_MUTEX_INITIALIZER;
    n = contended(&live_contended, 2000);
    add(n);
    printf("record %lu %ld\n", (unsigned long)(uintptr_t)&live_contended, n);
    pthread_mutex_t *gone_contended = malloc(sizeof *gone_contended);
    pthread_mutex_init(gone_contended, NULL);
    n = contended(gone_contended, 1500);
    add(n);
    printf("record %lu %ld\n", (unsigned long)(uintptr_t)gone_contended, n);
    pthread_mutex_destroy(gone_contended);
    free(gone_contended);

    /* a fork child locks a mutex its parent counted (alive_plain) */
    fflush(stdout);
    pid_t pid = fork();
    if (pid ==
        0) { /* alone, then from a thread (a child with no thread of its own writes no profile) */
        lock_n(&alive_plain, 100);
        if (pthread_create(&t, NULL, use_in_child, NULL) != 0)
            exit(1);
        pthread_join(t, NULL);
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child 250\n");

    pthread_mutex_lock(&total_lock);
    long final = total + 1;
    pthread_mutex_unlock(&total_lock);
    printf("total %ld\n", final);
    printf("pid %d\n", (int)getpid());
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
