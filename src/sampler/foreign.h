/* Threads started by a raw clone(CLONE_VM | CLONE_THREAD | ...), not by
 * pthread_create: the kernel gives them no thread pointer of their own
 * unless the caller passes CLONE_SETTLS, so they run with their creator's
 * thread-local storage (glibc's included: errno, the pthread's tid), and
 * lb_self on such a thread is its creator's record. Acting on it would
 * corrupt the creator's state (its busy count, its CCT, its open wait).
 *
 * Each such thread gets a record of its own, a foreign record
 * (core/thread.h), at its first event on a path that looks
 * (lb_thread_here): the lock wrappers' out-of-line paths and the entry
 * points of the other waits. It is kept in a fixed table keyed by the
 * kernel thread id, with no allocation in the signal handler, which only
 * looks records up (lb_thread_here_in_handler). A record gets its own
 * sampling timer, so its CPU time is sampled into its own CCT.
 *
 * How a thread is told apart, cheaply: the caller's stack pointer lies
 * within the thread-local stack bounds (util/stack_bounds.h) on every
 * thread lockblame saw start; only outside them (a raw clone's stack, or a
 * coroutine stack, a sigaltstack) does it ask the kernel (gettid, a raw
 * system call) whether this is the record's thread. The inline lock fast
 * paths do not look: they count on lb_self, and an uncontended
 * acquisition or release there is the same few instructions as before;
 * where lb_self is busy, the lock's out-of-line path looks (a clone whose
 * creator is inside lockblame waits on its own record).
 *
 * Invariants:
 *  - A slot's os_tid is claimed once (CAS from 0) by the thread of that id
 *    and its record is published after (release); nothing else writes a
 *    slot, and slots are never freed: a kernel thread id the kernel reuses
 *    for a later raw clone finds the earlier thread's record, and its end
 *    is never seen (no exit hook runs on a raw clone).
 *  - A foreign record is never lb_self and never in a thread-local
 *    variable; thread-local caches (the context cache, the lb_mon cache)
 *    are not used on its behalf (lb_stack_here_known is false there, or
 *    the record says foreign).
 *  - A foreign record's end_ns and cpu_ns are written by its own thread's
 *    sampling handler (lb_foreign_sampled) and read after quiesce.
 *  - Events and samples of a foreign thread that has no record (the
 *    table is full, or its first sample came before its first event)
 *    are counted (lb_foreign_unrecorded) and take no blame action. */
#ifndef LB_SAMPLER_FOREIGN_H
#define LB_SAMPLER_FOREIGN_H
#include <stdbool.h>
#include <stdint.h>

#include "core/thread.h"
#include "util/stack_bounds.h"

/* The record of the calling kernel thread, given self = lb_self (not
 * NULL): self itself, or the thread's foreign record, made now when
 * may_attach and it has none. NULL when it has none (counted). */
lb_thread_t *lb_thread_foreign(lb_thread_t *self, bool may_attach);

/* The calling thread's record, given self = lb_self (not NULL), for the
 * out-of-line paths: self on a thread's own known stack (no system
 * call), else lb_thread_foreign. */
static inline lb_thread_t *lb_thread_here(lb_thread_t *self)
{
    if (lb_likely(lb_stack_here_known()))
        return self;
    return lb_thread_foreign(self, true);
}

/* For the out-of-line paths given self = lb_self, monitored (not NULL,
 * not busy): true when self is the calling thread's record (no system
 * call on its own known stack), or *self was replaced by the calling
 * thread's foreign record and that is monitored too; false when the call
 * must go to the real function with no blame action (*self then NULL or
 * busy). */
static inline bool lb_thread_here_monitored(lb_thread_t **self)
{
    if (lb_likely(lb_stack_here_known()))
        return true;
    *self = lb_thread_foreign(*self, true);
    return *self && !(*self)->busy;
}

/* As lb_thread_here, in a signal handler: never makes a record. */
static inline lb_thread_t *lb_thread_here_in_handler(lb_thread_t *self)
{
    if (lb_likely(lb_stack_here_known()))
        return self;
    return lb_thread_foreign(self, false);
}

/* lb_thread_here of lb_self, or NULL when lb_self is NULL. */
static inline lb_thread_t *lb_thread_current(void)
{
    lb_thread_t *self = lb_self;
    return self ? lb_thread_here(self) : NULL;
}

/* t, a foreign record, is sampled on its own thread: its CPU time and
 * the time now, as it stands at its latest sample (end_ns, cpu_ns), since
 * no exit is seen. Async-signal-safe. */
void lb_foreign_sampled(lb_thread_t *t);
/* At the final write, before reading t's clock: t is a foreign record
 * whose thread has ended (its CPU clock cannot be read): it becomes
 * exited, as of its latest sample. Returns whether it did. */
bool lb_foreign_ended(lb_thread_t *t);

/* Events and samples of raw clones that had no record (see above). */
uint64_t lb_foreign_unrecorded(void);
/* Raw clones that have a record. */
uint32_t lb_foreign_threads(void);
#endif
