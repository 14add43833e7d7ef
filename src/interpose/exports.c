/* The exported symbols. Each forwards in one line to the logic in
 * src/locks (every object kind, joins included) or interpose/thread_create.c
 * (the start trampoline), passing the program's call site (our return
 * address). While a what-if experiment runs (core/whatif.h), the
 * blocking, releasing and waking ones detour through
 * interpose/whatif_wrap.c: one test of lb_whatif_on otherwise.
 *
 * Bootstrap: lb_real may still be empty when ld.so, libc or a static
 * constructor locks before our constructor; ENSURE_REAL resolves it then.
 * If resolution is already running on this thread (dlsym locking inside
 * itself), the lock call returns 0 without locking: only one thread exists
 * that early, and the real function cannot be reached before dlsym
 * returns. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "core/real.h"
#include "interpose/thread_create.h"
#include "interpose/whatif_wrap.h"
#include "locks/barrier_ops.h"
#include "locks/cond_ops.h"
#include "locks/join_ops.h"
#include "locks/rwlock_ops.h"
#include "locks/mutex_ops.h"
#include "locks/spin_ops.h"
#include "util/common.h"
#include "util/timeout.h"

#define ENSURE_REAL(field)                                                \
    do {                                                                  \
        if (lb_unlikely(lb_real.field == NULL) && lb_real_resolve() != 0) \
            return 0;                                                     \
    } while (0)

LB_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    ENSURE_REAL(mutex_init);
    return lb_mutex_init(m, a);
}

LB_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
    ENSURE_REAL(mutex_destroy);
    return lb_mutex_destroy(m);
}

/* The two hottest wrappers bootstrap in lb_mutex_lock/unlock's own
 * unmonitored path (no lb_self yet means lb_real may be empty too), so
 * that their fast paths test nothing twice. */
LB_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_mutex_lock(m, LB_CALLER());
    return lb_mutex_lock(m, LB_CALLER());
}

LB_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
    ENSURE_REAL(mutex_trylock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_mutex_trylock(m, LB_CALLER());
    return lb_mutex_trylock(m, LB_CALLER());
}

LB_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    ENSURE_REAL(mutex_timedlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_mutex_timedlock(m, LB_WAIT_REALTIME, abstime, LB_CALLER());
    return lb_mutex_timedlock(m, LB_WAIT_REALTIME, abstime, LB_CALLER());
}

LB_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                      const struct timespec *abstime)
{
    ENSURE_REAL(mutex_clocklock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_mutex_timedlock(m, clock, abstime, LB_CALLER());
    return lb_mutex_timedlock(m, clock, abstime, LB_CALLER());
}

LB_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_mutex_unlock(m, LB_CALLER());
    return lb_mutex_unlock(m, LB_CALLER());
}

LB_EXPORT int pthread_spin_init(pthread_spinlock_t *l, int pshared)
{
    return lb_spinlock_init(l, pshared);
}

LB_EXPORT int pthread_spin_destroy(pthread_spinlock_t *l)
{
    return lb_spinlock_destroy(l);
}

LB_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_spin_lock(l, LB_CALLER());
    return lb_spin_lock_fast(l, LB_CALLER());
}

LB_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_spin_trylock(l, LB_CALLER());
    return lb_spinlock_trylock(l, LB_CALLER());
}

LB_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_spin_unlock(l, LB_CALLER());
    return lb_spin_unlock_fast(l, LB_CALLER());
}

LB_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                             void *arg)
{
    if (lb_real.create == NULL && lb_real_resolve() != 0)
        return EAGAIN; /* cannot happen: nothing creates threads inside dlsym */
    return lb_thread_create(t, attr, fn, arg, LB_CALLER());
}

LB_EXPORT void pthread_exit(void *ret)
{
    lb_thread_exit(ret);
}

LB_EXPORT int pthread_join(pthread_t t, void **ret)
{
    ENSURE_REAL(join);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_join(t, ret, NULL, false, LB_CALLER());
    return lb_thread_join(t, ret, NULL, false, LB_CALLER());
}

LB_EXPORT int pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *abstime)
{
    ENSURE_REAL(timedjoin_np);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_join(t, ret, abstime, true, LB_CALLER());
    return lb_thread_join(t, ret, abstime, true, LB_CALLER());
}

LB_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    ENSURE_REAL(cond_init);
    return lb_cond_init(c, a);
}

LB_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
    ENSURE_REAL(cond_destroy);
    return lb_cond_destroy(c);
}

LB_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    ENSURE_REAL(cond_wait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_cond_wait(c, m, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_cond_wait(c, m, LB_WAIT_FOREVER, NULL, LB_CALLER());
}

LB_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *abstime)
{
    ENSURE_REAL(cond_timedwait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_cond_wait(c, m, LB_WAIT_REALTIME, abstime, LB_CALLER());
    return lb_cond_wait(c, m, LB_WAIT_REALTIME, abstime, LB_CALLER());
}

LB_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                     const struct timespec *abstime)
{
    ENSURE_REAL(cond_clockwait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_cond_wait(c, m, clock, abstime, LB_CALLER());
    return lb_cond_wait(c, m, clock, abstime, LB_CALLER());
}

/* A signal, broadcast or post while a what-if experiment runs: out of
 * line, so that the wrappers' common path keeps no frame. */
LB_NOINLINE static int signal_whatif(void *obj, lb_obj_kind kind, uintptr_t site, int arg)
{
    lb_whatif_before_wake(site);
    return lb_signal(obj, kind, site, arg);
}

LB_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
    if (lb_unlikely(lb_real.cond_signal == NULL)) /* ENSURE_REAL, by a tail call: no frame */
        return lb_signal_unresolved(c, LB_OBJ_COND, LB_CALLER(), 0);
    if (lb_unlikely(lb_whatif_on))
        return signal_whatif(c, LB_OBJ_COND, LB_CALLER(), 0);
    return lb_signal(c, LB_OBJ_COND, LB_CALLER(), 0);
}

LB_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
    if (lb_unlikely(lb_real.cond_broadcast == NULL)) /* ENSURE_REAL, by a tail call: no frame */
        return lb_signal_unresolved(c, LB_OBJ_COND, LB_CALLER(), 1);
    if (lb_unlikely(lb_whatif_on))
        return signal_whatif(c, LB_OBJ_COND, LB_CALLER(), 1);
    return lb_signal(c, LB_OBJ_COND, LB_CALLER(), 1);
}

LB_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
    ENSURE_REAL(sem_init);
    return lb_sem_init(s, pshared, value);
}

LB_EXPORT int sem_destroy(sem_t *s)
{
    ENSURE_REAL(sem_destroy);
    return lb_sem_destroy(s);
}

LB_EXPORT int sem_wait(sem_t *s)
{
    ENSURE_REAL(sem_wait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_sem_wait(s, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_sem_wait_fast(s, LB_CALLER());
}

LB_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
    ENSURE_REAL(sem_timedwait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_sem_wait(s, LB_WAIT_REALTIME, abstime, LB_CALLER());
    return lb_sem_wait(s, LB_WAIT_REALTIME, abstime, LB_CALLER());
}

LB_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    ENSURE_REAL(sem_clockwait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_sem_wait(s, clock, abstime, LB_CALLER());
    return lb_sem_wait(s, clock, abstime, LB_CALLER());
}

LB_EXPORT int sem_post(sem_t *s)
{
    if (lb_unlikely(lb_real.sem_post == NULL)) /* ENSURE_REAL, by a tail call: no frame */
        return lb_signal_unresolved(s, LB_OBJ_SEM, LB_CALLER(), 0);
    if (lb_unlikely(lb_whatif_on))
        return signal_whatif(s, LB_OBJ_SEM, LB_CALLER(), 0);
    return lb_signal(s, LB_OBJ_SEM, LB_CALLER(), 0);
}

LB_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                   unsigned count)
{
    ENSURE_REAL(barrier_init);
    return lb_barrier_init(b, a, count);
}

LB_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
    ENSURE_REAL(barrier_destroy);
    return lb_barrier_destroy(b);
}

LB_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
    ENSURE_REAL(barrier_wait);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_barrier_wait(b, LB_CALLER());
    return lb_barrier_wait(b, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
    ENSURE_REAL(rwlock_init);
    return lb_rwlock_init(rw, a);
}

LB_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_destroy);
    return lb_rwlock_destroy(rw);
}

LB_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_rdlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, false, false, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_rwlock_lock(rw, false, false, LB_WAIT_FOREVER, NULL, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_tryrdlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, false, true, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_rwlock_lock(rw, false, true, LB_WAIT_FOREVER, NULL, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
    ENSURE_REAL(rwlock_timedrdlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, false, false, LB_WAIT_REALTIME, abstime, LB_CALLER());
    return lb_rwlock_lock(rw, false, false, LB_WAIT_REALTIME, abstime, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock,
                                         const struct timespec *abstime)
{
    ENSURE_REAL(rwlock_clockrdlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, false, false, clock, abstime, LB_CALLER());
    return lb_rwlock_lock(rw, false, false, clock, abstime, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_wrlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, true, false, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_rwlock_lock(rw, true, false, LB_WAIT_FOREVER, NULL, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_trywrlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, true, true, LB_WAIT_FOREVER, NULL, LB_CALLER());
    return lb_rwlock_lock(rw, true, true, LB_WAIT_FOREVER, NULL, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
    ENSURE_REAL(rwlock_timedwrlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, true, false, LB_WAIT_REALTIME, abstime, LB_CALLER());
    return lb_rwlock_lock(rw, true, false, LB_WAIT_REALTIME, abstime, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock,
                                         const struct timespec *abstime)
{
    ENSURE_REAL(rwlock_clockwrlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_lock(rw, true, false, clock, abstime, LB_CALLER());
    return lb_rwlock_lock(rw, true, false, clock, abstime, LB_CALLER());
}

LB_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
    ENSURE_REAL(rwlock_unlock);
    if (lb_unlikely(lb_whatif_on))
        return lb_whatif_rwlock_unlock(rw, LB_CALLER());
    return lb_rwlock_unlock(rw, LB_CALLER());
}
