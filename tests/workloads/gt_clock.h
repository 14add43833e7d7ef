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
