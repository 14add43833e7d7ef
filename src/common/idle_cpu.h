/* How much CPU the machine left idle between two looks, from the first
 * line of /proc/stat (the sum over CPUs of the time each spent in each
 * state since boot, in clock ticks). `lockblame run`'s merger looks every
 * 100 ms and adds pending profiles as soon as CPU went unused
 * (report/cli/run_merge.c). Plain functions of their arguments but
 * lb_cpu_times_read; no state. */
#ifndef LB_COMMON_IDLE_CPU_H
#define LB_COMMON_IDLE_CPU_H
#include <stdbool.h>
#include <stdint.h>

typedef struct lb_cpu_times {
    uint64_t idle;  /* idle and iowait: time no task wanted the CPU */
    uint64_t total; /* every state (guest time is inside user's) */
} lb_cpu_times_t;

/* Parse /proc/stat's "cpu " line (user nice system idle iowait irq
 * softirq steal [guest guest_nice]): false unless it is one, with at
 * least the first four fields. Steal counts as busy: the hypervisor ran
 * something else there. */
bool lb_cpu_times_parse(const char *line, lb_cpu_times_t *out);
/* Read them from /proc/stat: false where it cannot be read or parsed. */
bool lb_cpu_times_read(lb_cpu_times_t *out);
/* The CPUs' worth of idle time between two looks (0.5: half a CPU on
 * average), cpus CPUs online; 0 where no time passed or a counter went
 * back. */
double lb_cpu_idle_between(const lb_cpu_times_t *before, const lb_cpu_times_t *after, long cpus);
#endif
