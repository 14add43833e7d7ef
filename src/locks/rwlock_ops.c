/* Monitored rwlocks. State in the object map; the shared-holder split is
 * in blame/rwlock_blame.c. A blocking lock first tries the real trylock,
 * so the uncontended path takes no timestamp. */
#include "locks/rwlock_ops.h"

#include <errno.h>

#include "blame/rwlock_blame.h"
#include "blame/sites.h"
#include "core/real.h"
#include "locks/objmap.h"
#include "util/timeout.h"

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

int lb_rwlock_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                   const struct timespec *abstime, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    lb_mon_t *mon = self && !self->busy ? lb_objmap_get(rw, LB_OBJ_RWLOCK) : NULL;
    if (!mon || (!try && lb_timeout_rejected(clock, abstime)))
        return real_lock(rw, writer, try, clock, abstime); /* EINVAL before any attempt */
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
    lb_thread_t *self = lb_self;
    lb_mon_t *mon = self && !self->busy ? lb_objmap_find(rw) : NULL;
    if (!mon)
        return lb_real.rwlock_unlock(rw);
    lb_site_count_release(self->sites, site, LB_OBJ_RWLOCK);
    lb_hold_t hold;
    if (!lb_rw_release_collect(self, mon, rw, &hold))
        return lb_real.rwlock_unlock(rw);
    lb_deposit(self, &hold, LB_OBJ_RWLOCK, site); /* before: nothing after the release */
    return lb_real.rwlock_unlock(rw);
}

int lb_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
    lb_objmap_retire(rw);
    return lb_real.rwlock_init(rw, attr);
}

int lb_rwlock_destroy(pthread_rwlock_t *rw)
{
    int rc = lb_real.rwlock_destroy(rw);
    if (rc == 0)
        lb_objmap_retire(rw);
    return rc;
}
