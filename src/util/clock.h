/* Monotonic nanoseconds. Only contended paths call this (vDSO, ~20 ns). */
#ifndef LB_CLOCK_H
#define LB_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t lb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t lb_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
