/* Process-shared mutexes across a profiled tree (pshared_mutex.h).
 *
 * A lock first tries the real trylock, so an acquisition that does not
 * wait takes no timestamp but the record's; a hold's accounting begins at
 * every acquisition by the tree and ends at every release by it (before
 * the real release), so the record knows whether a holder is accounted,
 * whichever process holds. Every acquisition is counted in this
 * process's record of the mutex (lb_shared_acquisition), the contended
 * ones also by the wait's end (blame.c), as for a private mutex. */
#include "locks/pshared_mutex.h"

#include <errno.h>

#include "blame/shared_objs.h"
#include "blame/sites.h"
#include "core/real.h"
#include "locks/mutex_ops.h"
#include "locks/objmap.h"
#include "util/timeout.h"

void lb_pshared_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr && lb_self && pthread_mutexattr_getpshared(attr, &pshared) == 0 &&
        pshared == PTHREAD_PROCESS_SHARED)
        lb_shared_register(m, LB_OBJ_MUTEX, 0); /* errno kept */
}

/* An inner acquisition or release of a recursive mutex: no hold of its own. */
static bool nested(const pthread_mutex_t *m)
{
    return m->__data.__count > 1;
}

int lb_pshared_mutex_lock(lb_thread_t *self, pthread_mutex_t *m, clockid_t clock,
                          const struct timespec *abstime, bool timed, bool try)
{
    lb_shared_obj_t *r = lb_shared_find(m);
    lb_mon_t *mon = r ? lb_objmap_get(m, LB_OBJ_MUTEX) : NULL;
    if (!mon)
        return try ? lb_real.mutex_trylock(m) : lb_mutex_real_lock(m, clock, abstime, timed);
    int rc = lb_real.mutex_trylock(m);
    if (rc == 0) {
        if (!nested(m))
            lb_shared_acquired(r, mon, lb_now_ns());
        lb_shared_acquisition(self, mon);
        return 0;
    }
    if (try || rc != EBUSY)
        return rc; /* EOWNERDEAD, EAGAIN, ...: the blocking call says the same */
    lb_wait_t wait;
    lb_shared_wait_t shared = { .r = r, .releases = lb_shared_releases(r) };
    lb_wait_begin(self, mon, LB_OBJ_MUTEX, &wait);
    lb_shared_wait_begins(&shared, mon, wait.start_ns, true, m->__data.__owner);
    rc = lb_mutex_real_lock(m, clock, abstime, timed);
    uint64_t ended = lb_wait_end(self, &wait, rc == 0);
    lb_shared_wait_ends(&shared, mon, ended, rc == 0 && !nested(m), rc == 0, false);
    if (rc == 0)
        lb_shared_acquisition(self, mon);
    return rc;
}

/* m's record and lb_mon when self's unlock of m really releases it. */
static lb_mon_t *releasing(const lb_thread_t *self, pthread_mutex_t *m, lb_shared_obj_t **r)
{
    if (m->__data.__owner != self->tid || nested(m))
        return NULL; /* not ours (the real call decides), or an inner unlock */
    *r = lb_shared_find(m);
    return *r ? lb_objmap_get(m, LB_OBJ_MUTEX) : NULL;
}

int lb_pshared_mutex_unlock(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    lb_shared_obj_t *r = NULL;
    lb_mon_t *mon = releasing(self, m, &r);
    if (mon) {
        lb_site_count_release(self, site, LB_OBJ_MUTEX);
        lb_shared_blame(self, r, mon, LB_OBJ_MUTEX, site); /* before: nothing after the release */
    }
    return lb_real.mutex_unlock(m);
}

lb_hold_t lb_pshared_mutex_releasing_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now)
{
    lb_shared_obj_t *r = NULL;
    lb_mon_t *mon = releasing(self, m, &r);
    return mon ? lb_shared_collect(r, mon, now) : (lb_hold_t){ .blame_ns = 0 };
}

void lb_pshared_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now)
{
    lb_shared_obj_t *r = lb_shared_find(m);
    lb_mon_t *mon = r ? lb_objmap_get(m, LB_OBJ_MUTEX) : NULL;
    if (!mon)
        return;
    if (!nested(m))
        lb_shared_acquired(r, mon, now);
    lb_shared_acquisition(self, mon);
}
