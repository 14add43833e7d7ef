/* Deferred ends of hot cond waits (contract and invariants in
 * wait_deferred.h). */
#include "blame/wait_deferred.h"

#include <errno.h>

#include "core/hooks.h"
#include "core/undirected.h"

uint64_t lb_wait_end_deferred(lb_thread_t *self, const lb_wait_t *wait,
                              const pthread_mutex_t *mutex)
{
    if (!wait->hot || !self->wait_deferred || self->foreign) /* (its unlock never looks) */
        return 0;
    /* (none is pending: the wait's beginning flushed it) */
    lb_waiting_end(self);
    uint64_t now = lb_now_ns();
    lb_wait_deferred_t *d = self->wait_deferred;
    d->wait = *wait;
    d->ended_ns = now;
    d->mutex = mutex;
    self->deferred = 1;
    /* (now, not at the end: its own signal before the release ends the
     * run, blame.h's lb_wait_run_object) */
    lb_wait_run_keep(self, wait);
    return now;
}

void lb_wait_deferred_flush_slow(lb_thread_t *self)
{
    if (!self->deferred)
        return;
    int saved_errno = errno;
    self->deferred = 0;
    lb_enter(self);
    lb_wait_ended_at(self, &self->wait_deferred->wait, false, self->wait_deferred->ended_ns);
    lb_leave(self);
    errno = saved_errno;
}

static void flush_self(void)
{
    lb_thread_t *self = lb_self;
    if (self)
        lb_wait_deferred_flush(self);
}

LB_PROCESS_HOOKS(wait_deferred_hooks) = {
    .rank = LB_RANK_BLAME,
    .quiesce = flush_self,
    .fork_prepare = flush_self, /* so the child has none (the wait is the parent's) */
};
