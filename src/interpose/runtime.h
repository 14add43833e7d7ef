/* Process-wide lifecycle of lockblame: start (constructor or first use),
 * running, finished (profile written). Also fork and exec handling.
 *
 * Invariants: lb_runtime_phase moves only forward, except in a fork child,
 * which restarts from running with a fresh output name. Conversion of
 * native objects happens only while running; objects already monitored
 * keep working in every phase. */
#ifndef LB_RUNTIME_H
#define LB_RUNTIME_H
#include <stdbool.h>

enum lb_phase { LB_PHASE_OFF, LB_PHASE_STARTING, LB_PHASE_RUNNING, LB_PHASE_FINISHED };
extern int lb_runtime_phase;

static inline bool lb_runtime_monitoring(void)
{
    return __atomic_load_n(&lb_runtime_phase, __ATOMIC_ACQUIRE) == LB_PHASE_RUNNING;
}

/* Start lockblame if it has not started (idempotent, thread-safe). */
void lb_runtime_start(void);
/* Write the profile once; later calls do nothing. reason: "exit", "exec",
 * "signal SIGTERM", ... */
void lb_runtime_finish(const char *reason);
/* Wall time since start, ns. */
unsigned long long lb_runtime_start_ns(void);
double lb_runtime_start_unix(void);
#endif
