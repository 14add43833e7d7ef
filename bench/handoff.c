/* Contended hand-off: THREADS threads hammer one mutex (or, with "spin",
 * one spin lock) with a tiny critical section for SECONDS; throughput =
 * total acquisitions / elapsed time.
 *
 *   handoff THREADS SECONDS [spin]
 *                             -> "ops_per_s X", "elapsed_s Y" and
 *                                "handoff_rate H": the fraction of successive
 *                                acquisitions made by a different thread than
 *                                the previous one (counted inside the lock),
 *                                "handoffs_per_s": those acquisitions a second,
 *                                "sleeps_per_kacq": threads blocking per 1000
 *                                acquisitions (bench.h) */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static int use_spin;
static uint64_t counter;
static uint64_t switches; /* acquisitions by another thread than the last */
static uintptr_t last_owner;
static int stop;

static void *worker(void *arg)
{
    uint64_t mine = 0;
    uintptr_t me = (uintptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        if (use_spin)
            pthread_spin_lock(&spin);
        else
            pthread_mutex_lock(&lock);
        counter++;
        switches += last_owner != me;
        last_owner = me;
        if (use_spin)
            pthread_spin_unlock(&spin);
        else
            pthread_mutex_unlock(&lock);
        mine++;
    }
    return (void *)(uintptr_t)mine;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "spin") != 0)) {
        fprintf(stderr, "usage: %s THREADS SECONDS [spin]\n", argv[0]);
        return 2;
    }
    int nthreads = atoi(argv[1]);
    double seconds = atof(argv[2]);
    if (nthreads < 1 || nthreads > 256 || seconds <= 0)
        return 2;
    use_spin = argc == 4;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_t tids[256];
    long long t0 = bench_now_ns();
    for (int i = 0; i < nthreads; i++)
        pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    usleep((useconds_t)(seconds * 1e6));
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    uint64_t sum = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        pthread_join(tids[i], &r);
        sum += (uintptr_t)r;
    }
    long long t1 = bench_now_ns();
    if (sum != counter) {
        fprintf(stderr, "handoff: lost updates\n");
        return 1;
    }
    double s = (double)(t1 - t0) / 1e9;
    printf("ops_per_s %.0f\n", (double)counter / s);
    printf("elapsed_s %.6f\n", s);
    printf("handoff_rate %.4f\n", counter ? (double)switches / (double)counter : 0);
    printf("handoffs_per_s %.0f\n", (double)switches / s);
    bench_print_sleeps((double)counter);
    return 0;
}
