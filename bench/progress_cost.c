/* What one counted call of a `whatif --progress` function costs: the same
 * empty function called N times without, then with, the hardware
 * breakpoint that counts it (core/whatif_progress.c), or the uprobe that
 * does where breakpoints do not count. Each hit is a debug exception (or a
 * uprobe's trap and out-of-line step) taken in the kernel and returned
 * from.
 *
 *   progress_cost N -> "ns_per_call X" (no breakpoint), "ns_per_hit Y"
 *                      (with one, less X), "counted C" (of N) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/whatif_progress.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void progress_point(void)
{
    __asm__ volatile("" ::: "memory");
}

static double per_call(long n)
{
    long long t = now_ns();
    for (long i = 0; i < n; i++)
        progress_point();
    return (double)(now_ns() - t) / (double)n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    double plain = per_call(n);
    if (!lb_progress_setup((uintptr_t)progress_point)) {
        perror("progress_cost: perf_event_open (breakpoint)");
        return 0; /* a bench never fails */
    }
    lb_progress_thread_start();
    double hit = per_call(n);
    printf("ns_per_call %.1f\nns_per_hit %.1f\ncounted %lld\n", plain, hit - plain,
           lb_progress_calls());
    return 0;
}
