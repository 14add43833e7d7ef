/* How much of the CPU this process may run on was left idle between two
 * looks, from /proc/stat's per-CPU lines (each CPU's time in each state
 * since boot, in clock ticks) for the CPUs of its affinity mask (a
 * cpuset cgroup narrows that mask too). `lockblame run`'s merger adds
 * pending profiles early when CPU went unused (report/cli/run_merge.c).
 * Under a CPU quota (a cgroup's cpu.max or cfs_quota_us: a container's
 * --cpus) idle CPUs are not the program's to spare: lb_cpu_quota_limited
 * says so and the merger does not look. Plain functions of their
 * arguments but the readers; no state. */
#ifndef LB_COMMON_IDLE_CPU_H
#define LB_COMMON_IDLE_CPU_H
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct lb_cpu_times {
    uint64_t idle;  /* idle and iowait: time no task wanted the CPU */
    uint64_t total; /* every state (guest time is inside user's) */
    int cpus;       /* CPUs summed */
} lb_cpu_times_t;

/* Parse one line of /proc/stat, "cpu " (all CPUs) or "cpuN " (CPU N:
 * *cpu set to N, -1 for the sum): user nice system idle iowait irq
 * softirq steal [guest guest_nice]; false unless it is one, with at least
 * the first four fields. Steal counts as busy: the hypervisor ran
 * something else there. */
bool lb_cpu_times_parse(const char *line, int *cpu, lb_cpu_times_t *out);
/* The times of the CPUs in `allowed`, summed, from /proc/stat: false
 * where it cannot be read or has none of them. */
bool lb_cpu_times_read(const cpu_set_t *allowed, lb_cpu_times_t *out);
/* The CPUs' worth of idle time between two looks at the same CPUs (0.5:
 * half a CPU on average); 0 where no time passed, a counter went back,
 * or the looks summed different CPUs. */
double lb_cpu_idle_between(const lb_cpu_times_t *before, const lb_cpu_times_t *after);
/* Whether a cgroup of this process (its own or an ancestor, v2's cpu.max
 * or v1's cpu.cfs_quota_us) limits its CPU time: reads a few files. */
bool lb_cpu_quota_limited(void);
/* The same from a /proc/PID/cgroup file at cgroup_file and the cgroup
 * file systems mounted under root (/sys/fs/cgroup). */
bool lb_cpu_quota_limited_in(const char *cgroup_file, const char *root);
#endif
