/* Contended task queue: one producer and WORKERS workers share a bounded
 * FIFO under ONE mutex with two condition variables (not empty, not full).
 * Every task costs one lock round trip: the producer pushes one task per
 * acquisition, each worker pops one task per acquisition and does a little
 * work on it outside the lock. The shape of thread pools and servers that
 * hand work between threads.
 *
 *   taskq WORKERS TASKS [WORK]
 *     WORK: xorshift rounds per task outside the lock (default 50)
 *     -> "elapsed_s X", "cpu_s C", "tasks_per_s T",
 *        "handoff_rate H": the fraction of successive acquisitions of the
 *        queue lock (as the program sees them: one per critical section)
 *        made by a different thread than the previous one,
 *        "handoffs_per_s": those acquisitions a second,
 *        "checksum S" (independent of scheduling),
 *        "empty_waits_per_ktask E", "full_waits_per_ktask F": waits on
 *        "not empty" by the workers and on "not full" by the producer, per
 *        1000 tasks (counted under the lock; the rest of the sleeps are
 *        on the mutex),
 *        "sleeps_per_kacq Z": threads blocking per 1000 critical sections
 *        (bench.h)
 *
 * Time runs from the first pthread_create to the last join. Built -O2 like
 * a user's program (bench.mak). */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench.h"

enum {
    QCAP = 256,
    MAX_WORKERS = 64
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t nonempty, nonfull;
    uint64_t ring[QCAP];
    unsigned head, count;
    int done;              /* producer finished */
    int last_owner;        /* thread of the previous critical section */
    uint64_t acquisitions; /* critical sections */
    uint64_t handoffs;     /* ... whose thread differs from the previous one */
    uint64_t empty_waits;  /* workers' waits on "not empty" */
    uint64_t full_waits;   /* the producer's waits on "not full" */
} q = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .nonempty = PTHREAD_COND_INITIALIZER,
    .nonfull = PTHREAD_COND_INITIALIZER,
    .last_owner = -1,
};

static long tasks;
static long work = 50;

/* Caller holds q.lock: count this critical section for the hand-off rate. */
static inline void note_owner(int me)
{
    q.handoffs += q.last_owner != me;
    q.last_owner = me;
    q.acquisitions++;
}

static void *producer(void *arg)
{
    for (long i = 0; i < tasks; i++) {
        pthread_mutex_lock(&q.lock);
        while (q.count == QCAP) {
            q.full_waits++;
            pthread_cond_wait(&q.nonfull, &q.lock);
        }
        note_owner(0);
        q.ring[(q.head + q.count++) % QCAP] = (uint64_t)i * 0x9E3779B97F4A7C15ull + 1;
        pthread_cond_signal(&q.nonempty);
        pthread_mutex_unlock(&q.lock);
    }
    pthread_mutex_lock(&q.lock);
    q.done = 1;
    pthread_cond_broadcast(&q.nonempty);
    pthread_mutex_unlock(&q.lock);
    return NULL;
}

static void *worker(void *arg)
{
    int me = (int)(uintptr_t)arg;
    uint64_t sum = 0;
    for (;;) {
        pthread_mutex_lock(&q.lock);
        while (q.count == 0 && !q.done) {
            q.empty_waits++;
            pthread_cond_wait(&q.nonempty, &q.lock);
        }
        if (q.count == 0) {
            pthread_mutex_unlock(&q.lock);
            break;
        }
        note_owner(me);
        uint64_t x = q.ring[q.head];
        q.head = (q.head + 1) % QCAP;
        q.count--;
        pthread_cond_signal(&q.nonfull);
        pthread_mutex_unlock(&q.lock);
        for (long k = 0; k < work; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        sum += x;
    }
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s WORKERS TASKS [WORK]\n", argv[0]);
        return 2;
    }
    int nworkers = atoi(argv[1]);
    tasks = atol(argv[2]);
    if (argc == 4)
        work = atol(argv[3]);
    if (nworkers < 1 || nworkers > MAX_WORKERS || tasks < 1 || work < 0)
        return 2;
    pthread_t prod, tids[MAX_WORKERS];
    long long t0 = bench_now_ns();
    for (int i = 0; i < nworkers; i++)
        pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    pthread_create(&prod, NULL, producer, NULL);
    pthread_join(prod, NULL);
    uint64_t checksum = 0;
    for (int i = 0; i < nworkers; i++) {
        void *r;
        pthread_join(tids[i], &r);
        checksum += (uintptr_t)r;
    }
    long long t1 = bench_now_ns();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double s = (double)(t1 - t0) / 1e9;
    printf("elapsed_s %.6f\n", s);
    printf("cpu_s %.6f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                               ru.ru_stime.tv_usec / 1e6);
    printf("tasks_per_s %.0f\n", (double)tasks / s);
    printf("handoff_rate %.4f\n", q.acquisitions ? (double)q.handoffs / (double)q.acquisitions : 0);
    printf("handoffs_per_s %.0f\n", (double)q.handoffs / s);
    printf("checksum %llu\n", (unsigned long long)checksum);
    printf("empty_waits_per_ktask %.3f\n", (double)q.empty_waits * 1000.0 / (double)tasks);
    printf("full_waits_per_ktask %.3f\n", (double)q.full_waits * 1000.0 / (double)tasks);
    bench_print_sleeps((double)q.acquisitions);
    return 0;
}
