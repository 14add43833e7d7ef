/* Monitored rwlocks. State in the object map; the shared-holder split is
 * in blame/rwlock_blame.c. A blocking lock first tries the real trylock,
 * so the uncontended path takes no timestamp. A lock that glibc's init
 * made process-private looks for no record of the tree's shared table
 * (blame/shared_objs.h): only a process-shared init registers one. */
#include "locks/rwlock_ops.h"

#include <errno.h>

#include "blame/rwlock_blame.h"
#include "blame/shared_objs.h"
#include "blame/sites.h"
#include "core/real.h"
#include "locks/objmap.h"
#include "sampler/foreign.h"
#include "util/clock.h"
#include "util/timeout.h"

/* rw's record in the tree's shared table, NULL if none. glibc's
 * __shared is 0 in a process-private rwlock (pthread_rwlock_init's
 * default, PTHREAD_RWLOCK_INITIALIZER), which then has no record and is
 * not looked up; a process-shared init sets it nonzero (its futex calls
 * are then shared ones). */
static lb_shared_obj_t *shared_record(const pthread_rwlock_t *rw)
{
    if (__atomic_load_n(&rw->__data.__shared, __ATOMIC_RELAXED) == 0)
        return NULL;
    return lb_shared_find(rw);
}

static int real_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                     const struct timespec *abstime)
{
    if (try)
        return writer ? lb_real.rwlock_trywrlock(rw) : lb_real.rwlock_tryrdlock(rw);
    if (clock == LB_WAIT_FOREVER)
        return writer ? lb_real.rwlock_wrlock(rw) : lb_real.rwlock_rdlock(rw);
    if (clock == LB_WAIT_REALTIME)
        return writer ? lb_real.rwlock_timedwrlock(rw, abstime)
                      : lb_real.rwlock_timedrdlock(rw, abstime);
    return writer ? lb_real.rwlock_clockwrlock(rw, clock, abstime)
                  : lb_real.rwlock_clockrdlock(rw, clock, abstime);
}

/* A process-shared rwlock (its record r): its holders and waiters are
 * counted over the tree's processes (blame/shared_objs.h); each hold keeps
 * the shared blame clock at its start on the thread's stack of rwlock
 * holds. */
static int shared_lock(lb_thread_t *self, pthread_rwlock_t *rw, lb_mon_t *mon, lb_shared_obj_t *r,
                       bool writer, bool try, clockid_t clock, const struct timespec *abstime)
{
    int rc = real_lock(rw, writer, true, LB_WAIT_FOREVER, NULL);
    bool waited = false;
    if (rc == EBUSY && !try) {
        lb_wait_t wait;
        lb_shared_wait_t shared = { .r = r, .releases = lb_shared_releases(r) };
        lb_wait_begin(self, mon, LB_OBJ_RWLOCK, &wait);
        lb_shared_wait_begins(&shared, mon, wait.start_ns, false, 0);
        rc = real_lock(rw, writer, false, clock, abstime);
        uint64_t ended = lb_wait_end(self, &wait, rc == 0); /* (its count: contended) */
        lb_shared_wait_ends(&shared, mon, ended, false, false, false);
        waited = true;
    }
    if (rc == 0)
        lb_rw_hold_push(self, mon, lb_shared_rw_acquired(r, mon, lb_now_ns()), waited);
    return rc;
}

int lb_rwlock_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                   const struct timespec *abstime, uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon = self && !self->busy ? lb_objmap_get(rw, LB_OBJ_RWLOCK) : NULL;
    if (!mon || (!try && lb_timeout_rejected(clock, abstime)))
        return real_lock(rw, writer, try, clock, abstime); /* EINVAL before any attempt */
    lb_shared_obj_t *shared = shared_record(rw);
    if (shared)
        return shared_lock(self, rw, mon, shared, writer, try, clock, abstime);
    int rc = real_lock(rw, writer, true, LB_WAIT_FOREVER, NULL);
    if (rc == 0) {
        lb_rw_acquired(self, mon, rw, false);
        return 0;
    }
    if (try || rc != EBUSY)
        return rc; /* EDEADLK, EAGAIN, EINVAL: the blocking call says the same */
    lb_wait_t wait;
    lb_rw_wait_begin(self, mon, rw, !writer, &wait);
    rc = real_lock(rw, writer, false, clock, abstime);
    lb_rw_wait_end(self, mon, rw, !writer, &wait);
    if (rc == 0)
        lb_rw_acquired(self, mon, rw, true);
    return rc;
}

int lb_rwlock_unlock(pthread_rwlock_t *rw, uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    lb_mon_t *mon = self && !self->busy ? lb_objmap_find(rw) : NULL;
    if (!mon)
        return lb_real.rwlock_unlock(rw);
    lb_site_count_release(self, site, LB_OBJ_RWLOCK);
    lb_shared_obj_t *shared = shared_record(rw);
    lb_rw_hold_t mine;
    if (shared && lb_rw_hold_pop(self, mon, &mine)) {
        lb_hold_t taken = lb_shared_rw_released(shared, mon, lb_now_ns(), mine.clock_at_acquire);
        lb_deposit(self, &taken, LB_OBJ_RWLOCK, site); /* before: nothing after the release */
        return lb_real.rwlock_unlock(rw);
    }
    lb_hold_t hold;
    if (!lb_rw_release_collect(self, mon, rw, &hold))
        return lb_real.rwlock_unlock(rw);
    lb_deposit(self, &hold, LB_OBJ_RWLOCK, site); /* before: nothing after the release */
    return lb_real.rwlock_unlock(rw);
}

int lb_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
    lb_objmap_retire(rw);
    int rc = lb_real.rwlock_init(rw, attr);
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (rc == 0 && attr && lb_self && pthread_rwlockattr_getpshared(attr, &pshared) == 0 &&
        pshared == PTHREAD_PROCESS_SHARED)
        lb_shared_register(rw, LB_OBJ_RWLOCK, 0); /* errno kept */
    return rc;
}

int lb_rwlock_destroy(pthread_rwlock_t *rw)
{
    int rc = lb_real.rwlock_destroy(rw);
    if (rc == 0)
        lb_objmap_retire(rw);
    return rc;
}
