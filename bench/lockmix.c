/* Lock-heavy mix: THREADS threads, each doing OPS acquisitions of mutexes
 * picked at random from NLOCKS, with a short critical section (a few
 * increments) and a little work outside it.
 *
 *   lockmix THREADS OPS NLOCKS [WORK]
 *     WORK: rounds of xorshift between acquisitions (default 0: back to
 *     back, a stress far beyond real programs; ~100 gives about 2-3M
 *     acquisitions per second per thread, the rate the overhead target
 *     is stated for)
 *     -> "elapsed_s X", "cpu_s C" (process user+system time so far, less
 *        sensitive than X to other load on the machine) and
 *        "acq_per_s_per_thread Y"
 *
 * The time covers thread creation to the last join. */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench.h"

struct slot {
    pthread_mutex_t m;
    uint64_t count;
    uint64_t sum;
} __attribute__((aligned(64)));

static struct slot *slots;
static long ops;
static unsigned nlocks;
static long work;

static void *worker(void *arg)
{
    uint64_t x = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1);
    uint64_t local = 0;
    for (long i = 0; i < ops; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        struct slot *s = &slots[(x >> 32) % nlocks];
        pthread_mutex_lock(&s->m);
        s->count++;
        s->sum += x & 0xff;
        pthread_mutex_unlock(&s->m);
        local += x & 3;
        for (long k = 0; k < work; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    }
    return (void *)(uintptr_t)local;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s THREADS OPS NLOCKS [WORK]\n", argv[0]);
        return 2;
    }
    int nthreads = atoi(argv[1]);
    ops = atol(argv[2]);
    nlocks = (unsigned)atoi(argv[3]);
    work = argc == 5 ? atol(argv[4]) : 0;
    if (nthreads < 1 || nthreads > 256 || ops < 1 || nlocks < 1)
        return 2;
    slots = aligned_alloc(64, sizeof *slots * nlocks);
    memset(slots, 0, sizeof *slots * nlocks);
    for (unsigned i = 0; i < nlocks; i++)
        pthread_mutex_init(&slots[i].m, NULL);
    pthread_t tids[256];
    long long t0 = bench_now_ns();
    for (int i = 0; i < nthreads; i++)
        pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    long long t1 = bench_now_ns();
    uint64_t total = 0;
    for (unsigned i = 0; i < nlocks; i++) {
        total += slots[i].count;
        pthread_mutex_destroy(&slots[i].m);
    }
    if (total != (uint64_t)ops * (uint64_t)nthreads) {
        fprintf(stderr, "lockmix: lost updates: %llu\n", (unsigned long long)total);
        return 1;
    }
    double s = (double)(t1 - t0) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("elapsed_s %.6f\n", s);
    printf("cpu_s %.6f\n", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    printf("acq_per_s_per_thread %.0f\n", (double)ops / s);
    return 0;
}
