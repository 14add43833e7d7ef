/* A thread's run delay: the time it was runnable but waiting for a CPU,
 * as the kernel's scheduler statistics count it (/proc/.../schedstat,
 * second field, nanoseconds). Off-CPU time that is neither a wait
 * lockblame saw nor run delay is the "unseen" time of docs/SCHEMA.md's
 * thread.unseen_s. No locks, no malloc; one short-lived descriptor. */
#ifndef LB_UTIL_RUN_DELAY_H
#define LB_UTIL_RUN_DELAY_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Unseen time below which a thread's run delay is not read (1 ms): the
 * delay could only lower it. An exiting thread compares its off-CPU
 * time (lifetime less CPU time: core/thread.c), the write a live
 * thread's unseen time without the delay (report/writer/tables.c). */
#define LB_RUN_DELAY_MIN_UNSEEN_NS 1000000ull

/* The run delay of thread tid of this process (0: the calling thread,
 * read at /proc/TID, which leaves no entry below /proc/PID: run_delay.c)
 * into *ns. Returns false, *ns untouched, when the kernel does not say
 * (no schedstat: CONFIG_SCHED_INFO off, /proc not mounted, the thread
 * gone). errno may change. */
bool lb_run_delay_ns(pid_t tid, uint64_t *ns);

#endif
