/* Dual-representation spin locks (thesis Algorithms 6.2-6.5): the logic
 * behind the exported pthread_spin_* wrappers. */
#ifndef LB_SPIN_OPS_H
#define LB_SPIN_OPS_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blame/blame.h"
#include "blame/sites.h"
#include "core/thread.h"
#include "locks/monitored.h"
#include "locks/acq_counts.h"

int lb_spinlock_init(pthread_spinlock_t *lock, int pshared);
int lb_spinlock_destroy(pthread_spinlock_t *lock);
int lb_spinlock_lock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_trylock(pthread_spinlock_t *lock, uintptr_t site);
int lb_spinlock_unlock(pthread_spinlock_t *lock, uintptr_t site);
/* Process setup: LOCKBLAME_SPIN, and the sampler's hook for sampled spin
 * waits (blame/spin_sampled.h). */
void lb_spin_sampling_setup(void);
/* Release of a hold that has blame to hand on (slow path); returns 0.
 * `word` is the monitored word with the held bit clear. */
int lb_spin_release_accounted(lb_thread_t *self, lb_mon_t *mon, pthread_spinlock_t *lock, int word,
                              uintptr_t site);

/* The lock word: glibc's x86-64 native values (1 unlocked; 0, negative or
 * anything else not ours: locked), or a monitored word
 *   LB_SPIN_MON_BASE + (pool index << 1) + held
 * The held bit stays in the program's own word, so a lock in shared memory
 * used across fork (process-private, undefined by POSIX, but glibc simply
 * works on the word) still excludes: each process's lb_mon only accounts. */
enum {
    LB_SPIN_LOCKED = 0,
    LB_SPIN_UNLOCKED = 1,
    LB_SPIN_MON_BASE = 0x40000000,
    LB_SPIN_HELD = 1,
};

static inline bool lb_spin_word_is_monitored(int word)
{
    return word >= LB_SPIN_MON_BASE;
}

/* The monitored word for pool index `index`, held bit clear. */
static inline int lb_spin_word_of_index(uint32_t index)
{
    return LB_SPIN_MON_BASE + (int)(index << 1);
}

/* The lb_mon a monitored word refers to, if it still belongs to lock. */
static inline lb_mon_t *lb_spin_mon_of_word(int word, const pthread_spinlock_t *lock)
{
    lb_mon_t *mon = lb_mon_at((uint32_t)(word - LB_SPIN_MON_BASE) >> 1);
    return mon && mon->addr == (const void *)lock ? mon : NULL;
}

/* One acquisition attempt on a monitored word (seen: its last value). */
static inline bool lb_spin_word_try_acquire(pthread_spinlock_t *lock, int seen)
{
    return !(seen & LB_SPIN_HELD) &&
           __atomic_compare_exchange_n(lock, &seen, seen | LB_SPIN_HELD, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* The calling thread acquired the monitored lock whose word is `word`
 * and whose lb_mon is `mon`. Noted so that its release can find both
 * without reading the lock word: a load of the word right after the
 * locked instruction that set the held bit waits for that instruction to
 * complete (~6 ns a pair on x86 here, as much as the CAS itself), while
 * the releasing store alone does not. The note stays after the release,
 * so that the next acquisition of the same lock (a loop's) finds both
 * without looking the word up either. */
static inline void lb_spin_note_held(lb_thread_t *self, pthread_spinlock_t *lock, lb_mon_t *mon,
                                     int word)
{
    self->spin_held = lock;
    self->spin_held_mon = mon;
    self->spin_held_word = word & ~LB_SPIN_HELD;
}

/* The lb_mon and the free word (held bit clear, *word) of a monitored lock
 * the calling thread noted (lb_spin_note_held), if the noted lb_mon still
 * belongs to it, else NULL. An lb_mon that belongs to a lock is the one
 * its word refers to (conversion installs it; destroy, re-init and the
 * orphan sweep retire it, which clears its addr), so the noted word is
 * the lock's own with the held bit clear, whoever holds it now. */
static inline lb_mon_t *lb_spin_noted(const lb_thread_t *self, const pthread_spinlock_t *lock,
                                      int *word)
{
    lb_mon_t *mon = self->spin_held_mon;
    *word = self->spin_held_word;
    return lb_likely(self->spin_held == lock) && lb_likely(mon->addr == (const void *)lock) ? mon
                                                                                            : NULL;
}

/* The lb_mon of a monitored lock the calling thread releases, and its
 * word with the held bit clear (*word): those it noted (lb_spin_noted),
 * else read from the lock (a nested lock released out of order, a lock
 * acquired natively). NULL: not a monitored lock of ours. */
static inline lb_mon_t *lb_spin_mon_to_release(lb_thread_t *self, const pthread_spinlock_t *lock,
                                               int *word)
{
    lb_mon_t *mon = lb_spin_noted(self, lock, word);
    if (lb_likely(mon != NULL))
        return mon;
    *word = __atomic_load_n(lock, __ATOMIC_ACQUIRE) & ~LB_SPIN_HELD;
    return lb_spin_word_is_monitored(*word) ? lb_spin_mon_of_word(*word, lock) : NULL;
}

/* Out-of-line steps of the fast paths below. */
int lb_spin_lock_contended(lb_thread_t *self, lb_mon_t *mon, pthread_spinlock_t *lock,
                           uintptr_t site);
int lb_spin_acquired_with_waiters(lb_thread_t *self, lb_mon_t *mon);

/* Whether anyone waits on mon's lock or it is hot (blame/spin_sampled.h): its
 * first two words, read at once (zero: neither). */
static inline uint64_t lb_spin_waited_or_hot(const lb_mon_t *mon)
{
    _Static_assert(offsetof(lb_mon_t, spin_sampled) == 0 && offsetof(lb_mon_t, waiters) == 4,
                   "spin_sampled and waiters share the lb_mon's first 8 bytes");
    return __atomic_load_n((const uint64_t *)(const void *)mon, __ATOMIC_RELAXED);
}

/* One acquisition of mon's lock by self, which holds it now: in the
 * lb_mon, or in self's own table once the lock is hot (acq_counts.h).
 * Returns 0, so that a fast path can end in it with a tail call. */
static inline int lb_spin_count_acquisition(lb_thread_t *self, lb_mon_t *mon)
{
    if (lb_likely(__atomic_load_n(&mon->spin_sampled, __ATOMIC_RELAXED) == 0)) {
        mon->acquisitions++;
        return 0;
    }
    return lb_acq_count(self, mon);
}

/* self acquired mon's lock, without waiting: the acquisition counted,
 * and a hold that others wait through accounted (out of line). */
static inline int lb_spin_acquired(lb_thread_t *self, lb_mon_t *mon)
{
    if (lb_likely(lb_spin_waited_or_hot(mon) == 0)) {
        mon->acquisitions++;
        return 0;
    }
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0))
        return lb_spin_acquired_with_waiters(self, mon);
    return lb_spin_count_acquisition(self, mon);
}

/* Inline fast paths for an already monitored lock on an attached thread;
 * everything else (native words, conversion, unattached threads, site
 * misses) goes to the general functions in spin_ops.c, and contention,
 * waiters and blame to out-of-line steps, all by tail calls. Between the
 * acquiring CAS and the releasing store neither reads the lock word. The
 * lock of the lock this thread noted last (a loop's) is one CAS on the
 * noted word, as glibc's is one locked decrement: a lock held by someone
 * else waits at once, one whose word changed is looked up again. A lock
 * that others wait on or that is hot reads its word first, as any other:
 * a holder that re-takes its lock with a blind CAS right after its release
 * leaves a spinning waiter no window (LOCKBLAME_SPIN=exact: 3 hand-offs a
 * second instead of 10-100). */
static inline int lb_spin_lock_fast(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_spinlock_lock(lock, site);
    int word;
    lb_mon_t *mon = lb_spin_noted(self, lock, &word);
    if (lb_likely(mon != NULL) && lb_likely(lb_spin_waited_or_hot(mon) == 0)) {
        int seen = word;
        if (lb_likely(__atomic_compare_exchange_n(lock, &seen, word | LB_SPIN_HELD, false,
                                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
            return lb_spin_acquired(self, mon);
        if (seen == (word | LB_SPIN_HELD)) /* held: the word is still the noted one */
            return lb_spin_lock_contended(self, mon, lock, site);
    }
    word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    mon = lb_spin_word_is_monitored(word) ? lb_spin_mon_of_word(word, lock) : NULL;
    if (lb_unlikely(!mon))
        return lb_spinlock_lock(lock, site);
    if (lb_unlikely(!lb_spin_word_try_acquire(lock, word)))
        return lb_spin_lock_contended(self, mon, lock, site);
    lb_spin_note_held(self, lock, mon, word);
    return lb_spin_acquired(self, mon);
}

static inline int lb_spin_unlock_fast(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_spinlock_unlock(lock, site);
    int word;
    lb_mon_t *mon = lb_spin_mon_to_release(self, lock, &word);
    if (lb_unlikely(!mon))
        return lb_spinlock_unlock(lock, site);
    lb_site_t *s = lb_site_probe_last(self, lb_site_key(site, LB_OBJ_SPIN), &self->last_site_key,
                                      &self->last_site);
    if (lb_unlikely(!s))
        return lb_spinlock_unlock(lock, site); /* counts the release itself */
    s->releases++;
    if (lb_unlikely(lb_release_needs_accounting(mon)))
        return lb_spin_release_accounted(self, mon, lock, word, site);
    __atomic_store_n(lock, word, __ATOMIC_RELEASE);
    return 0;
}
#endif
