/*
 * gt_counts: exact operation counts, where they happen (docs/DESIGN.md "Metrics"),
 * built -O2 -g.
 *
 * rwlock phase: READERS readers and one writer each take `rw` a counted
 * number of times until the deadline (readers hold 20 us, the writer 300
 * us), so some acquisitions wait and most do not. The lock calls are made
 * in reader_lock_site() / writer_lock_site().
 * sem phase: main posts PRE times before the consumer starts, so its first
 * PRE sem_waits do not wait; then it waits SLOW more times for posts main
 * makes 2 ms apart (each of those waits, except by chance, blocks). The
 * sem_wait call is in sem_wait_site().
 *
 * Truth (JSON): rw_acquisitions, sem_acquisitions, sem_slow_waits (an
 * upper bound on contended sem acquisitions), and the objects' addresses.
 *
 * Usage: gt_counts [DURATION_MS]   (default 600)
 */
#include <semaphore.h>

#include "gt.h"

#define READERS 2
#define PRE     100
#define SLOW    40

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static int64_t deadline;
static long counts[READERS + 1];

static __attribute__((noinline)) void reader_lock_site(void)
{
    pthread_rwlock_rdlock(&rw);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void writer_lock_site(void)
{
    pthread_rwlock_wrlock(&rw);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void sem_wait_site(void)
{
    while (sem_wait(&sem) != 0)
        ;
    __asm__ volatile("" ::: "memory");
}

static void *rw_thread(void *arg)
{
    int me = (int)(intptr_t)arg;
    gt_gate_arrive();
    while (gt_now() < deadline) {
        if (me == READERS) {
            writer_lock_site();
            gt_spin_until(gt_now() + 300000);
        } else {
            reader_lock_site();
            gt_spin_until(gt_now() + 20000);
        }
        counts[me]++;
        pthread_rwlock_unlock(&rw);
        gt_sleep_until(gt_now() + (me == READERS ? 500000 : 50000));
    }
    return NULL;
}

static void *consumer(void *arg)
{
    for (int i = 0; i < PRE + SLOW; i++)
        sem_wait_site();
    return arg;
}

int main(int argc, char **argv)
{
    int ms = argc > 1 ? atoi(argv[1]) : 600;
    if (ms < 1) {
        fprintf(stderr, "usage: %s [DURATION_MS]\n", argv[0]);
        return 2;
    }
    pthread_t t[READERS + 1];
    for (int i = 0; i <= READERS; i++)
        if (pthread_create(&t[i], NULL, rw_thread, (void *)(intptr_t)i))
            gt_die("pthread_create", EAGAIN);
    gt_gate_open(READERS + 1, &deadline, (int64_t)ms * 1000000);
    for (int i = 0; i <= READERS; i++)
        pthread_join(t[i], NULL);
    long rw_acq = 0;
    for (int i = 0; i <= READERS; i++)
        rw_acq += counts[i];

    sem_init(&sem, 0, 0);
    for (int i = 0; i < PRE; i++)
        sem_post(&sem);
    pthread_t c;
    if (pthread_create(&c, NULL, consumer, NULL))
        gt_die("pthread_create", EAGAIN);
    gt_sleep_until(gt_now() + 50000000); /* the consumer takes the PRE posts */
    for (int i = 0; i < SLOW; i++) {
        gt_sleep_until(gt_now() + 2000000);
        sem_post(&sem);
    }
    pthread_join(c, NULL);

    FILE *out = stdout;
    const char *gt = getenv("GROUND_TRUTH");
    if (gt && *gt && !(out = fopen(gt, "w")))
        gt_die(gt, errno);
    fprintf(out,
            "{\"workload\": \"gt_counts\", \"rwlock_address\": %llu, \"sem_address\": %llu,"
            " \"rw_acquisitions\": %ld, \"sem_acquisitions\": %d, \"sem_slow_waits\": %d}\n",
            (unsigned long long)(uintptr_t)&rw, (unsigned long long)(uintptr_t)&sem, rw_acq,
            PRE + SLOW, SLOW);
    if (out != stdout)
        fclose(out);
    return 0;
}
