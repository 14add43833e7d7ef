/* A hot cond wait's end, finished after the thread next releases the
 * cond's mutex instead of inside its hold.
 *
 * Why: a cond wait returns holding the mutex (glibc re-took it), and
 * everything the wrapper does before returning lengthens that hold. On 16
 * cores the cond wait's bookkeeping inside the holds was the largest part
 * of a task queue's slowdown (docs/PERFORMANCE.md, "Scaling to 16 cores":
 * 1.46x -> 1.16x at 8 workers without it). The end of a wait on a hot cond
 * (signal_waits.h) needs nothing inside the hold but its time: its shard
 * update (two locked instructions), its note and its context's wait time
 * can all be done once the program has let the mutex go.
 *
 * What stays inside the hold: the end time (lb_now_ns), the thread's
 * waiting state (lb_waiting_end: its samples are work again), and the
 * mutex's re-acquisition (lb_mutex_acquired_inside).
 *
 * Exactness: the shard still counts the thread as waiting until the
 * deferred part runs, with its exact start and end times, so the
 * integral I(t) is exact again afterwards; only a measured signal on the
 * same cond in between would read it as still waiting. A signaller that
 * holds the cond's mutex (the usual way) cannot run in between: the
 * deferred part runs right after the waiter's release of that mutex. One
 * signalling without the mutex may overcount by at most the waiter's
 * hold (the time from its wake-up to its release).
 *
 * When the deferred part runs (lb_wait_deferred_flush), at the first of:
 *  - the thread's release of that mutex (the unlock wrapper: the deferred
 *    flag is half of lb_thread.gate, which its fast path tests);
 *  - the thread's next wait of any kind (a join, a barrier, a sampled
 *    mutex's too), or its measured or exact signal;
 *  - the thread's end, a fork (prepare), the final write's quiesce step.
 * A thread still inside such a hold when another thread writes the
 * profile has its wait counted as open until then (wait_note.h).
 *
 * Invariants: the record is the thread's own, written and read only by
 * it; lb_thread.deferred is 1 exactly while the record holds a wait. A
 * fork's prepare step flushes it: a child starts with none. */
#ifndef LB_WAIT_DEFERRED_H
#define LB_WAIT_DEFERRED_H
#include <pthread.h>
#include <stdbool.h>

#include "blame/blame.h"

typedef struct lb_wait_deferred {
    lb_wait_t wait;
    uint64_t ended_ns;
    const pthread_mutex_t *mutex;
} lb_wait_deferred_t;

/* wait just ended inside glibc, which re-took mutex. If it is a hot wait
 * (wait->hot), do only what must happen inside the hold, defer the rest
 * and return its end time; else return 0 (the caller ends it as usual). */
uint64_t lb_wait_end_deferred(lb_thread_t *self, const lb_wait_t *wait,
                              const pthread_mutex_t *mutex);
/* Finish a deferred wait end, if there is one (errno kept). */
void lb_wait_deferred_flush_slow(lb_thread_t *self);
static inline void lb_wait_deferred_flush(lb_thread_t *self)
{
    if (lb_unlikely(self->deferred))
        lb_wait_deferred_flush_slow(self);
}
/* self released (or tried to release) mutex: finish the deferred wait
 * end if it was waiting on that mutex's cond. */
static inline void lb_wait_deferred_released(lb_thread_t *self, const pthread_mutex_t *mutex)
{
    if (self->deferred && self->wait_deferred->mutex == mutex)
        lb_wait_deferred_flush_slow(self);
}
#endif
