/* Dual-representation spin locks (thesis Algorithms 6.2-6.5): the logic
 * behind the exported pthread_spin_* wrappers. */
#ifndef LB_SPIN_OPS_H
#define LB_SPIN_OPS_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "blame/blame.h"
#include "blame/sites.h"
#include "core/thread.h"
#include "locks/monitored.h"

int lb_spinlock_init(pthread_spinlock_t *lock, int pshared);
int lb_spinlock_destroy(pthread_spinlock_t *lock);
int lb_spinlock_lock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_trylock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_unlock(pthread_spinlock_t *lock, uintptr_t site);
/* Release of a hold that has blame to hand on (slow path); returns 0. */
int lb_spin_release_accounted(lb_thread_t *self, lb_mon_t *mon, uintptr_t site);

/* The lock word: glibc's x86-64 native values, or a tagged pool index. */
enum {
    LB_SPIN_LOCKED = 0,
    LB_SPIN_UNLOCKED = 1,
    LB_SPIN_MON_BASE = 0x40000000,
};

static inline bool lb_spin_word_is_monitored(int word)
{
    return word >= LB_SPIN_MON_BASE;
}

/* The lb_mon a monitored word refers to, if it still belongs to lock. */
static inline lb_mon_t *lb_spin_mon_of_word(int word, const pthread_spinlock_t *lock)
{
    lb_mon_t *mon = lb_mon_at((uint32_t)(word - LB_SPIN_MON_BASE));
    return mon && mon->addr == (const void *)lock ? mon : NULL;
}

static inline bool lb_spin_mon_try_acquire(lb_mon_t *mon)
{
    return __atomic_exchange_n(&mon->spin_word, LB_SPIN_LOCKED, __ATOMIC_ACQUIRE) ==
           LB_SPIN_UNLOCKED;
}

/* Out-of-line steps of the fast paths below. */
int lb_spin_lock_contended(lb_thread_t *self, lb_mon_t *mon);
int lb_spin_acquired_with_waiters(lb_thread_t *self, lb_mon_t *mon);

/* Inline fast paths for an already monitored lock on an attached thread;
 * everything else (native words, conversion, unattached threads, site
 * misses) goes to the general functions in spin_ops.c, and contention,
 * waiters and blame to out-of-line steps, all by tail calls. */
static inline int lb_spin_lock_fast(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    int word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    lb_mon_t *mon = lb_spin_word_is_monitored(word) ? lb_spin_mon_of_word(word, lock) : NULL;
    if (lb_unlikely(!mon || !self || self->busy))
        return lb_spinlock_lock(lock, site);
    if (lb_unlikely(!lb_spin_mon_try_acquire(mon)))
        return lb_spin_lock_contended(self, mon);
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0))
        return lb_spin_acquired_with_waiters(self, mon);
    mon->acquisitions++;
    return 0;
}

static inline int lb_spin_unlock_fast(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    int word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    lb_mon_t *mon = lb_spin_word_is_monitored(word) ? lb_spin_mon_of_word(word, lock) : NULL;
    if (lb_unlikely(!mon || !self || self->busy))
        return lb_spinlock_unlock(lock, site);
    lb_site_t *s = lb_site_probe(self->sites, lb_site_key(site, LB_OBJ_SPIN));
    if (lb_unlikely(!s))
        return lb_spinlock_unlock(lock, site); /* counts the release itself */
    s->releases++;
    if (lb_unlikely(lb_release_needs_accounting(mon)))
        return lb_spin_release_accounted(self, mon, site);
    __atomic_store_n(&mon->spin_word, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
    return 0;
}
#endif
