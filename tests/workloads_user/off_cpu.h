/* A span's time off CPU that a call timed within it may not see: a
 * thread the machine keeps off its CPU between the span's first clock
 * read and the call, or between the call's return and the span's last
 * read. Bounded by the run delay (schedstat: time runnable but not
 * running) over the span, counted only where the thread was preempted (an
 * involuntary context switch) in one of those two gaps: a preemption
 * inside the call, or a waiter woken and waiting for a CPU, lies inside
 * the call, which lockblame times. Take the probe just before the span's
 * first clock read (off_cpu_probe_start), mark the call's start and end
 * (off_cpu_call_begins, off_cpu_call_ended: a getrusage each) and read it
 * after the span's last clock read (off_cpu_since). Reads /proc and
 * getrusage: for workloads' logs, never a profiled path. */
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
    long preempted; /* at the probe */
    double delay;
    long at_call, after_call; /* preemptions when the call began and ended */
};

static inline struct off_cpu_probe off_cpu_probe_start(void)
{
    long now = off_cpu_preemptions();
    return (struct off_cpu_probe){ now, off_cpu_run_delay_s(), now, now };
}

/* Just before the call (after the span's first clock read). */
static inline void off_cpu_call_begins(struct off_cpu_probe *probe)
{
    probe->at_call = off_cpu_preemptions();
}

/* Just after the call returned (before the span's last clock read). */
static inline void off_cpu_call_ended(struct off_cpu_probe *probe)
{
    probe->after_call = off_cpu_preemptions();
}

/* The span's time off CPU since the probe, 0 where it was not preempted
 * outside the call. */
static inline double off_cpu_since(struct off_cpu_probe probe)
{
    bool in_gaps = probe.at_call != probe.preempted || off_cpu_preemptions() != probe.after_call;
    return in_gaps ? off_cpu_run_delay_s() - probe.delay : 0;
}
#endif
