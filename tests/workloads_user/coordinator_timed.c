/*
 * coordinator_timed: the initial thread waits for its workers' results
 * with timed waits, as xz's main thread waits for compressed blocks
 * (300 ms timeouts): each wait runs out of time until a worker signals
 * that its result is ready, and main exits right after the last. Its
 * waiting is the workers' time, blamed on their signal (DESIGN.md rule
 * 3), not a thread parked until shutdown (rule 6).
 *
 * Worker i computes (i + 1) * WORK_MS and signals; main waits with
 * TIMEOUT_MS timed waits. Prints "main_waited_s S".
 *
 * Usage: coordinator_timed
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum { WORKERS = 2, WORK_MS = 150, TIMEOUT_MS = 10 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int results;
static volatile uint64_t sink;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void result_ready(void)
{
    pthread_mutex_lock(&lock);
    results++;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    int64_t until = now_ns() + ((intptr_t)arg + 1) * (int64_t)WORK_MS * 1000000;
    while (now_ns() < until)
        sink++;
    result_ready();
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    int64_t t0 = now_ns();
    pthread_mutex_lock(&lock);
    while (results < WORKERS) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TIMEOUT_MS * 1000000L;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&ready, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    printf("main_waited_s %.6f\n", (double)(now_ns() - t0) / 1e9);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
