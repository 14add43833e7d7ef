/* The calling thread's CPU time, and CPU work to spend it on: the ground
 * truth of the workloads that check how much CPU time lockblame
 * attributes (sampled, or credited as unsampled). */
#ifndef THREAD_CPU_H
#define THREAD_CPU_H
#include <time.h>

/* The calling thread's CPU time so far, in seconds. */
static inline double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `rounds` rounds of a xorshift on *x: work with no memory traffic. */
static inline void xorshift_rounds(unsigned long *x, int rounds)
{
    unsigned long v = *x;
    for (int i = 0; i < rounds; i++) {
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
    }
    *x = v;
}
#endif
