/* Process-wide lifecycle of lockblame: start (constructor or first use),
 * running, finished (profile written), fork. The phase is core/phase.h;
 * what each layer does at each step is its process hooks (core/hooks.h). */
#ifndef LB_CORE_RUNTIME_H
#define LB_CORE_RUNTIME_H
#include "core/phase.h"

/* Start lockblame if it has not started (idempotent, thread-safe). */
void lb_runtime_start(void);
/* Write the profile once; later calls do nothing. reason: "exit", "exec",
 * "signal SIGTERM", ... Returns whether this call wrote it. */
bool lb_runtime_finish(const char *reason);
/* Another thread is writing the profile (its finish claimed): wait until
 * it is written, so that an _exit does not end the process mid-write. At
 * once on the writing thread itself, and when no finish began. */
void lb_runtime_wait_finished(void);
/* False in a vfork child (or a raw clone), which shares the parent's
 * memory and must leave lockblame's state alone. */
bool lb_runtime_is_own_process(void);
struct lb_thread;
/* The record lb_runtime_start attached for the process's initial thread,
 * or NULL: no start trampoline or adoption destructor ends it, only its
 * pthread_exit (interpose/thread_create.c). A fork child keeps the
 * parent's where the initial thread forked it, else has none (its one
 * thread's record ends in its start trampoline). */
struct lb_thread *lb_runtime_initial_thread(void);
#endif
