/*
 * coordinator_timed: the initial thread waits for its workers' results
 * with timed waits, as xz's main thread waits for compressed blocks
 * (300 ms timeouts): each wait runs out of time until a worker signals
 * that its result is ready, and main exits right after the last. Its
 * waiting is the workers' time: the waits that ran out are unattributed
 * (docs/DESIGN.md rule 3: ended by no signal), the rest blamed on their
 * signal; it is not a thread parked until shutdown (rule 6).
 *
 * Worker i computes (i + 1) * WORK_MS and signals; main waits with
 * TIMEOUT_MS timed waits. Prints "main_waited_s S".
 *
 * Usage: coordinator_timed
 */
#include "gt.h"

enum {
    WORKERS = 2,
    WORK_MS = 150,
    TIMEOUT_MS = 10
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int results;

__attribute__((noinline)) static void result_ready(void)
{
    pthread_mutex_lock(&lock);
    results++;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    gt_spin_until(gt_now() + ((intptr_t)arg + 1) * (int64_t)WORK_MS * 1000000);
    result_ready();
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    int64_t t0 = gt_now();
    pthread_mutex_lock(&lock);
    while (results < WORKERS) {
        struct timespec until = gt_realtime_in((int64_t)TIMEOUT_MS * 1000000);
        pthread_cond_timedwait(&ready, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    printf("main_waited_s %.6f\n", (double)(gt_now() - t0) / 1e9);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
