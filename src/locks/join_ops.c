/* Joins (docs/DESIGN.md rule 3): the joiner's waiting is blamed on the joined
 * thread's exit, in the calling context of its start routine. The joined
 * thread has fully exited when the real join returns, so the joiner may
 * write that thread's CCT (it has no other writer any more). A
 * timedjoin that expires leaves its wait unattributed. tryjoin never waits. */
#include "locks/join_ops.h"

#include <errno.h>

#include "blame/blame.h"
#include "blame/wait_deferred.h"
#include "core/real.h"
#include "core/undirected.h"
#include "sampler/foreign.h"
#include "util/clock.h"

int lb_thread_join(pthread_t thread, void **ret, const struct timespec *abstime, bool timed,
                   uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    if (!self || self->busy)
        return timed ? lb_real.timedjoin_np(thread, ret, abstime) : lb_real.join(thread, ret);
    lb_wait_deferred_flush(self); /* a cond wait's end first (blame/wait_deferred.h) */
    uint64_t start = lb_now_ns();
    lb_waiting_begin(self, LB_OBJ_JOIN);
    int rc = timed ? lb_real.timedjoin_np(thread, ret, abstime) : lb_real.join(thread, ret);
    lb_waiting_end(self);
    uint64_t waited = lb_now_ns() - start;
    /* Look the target up only now: before the join it may not have
     * attached yet; after it, its record is final. */
    lb_thread_t *target = rc == 0 ? lb_thread_find_exited((uintptr_t)thread) : NULL;
    bool blamed = target != NULL;
    if (rc == 0 || rc == ETIMEDOUT)
        lb_direct_blame(self, (uintptr_t)thread, LB_OBJ_JOIN, waited, blamed ? target : NULL,
                        blamed ? target->start_routine : 0);
    return rc;
}
