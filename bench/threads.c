/* Thread creation cost: native vs under lockblame.
 *
 *   threads N BATCH   creates N threads in batches of BATCH alive at once
 *                     (each returns at once), joining every batch before
 *                     the next; prints
 *                       create_us   wall microseconds per create + join
 *                       threads     N
 *
 * The figure is timed inside the program, so the profile's final write
 * is not part of it. */
#include <pthread.h>

#include "bench.h"

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    long batch = argc > 2 ? atol(argv[2]) : 1;
    if (n < 1 || batch < 1 || batch > n)
        return 2;
    pthread_t *t = calloc((size_t)batch, sizeof *t);
    if (!t)
        return 1;
    long long t0 = bench_now_ns();
    for (long done = 0; done < n; done += batch) {
        long k = n - done < batch ? n - done : batch;
        for (long i = 0; i < k; i++)
            if (pthread_create(&t[i], NULL, nothing, NULL) != 0)
                return 1;
        for (long i = 0; i < k; i++)
            pthread_join(t[i], NULL);
    }
    long long t1 = bench_now_ns();
    printf("create_us %.3f\nthreads %ld\n", (double)(t1 - t0) / 1e3 / (double)n, n);
    return 0;
}
