/* The wrappers' what-if detour (whatif_wrap.h) and the experiment's
 * lifecycle: set up at start, every thread counts its progress point's
 * calls from its start and pays what it owes when it ends, and the
 * process writes its results when it finishes.
 *
 * Invariants: a thread inside lockblame code (busy: its SQLite or libdw
 * locking) takes no part; everything else is core/whatif.h's. */
#include "interpose/whatif_wrap.h"

#include <errno.h>

#include "core/hooks.h"
#include "core/thread.h"
#include "core/whatif_progress.h"
#include "locks/barrier_ops.h"
#include "locks/cond_ops.h"
#include "locks/join_ops.h"
#include "locks/mutex_ops.h"
#include "locks/rwlock_ops.h"
#include "locks/spin_ops.h"

/* Accounting applies: the program's own call, not lockblame's. */
static bool program_call(void)
{
    lb_thread_t *self = lb_self;
    return !self || !self->busy;
}

/* After a lock call that may have blocked (lb_whatif_block_begin before
 * it): a wait that got the lock was ended by its holder; a hold starts. */
static int locked(const void *lock, uintptr_t site, int rc)
{
    lb_whatif_block_end(rc == 0);
    if (rc == 0)
        lb_whatif_acquired(lock, site);
    return rc;
}

/* After a trylock (lb_whatif_pay before it): a hold starts if it got it. */
static int tried(const void *lock, uintptr_t site, int rc)
{
    if (rc == 0)
        lb_whatif_acquired(lock, site);
    return rc;
}

int lb_whatif_mutex_lock(pthread_mutex_t *m, uintptr_t site)
{
    if (!program_call())
        return lb_mutex_lock(m, site);
    lb_whatif_block_begin();
    return locked(m, site, lb_mutex_lock(m, site));
}

int lb_whatif_mutex_trylock(pthread_mutex_t *m, uintptr_t site)
{
    if (!program_call())
        return lb_mutex_trylock(m, site);
    lb_whatif_pay();
    return tried(m, site, lb_mutex_trylock(m, site));
}

int lb_whatif_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                              uintptr_t site)
{
    if (!program_call())
        return lb_mutex_timedlock(m, clock, abstime, site);
    lb_whatif_block_begin();
    return locked(m, site, lb_mutex_timedlock(m, clock, abstime, site));
}

int lb_whatif_mutex_unlock(pthread_mutex_t *m, uintptr_t site)
{
    if (program_call())
        lb_whatif_releasing(m, site);
    return lb_mutex_unlock(m, site);
}

/* A spinning waiter is a blocked one: the holder pays before it releases,
 * so the spinner skips the delay inserted while it spun. */
int lb_whatif_spin_lock(pthread_spinlock_t *l, uintptr_t site)
{
    if (!program_call())
        return lb_spin_lock_fast(l, site);
    lb_whatif_block_begin();
    return locked((const void *)(uintptr_t)l, site, lb_spin_lock_fast(l, site));
}

int lb_whatif_spin_trylock(pthread_spinlock_t *l, uintptr_t site)
{
    if (!program_call())
        return lb_spinlock_trylock(l, site);
    lb_whatif_pay();
    return tried((const void *)(uintptr_t)l, site, lb_spinlock_trylock(l, site));
}

int lb_whatif_spin_unlock(pthread_spinlock_t *l, uintptr_t site)
{
    if (program_call())
        lb_whatif_releasing((const void *)(uintptr_t)l, site);
    return lb_spin_unlock_fast(l, site);
}

/* Read and write holds alike: a hold of either that ends at the site is
 * sped up (docs/INTERNALS.md). */
int lb_whatif_rwlock_lock(pthread_rwlock_t *rw, bool writer, bool try, clockid_t clock,
                          const struct timespec *abstime, uintptr_t site)
{
    if (!program_call())
        return lb_rwlock_lock(rw, writer, try, clock, abstime, site);
    if (try) {
        lb_whatif_pay();
        return tried(rw, site, lb_rwlock_lock(rw, writer, true, clock, abstime, site));
    }
    lb_whatif_block_begin();
    return locked(rw, site, lb_rwlock_lock(rw, writer, false, clock, abstime, site));
}

int lb_whatif_rwlock_unlock(pthread_rwlock_t *rw, uintptr_t site)
{
    if (program_call())
        lb_whatif_releasing(rw, site);
    return lb_rwlock_unlock(rw, site);
}

int lb_whatif_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                        const struct timespec *abstime, uintptr_t site)
{
    if (!program_call())
        return lb_cond_wait(c, m, clock, abstime, site);
    lb_whatif_dropped(m); /* m's hold ends inside the wait, not at a release site */
    lb_whatif_block_begin();
    int rc = lb_cond_wait(c, m, clock, abstime, site);
    lb_whatif_block_end(rc == 0);
    lb_whatif_acquired(m, site); /* re-acquired, also after a timeout */
    return rc;
}

int lb_whatif_join(pthread_t t, void **ret, const struct timespec *abstime, bool timed,
                   uintptr_t site)
{
    if (!program_call())
        return lb_thread_join(t, ret, abstime, timed, site);
    lb_whatif_block_begin();
    int rc = lb_thread_join(t, ret, abstime, timed, site);
    lb_whatif_block_end(rc == 0);
    return rc;
}

int lb_whatif_sem_wait(sem_t *s, clockid_t clock, const struct timespec *abstime, uintptr_t site)
{
    if (!program_call())
        return lb_sem_wait(s, clock, abstime, site);
    lb_whatif_block_begin();
    int rc = lb_sem_wait(s, clock, abstime, site);
    lb_whatif_block_end(rc == 0);
    return rc;
}

int lb_whatif_barrier_wait(pthread_barrier_t *b, uintptr_t site)
{
    if (!program_call())
        return lb_barrier_wait(b, site);
    lb_whatif_block_begin();
    int rc = lb_barrier_wait(b, site);
    lb_whatif_block_end(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    return rc;
}

void lb_whatif_before_wake(uintptr_t site)
{
    if (program_call())
        lb_whatif_signalling(site);
}

static void whatif_thread_start(lb_thread_t *t)
{
    if (lb_whatif_on)
        lb_progress_thread_start();
}

static void whatif_thread_stop(lb_thread_t *t)
{
    if (!lb_whatif_on)
        return;
    lb_whatif_pay(); /* before a joiner can see this thread end */
    lb_progress_thread_stop();
}

LB_THREAD_HOOKS(whatif_thread_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .start = whatif_thread_start,
    .stop = whatif_thread_stop,
};

static void whatif_quiesce(void)
{
    if (lb_whatif_on)
        lb_whatif_finish();
}

static void whatif_fork_child(lb_thread_t *self)
{
    if (lb_whatif_on)
        lb_progress_fork_child();
}

LB_PROCESS_HOOKS(whatif_process_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .setup = lb_whatif_setup,
    .quiesce = whatif_quiesce,
    .fork_child = whatif_fork_child,
};
