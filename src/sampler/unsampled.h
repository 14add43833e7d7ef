/* Unsampled CPU time, credited to the thread's start routine (see
 * unsampled.c for the rule and its invariants). Internal to src/sampler. */
#ifndef LB_SAMPLER_UNSAMPLED_H
#define LB_SAMPLER_UNSAMPLED_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/thread.h"

typedef enum lb_unsampled_reason {
    LB_UNSAMPLED_BLOCKED = 1,  /* the thread blocks the sampling signal */
    LB_UNSAMPLED_NO_EVENT = 2, /* no event could be started for it */
} lb_unsampled_reason;

/* The marker frame's function: its address is the credited node's pc. */
void lockblame_unsampled_cpu(void);
/* On the thread itself, with its CCT free to write (busy held, or not
 * inside lockblame): make the credit node now (once). Async-signal-safe. */
void lb_unsampled_prepare(lb_thread_t *self);
/* On the thread itself: an unsampled interval begins / ends (idempotent). */
void lb_unsampled_begin(lb_thread_t *self, lb_unsampled_reason why);
void lb_unsampled_end(lb_thread_t *self);
/* On the thread itself: ns of CPU time that was sampled but not recorded
 * (signals discarded when it paused) join the unsampled time. */
void lb_unsampled_add(lb_thread_t *self, uint64_t ns);
/* The final credit of t (once; later calls return 0), with cpu_now its
 * CPU clock now (as read: the residue leaves out t->cpu_base_ns): closes
 * an open interval, adds the residue no sample saw
 * (time events, above a tick's worth), and adds the total, in samples, to
 * t's credit node; unsampled_ns keeps the total. may_insert: the caller
 * runs on t (or t has exited), so the node may be created now; otherwise
 * only a node made earlier is credited. Returns the nanoseconds credited. */
uint64_t lb_unsampled_credit(lb_thread_t *t, uint64_t cpu_now, bool may_insert);
/* CPU time of thread tid of this process, 0 if unreadable. */
uint64_t lb_unsampled_cpu_of(pid_t tid);
/* t's CPU time since this image began to track it: its clock (read through
 * its kernel tid, lb_thread_os_tid) less t->cpu_base_ns; 0 if unreadable. */
uint64_t lb_unsampled_cpu_used(const lb_thread_t *t);
#endif
