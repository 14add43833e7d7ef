/* Barriers.
 *
 * Invariants: barrier_count is set at init (a barrier first seen without
 * init has count 0 and its idleness stays unattributed: we cannot tell
 * the last arriver). barrier_arrived counts arrivals of the current
 * episode under meta; the arrival that reaches barrier_count is the last
 * one. It is not necessarily the thread glibc picks for
 * PTHREAD_BARRIER_SERIAL_THREAD, so we decide it ourselves, under meta,
 * before calling the real barrier wait. */
#include "locks/barrier_ops.h"

#include "blame/blame.h"
#include "blame/shared_objs.h"
#include "blame/sites.h"
#include "core/real.h"
#include "locks/objmap.h"
#include "sampler/foreign.h"

int lb_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
    lb_objmap_retire(b);
    int rc = lb_real.barrier_init(b, attr, count);
    lb_thread_t *self = lb_thread_current();
    if (rc == 0 && self && !self->busy) {
        lb_mon_t *mon = lb_objmap_get(b, LB_OBJ_BARRIER);
        if (mon)
            mon->barrier_count = count;
        int pshared = PTHREAD_PROCESS_PRIVATE;
        if (attr && pthread_barrierattr_getpshared(attr, &pshared) == 0 &&
            pshared == PTHREAD_PROCESS_SHARED)
            lb_shared_register(b, LB_OBJ_BARRIER, count); /* errno kept */
    }
    return rc;
}

/* A wait at a barrier shared across processes (its record r): its
 * episodes count the arrivals of every process (blame/shared_objs.h). */
static int shared_barrier_wait(lb_thread_t *self, pthread_barrier_t *b, lb_mon_t *mon,
                               lb_shared_obj_t *r, uintptr_t site)
{
    lb_site_count_release(self, site, LB_OBJ_BARRIER);
    lb_shared_wait_t shared = { 0 };
    lb_hold_t hold;
    uint64_t now = lb_now_ns();
    if (lb_shared_barrier_arrive(&shared, r, mon, now, &hold)) {
        lb_deposit(self, &hold, LB_OBJ_BARRIER, site);
        return lb_real.barrier_wait(b);
    }
    lb_wait_t wait;
    lb_wait_begin_at(self, mon, LB_OBJ_BARRIER, &wait, now);
    int rc = lb_real.barrier_wait(b);
    uint64_t ended = lb_wait_end(self, &wait, false);
    lb_shared_wait_ends(&shared, mon, ended, false, true, false);
    return rc;
}

int lb_barrier_destroy(pthread_barrier_t *b)
{
    int rc = lb_real.barrier_destroy(b);
    if (rc == 0)
        lb_objmap_retire(b);
    return rc;
}

int lb_barrier_wait(pthread_barrier_t *b, uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon = self && !self->busy ? lb_objmap_get(b, LB_OBJ_BARRIER) : NULL;
    if (!mon)
        return lb_real.barrier_wait(b);
    lb_shared_obj_t *shared = lb_shared_find(b);
    if (shared)
        return shared_barrier_wait(self, b, mon, shared, site);
    lb_wait_t wait;
    bool waits = lb_barrier_enter(self, mon, site, &wait);
    int rc = lb_real.barrier_wait(b); /* not a cancellation point */
    if (waits)
        lb_wait_end(self, &wait, false);
    return rc;
}

bool lb_barrier_enter(lb_thread_t *self, lb_mon_t *mon, uintptr_t site, lb_wait_t *wait)
{
    lb_site_count_release(self, site, LB_OBJ_BARRIER);
    lb_hold_t hold;
    if (!lb_barrier_arrive(self, mon, wait, &hold))
        return true;
    lb_deposit(self, &hold, LB_OBJ_BARRIER, site);
    return false;
}
