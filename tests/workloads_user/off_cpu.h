/* A span's time off CPU that a call timed within it may not see: a
 * thread the machine keeps off its CPU between the span's first clock
 * read and the call, or between the call's return and the span's last
 * read. Bounded by the run delay (schedstat: time runnable but not
 * running) over the span, counted only where the thread was preempted in
 * it (an involuntary context switch): a waiter woken and waiting for a
 * CPU was not running then, and that wait lies inside the call too.
 * Take the probe just before the span's first clock read
 * (off_cpu_probe_start) and read it after its last (off_cpu_since).
 * Reads /proc and getrusage: for workloads' logs, never a profiled path. */
#ifndef OFF_CPU_H
#define OFF_CPU_H
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>

/* The calling thread's run delay so far, in seconds (0 if unknown). */
static inline double off_cpu_run_delay_s(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long on_cpu, delay;
    bool read = f && fscanf(f, "%llu %llu", &on_cpu, &delay) == 2;
    if (f)
        fclose(f);
    return read ? (double)delay / 1e9 : 0;
}

/* The calling thread's involuntary context switches so far. */
static inline long off_cpu_preemptions(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

struct off_cpu_probe {
    long preempted;
    double delay;
};

static inline struct off_cpu_probe off_cpu_probe_start(void)
{
    return (struct off_cpu_probe){ off_cpu_preemptions(), off_cpu_run_delay_s() };
}

/* The span's time off CPU since the probe, 0 where it was not preempted. */
static inline double off_cpu_since(struct off_cpu_probe probe)
{
    return off_cpu_preemptions() != probe.preempted ? off_cpu_run_delay_s() - probe.delay : 0;
}
#endif
