/* The ground-truth workloads' clock: CLOCK_MONOTONIC in ns, a thread's
 * CPU time, and busy work until a time. Plain C that C++ compiles too (gt.h is C only), so the C
 * and C++ workloads read one clock. */
#ifndef GT_CLOCK_H
#define GT_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline int64_t gt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The calling thread's CPU time in ns (user and kernel). */
static inline int64_t gt_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What one gt_thread_cpu_ns costs in CPU time (a system call: ~0.5 us on
 * a VM), the median of the differences between back-to-back reads. A
 * span timed by two reads misses the first read's part before its sample
 * and the second's after it: about one read, which a span that must
 * cover everything between two points (a critical section, as the
 * holder's CPU samples see it) adds back. */
static inline int64_t gt_thread_cpu_read_ns(void)
{
    enum {
        READS = 255
    };
    int64_t step[READS], last = gt_thread_cpu_ns();
    for (int i = 0; i < READS; i++) {
        int64_t t = gt_thread_cpu_ns();
        step[i] = t - last;
        last = t;
    }
    for (int i = 1; i < READS; i++) /* insertion sort: 255 values */
        for (int j = i; j > 0 && step[j - 1] > step[j]; j--) {
            int64_t swap = step[j];
            step[j] = step[j - 1];
            step[j - 1] = swap;
        }
    return step[READS / 2];
}

/* Busy work: stays on the CPU until t. */
static inline void gt_spin_until(int64_t t)
{
    while (gt_now() < t)
        ;
}

/* The same clock in seconds, for workloads that log their truth in seconds. */
static inline double gt_now_s(void)
{
    return (double)gt_now() * 1e-9;
}

/* Busy work for ns nanoseconds. */
static inline void gt_spin_ns(int64_t ns)
{
    gt_spin_until(gt_now() + ns);
}

/* CPU work: ns of it, in 2 us slices of wall time, so that a thread that
 * is descheduled or sleeps makes no progress, as with real computation
 * (a slice it is descheduled in counts 2 us whatever its length). */
static inline void gt_work(int64_t ns)
{
    for (int64_t done = 0; done < ns; done += 2000)
        gt_spin_ns(2000);
}
#endif
