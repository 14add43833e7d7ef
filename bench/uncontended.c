/* Uncontended lock/unlock pairs on one thread.
 *
 *   uncontended mutex|spin|mutex-mt|mutex-once|sem N     -> "ns_per_pair X"
 *
 * mutex-mt first starts and joins one thread: glibc then stops using its
 * single-threaded (non-atomic) lock path, as in any threaded program, so
 * this is the pair that programs worth profiling actually pay.
 * mutex-once is mutex-mt on a mutex that was contended once before (a
 * thread waited on it for a few ms): under lockblame it has an lb_mon
 * then, as most locks of a program that contends somewhere do.
 * sem is a semaphore's post then wait, which never blocks: what a
 * semaphore used as a counter pays (its wait reads the clock at entry).
 *
 * A warm-up of N/10 pairs comes first (it converts the lock to a monitored
 * one under lockblame), then N timed pairs. For instruction counts the
 * runner runs this under callgrind with N and 2N and divides the
 * difference by N, so start-up and exit costs cancel. */
#include <pthread.h>
#include <semaphore.h>

#include "bench.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;

__attribute__((noinline)) static void mutex_pairs(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&mutex);
        pthread_mutex_unlock(&mutex);
    }
}

__attribute__((noinline)) static void spin_pairs(long n)
{
    for (long i = 0; i < n; i++) {
        pthread_spin_lock(&spin);
        pthread_spin_unlock(&spin);
    }
}

static sem_t sem;

__attribute__((noinline)) static void sem_pairs(long n)
{
    for (long i = 0; i < n; i++) {
        sem_post(&sem);
        sem_wait(&sem);
    }
}

static void *idle_thread(void *arg)
{
    return arg;
}

static void *waiting_thread(void *arg)
{
    pthread_mutex_lock(&mutex);
    pthread_mutex_unlock(&mutex);
    return arg;
}

/* One thread waits on `mutex` while main holds it for 20 ms. */
static int contend_once(void)
{
    pthread_t t;
    pthread_mutex_lock(&mutex);
    if (pthread_create(&t, NULL, waiting_thread, NULL) != 0)
        return -1;
    struct timespec hold = { 0, 20 * 1000 * 1000 };
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&mutex);
    return pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[1], "mutex") && strcmp(argv[1], "spin") && strcmp(argv[1], "mutex-mt") &&
         strcmp(argv[1], "mutex-once") && strcmp(argv[1], "sem"))) {
        fprintf(stderr, "usage: %s mutex|spin|mutex-mt|mutex-once|sem N\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    void (*pairs)(long) = strcmp(argv[1], "spin") == 0  ? spin_pairs
                          : strcmp(argv[1], "sem") == 0 ? sem_pairs
                                                        : mutex_pairs;
    sem_init(&sem, 0, 0);
    if (strcmp(argv[1], "mutex-mt") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    if (strcmp(argv[1], "mutex-once") == 0 && contend_once() != 0)
        return 1;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pairs(n / 10 + 1);
    long long t0 = bench_now_ns();
    pairs(n);
    long long t1 = bench_now_ns();
    printf("ns_per_pair %.3f\n", (double)(t1 - t0) / (double)n);
    return 0;
}
