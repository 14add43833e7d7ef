/* Helpers shared by the benchmark programs (header-only, no lockblame). */
#ifndef BENCH_H
#define BENCH_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline long long bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A field of /proc/self/status in kB (VmRSS, VmHWM), or -1. */
static inline long bench_status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Prints "sleeps_per_kacq X": the process's voluntary context switches
 * (a thread blocking: a futex wait, a join, a sleep; not a sched_yield)
 * per 1000 of the program's acquisitions. Under contention most are lock
 * and condition waits: a profiler that lengthens holds or delays a
 * waiter's first atomic can make threads block more often, and on a
 * large or virtual machine each block and wake costs microseconds. */
static inline void bench_print_sleeps(double acquisitions)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0 && acquisitions > 0)
        printf("sleeps_per_kacq %.3f\n", 1000.0 * (double)ru.ru_nvcsw / acquisitions);
}
#endif
