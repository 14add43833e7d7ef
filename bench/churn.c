/* Lock churn: TOTAL mutexes initialised, locked and unlocked once, and
 * destroyed, cycling through an array of LIVE slots, so at most LIVE are
 * live at once. With "reuse" the slot is re-initialised without a destroy
 * (the lock's memory reused), the case lockblame must also reclaim.
 *
 *   churn TOTAL LIVE [destroy|reuse]
 *     -> elapsed_s, and VmRSS (kB): rss_base (array touched, no lock used
 *        yet), rss_live (all LIVE slots used once), rss_end, hwm_end */
#include <pthread.h>
#include <sys/mman.h>

#include "bench.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TOTAL LIVE [destroy|reuse]\n", argv[0]);
        return 2;
    }
    long total = atol(argv[1]);
    long live = atol(argv[2]);
    int reuse = argc > 3 && strcmp(argv[3], "reuse") == 0;
    if (live < 1 || total < live)
        return 2;
    pthread_mutex_t *a = mmap(NULL, sizeof *a * (size_t)live, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return 1;
    memset(a, 0, sizeof *a * (size_t)live);
    long rss_base = bench_status_kb("VmRSS");

    long long t0 = bench_now_ns();
    for (long i = 0; i < live; i++) {
        pthread_mutex_init(&a[i], NULL);
        pthread_mutex_lock(&a[i]);
        pthread_mutex_unlock(&a[i]);
    }
    long long t1 = bench_now_ns();
    long rss_live = bench_status_kb("VmRSS");
    long long t2 = bench_now_ns();
    long i = 0;
    for (long j = live; j < total; j++) {
        if (!reuse)
            pthread_mutex_destroy(&a[i]);
        pthread_mutex_init(&a[i], NULL);
        pthread_mutex_lock(&a[i]);
        pthread_mutex_unlock(&a[i]);
        if (++i == live)
            i = 0;
    }
    for (long k = 0; k < live; k++)
        pthread_mutex_destroy(&a[k]);
    long long t3 = bench_now_ns();
    printf("elapsed_s %.6f\n", (double)((t1 - t0) + (t3 - t2)) / 1e9);
    printf("rss_base %ld\n", rss_base);
    printf("rss_live %ld\n", rss_live);
    printf("rss_end %ld\n", bench_status_kb("VmRSS"));
    printf("hwm_end %ld\n", bench_status_kb("VmHWM"));
    return 0;
}
