/* The runtime phase of lockblame in this process, and when it started.
 *
 * Invariants: lb_runtime_phase moves only forward (OFF -> STARTING ->
 * RUNNING -> FINISHED), except in a fork child, which restarts from
 * running. Conversion of native objects happens only while running;
 * objects already monitored keep working in every phase. The start time
 * is stamped once, while STARTING, before anything reads it; the pid
 * then too, and again by a fork child's hooks. */
#ifndef LB_CORE_PHASE_H
#define LB_CORE_PHASE_H
#include <stdbool.h>
#include <sys/types.h>

enum lb_phase {
    LB_PHASE_OFF,
    LB_PHASE_STARTING,
    LB_PHASE_RUNNING,
    LB_PHASE_FINISHED
};
extern int lb_runtime_phase;

static inline bool lb_runtime_monitoring(void)
{
    return __atomic_load_n(&lb_runtime_phase, __ATOMIC_ACQUIRE) == LB_PHASE_RUNNING;
}

/* Record getpid() as the process's, at its start and in a fork child. */
void lb_runtime_stamp_pid(void);
/* getpid() as of the process's start or its fork: the tid of its first
 * thread (no system call; a vfork child's differs). */
pid_t lb_runtime_pid(void);
/* The kernel's start time of process pid, this one (/proc/PID/stat,
 * clock ticks, as lb_proc_start_of reads it), 0 if unknown: the same in
 * every exec'd image of it, so (pid, start) names a process. Read from
 * /proc at most once a process image and kept, not at all in a fork
 * child whose fork lay in one clock tick (util/proc_numbers.h). */
unsigned long long lb_runtime_proc_start(pid_t pid);
/* Record now as the start (monotonic and wall clock). */
void lb_runtime_stamp_start(void);
/* Monotonic ns / Unix time in seconds at the start. */
unsigned long long lb_runtime_start_ns(void);
double lb_runtime_start_unix(void);
#endif
