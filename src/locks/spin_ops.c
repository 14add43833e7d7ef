/* Dual-representation spin locks (thesis ch. 6.4.3, Algorithms 6.2-6.5).
 *
 * The 32-bit lock word holds one of:
 *   LB_SPIN_UNLOCKED (1) / LB_SPIN_LOCKED (0)   native, glibc's x86-64 values
 *   LB_SPIN_MON_BASE + pool index               a monitored lock; the real
 *                                               lock word is lb_mon.spin_word
 * We interpose every pthread_spin_* call, so the program never runs
 * glibc's spin code on these words.
 *
 * Invariants:
 *   - A word changes from native to monitored only by the CAS in convert(),
 *     which copies the current native state into spin_word first; it goes
 *     back to native only in init/destroy.
 *   - Native acquire and release use CAS, never swap or plain store, so they
 *     tolerate a concurrent conversion (a failed CAS re-reads the word and
 *     takes the monitored branch). Monitored operations may swap, because a
 *     monitored word never reverts while the lock is in use.
 *   - Waiting is timed only after the first failed attempt; the accrual
 *     rule is the same blame clock as for mutexes. */
#include "locks/spin_ops.h"

#include <errno.h>

#include "blame/blame.h"
#include "core/phase.h"
#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "locks/monitored.h"
#include "locks/objmap.h"

/* Process-shared spin locks stay native: another process cannot follow a
 * pool index of ours. The 32-bit word has no room for a mark, so pshared
 * locks are remembered at init as a marker entry in the object map (spin
 * locks otherwise never use it). Before lockblame runs the map cannot
 * create entries; those few early ones go into a small array (a full array
 * is counted in pshared_overflow). */
#define LB_PSHARED_EARLY 64
static uintptr_t pshared_early[LB_PSHARED_EARLY];
static uint32_t pshared_early_count;
static uint32_t pshared_overflow;

static void remember_pshared(const pthread_spinlock_t *lock)
{
    if (lb_objmap_get((const void *)lock, LB_OBJ_SPIN))
        return;
    uint32_t i = __atomic_fetch_add(&pshared_early_count, 1, __ATOMIC_ACQ_REL);
    if (i < LB_PSHARED_EARLY)
        __atomic_store_n(&pshared_early[i], (uintptr_t)lock, __ATOMIC_RELEASE);
    else
        __atomic_fetch_add(&pshared_overflow, 1, __ATOMIC_RELAXED);
}

static bool is_pshared(const pthread_spinlock_t *lock)
{
    if (lb_objmap_find((const void *)lock))
        return true;
    uint32_t n = __atomic_load_n(&pshared_early_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < LB_PSHARED_EARLY; i++) {
        if (__atomic_load_n(&pshared_early[i], __ATOMIC_ACQUIRE) == (uintptr_t)lock)
            return true;
    }
    return false;
}

/* Algorithm 6.2: install a monitored lock with one CAS, copying the
 * current native state. Returns NULL (lock stays native) when lockblame is
 * not running or has no memory. A word that refers to someone else's
 * lb_mon (memcpy'd lock) is replaced. */
LB_COLD static lb_mon_t *convert(pthread_spinlock_t *lock)
{
    if (!lb_runtime_monitoring() || is_pshared(lock))
        return NULL;
    lb_mon_t *fresh = lb_mon_alloc((const void *)lock, LB_OBJ_SPIN);
    if (!fresh)
        return NULL;
    int want = LB_SPIN_MON_BASE + (int)lb_mon_index(fresh);
    for (;;) {
        int seen = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
        if (lb_spin_word_is_monitored(seen)) {
            lb_mon_t *winner = lb_spin_mon_of_word(seen, lock);
            if (winner) {
                lb_mon_free(fresh);
                return winner;
            }
            lb_mon_t *stale = lb_mon_at((uint32_t)(seen - LB_SPIN_MON_BASE));
            fresh->spin_word = stale ? __atomic_load_n(&stale->spin_word, __ATOMIC_ACQUIRE)
                                     : LB_SPIN_UNLOCKED;
        } else {
            fresh->spin_word = seen == LB_SPIN_UNLOCKED ? LB_SPIN_UNLOCKED : LB_SPIN_LOCKED;
        }
        if (__atomic_compare_exchange_n(lock, &seen, want, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            lb_mon_published(fresh, (const void *)lock);
            return fresh;
        }
    }
}

/* The word refers to an lb_mon that is not this lock's (the lock was
 * memcpy'd, or its memory reused) and it cannot be converted now (not
 * running, or no memory): put the copied state back as a native value, so
 * the native protocol can make progress. A concurrent change wins. */
LB_COLD static void demote_stale(pthread_spinlock_t *lock, int word)
{
    lb_mon_t *stale = lb_mon_at((uint32_t)(word - LB_SPIN_MON_BASE));
    int state = stale && __atomic_load_n(&stale->spin_word, __ATOMIC_ACQUIRE) == LB_SPIN_LOCKED
                    ? LB_SPIN_LOCKED
                    : LB_SPIN_UNLOCKED;
    __atomic_compare_exchange_n(lock, &word, state, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/* The monitored lock for this word, converting on demand; NULL = native. */
static inline lb_mon_t *mon_for(pthread_spinlock_t *lock, const lb_thread_t *self)
{
    int word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    if (lb_likely(lb_spin_word_is_monitored(word))) {
        lb_mon_t *mon = lb_spin_mon_of_word(word, lock);
        if (lb_likely(mon != NULL))
            return mon;
    }
    lb_mon_t *mon = self && !self->busy ? convert(lock) : NULL;
    if (!mon && lb_spin_word_is_monitored(word))
        demote_stale(lock, word);
    return mon;
}

/* Algorithm 6.3, monitored branch after a failed first attempt: spin
 * (test-and-test-and-set) with the wait accounted. */
LB_NOINLINE static void mon_acquire_contended(lb_thread_t *self, lb_mon_t *mon)
{
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_SPIN, &wait);
    for (;;) {
        while (__atomic_load_n(&mon->spin_word, __ATOMIC_RELAXED) == LB_SPIN_LOCKED)
            __builtin_ia32_pause();
        if (lb_spin_mon_try_acquire(mon))
            break;
    }
    lb_wait_end(self, &wait, true);
}

/* Native acquisition attempt; tolerates a concurrent conversion.
 * Returns 1 acquired, 0 busy, -1 the word became monitored. */
static inline int native_try(pthread_spinlock_t *lock)
{
    int expected = LB_SPIN_UNLOCKED;
    if (__atomic_compare_exchange_n(lock, &expected, LB_SPIN_LOCKED, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
        return 1;
    return lb_spin_word_is_monitored(expected) ? -1 : 0;
}

int lb_spinlock_lock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (lb_likely(mon != NULL)) {
            if (lb_likely(lb_spin_mon_try_acquire(mon))) {
                if (self)
                    lb_note_acquired(self, mon);
                return 0;
            }
            if (self && !self->busy) {
                mon_acquire_contended(self, mon);
                mon->acquisitions++;
                return 0;
            }
            while (!lb_spin_mon_try_acquire(mon))
                __builtin_ia32_pause();
            return 0;
        }
        /* Native: spin while LOCKED; leave when unlocked or converted. */
        for (;;) {
            int r = native_try(lock);
            if (r == 1)
                return 0;
            if (r < 0)
                break;
            while (__atomic_load_n(lock, __ATOMIC_RELAXED) == LB_SPIN_LOCKED)
                __builtin_ia32_pause();
        }
    }
}

/* Algorithm 6.4. */
int lb_spinlock_trylock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (mon) {
            if (!lb_spin_mon_try_acquire(mon))
                return EBUSY;
            if (self)
                lb_note_acquired(self, mon);
            return 0;
        }
        int r = native_try(lock);
        if (r >= 0)
            return r ? 0 : EBUSY;
    }
}

int lb_spin_release_accounted(lb_thread_t *self, lb_mon_t *mon, uintptr_t site)
{
    lb_hold_t hold = lb_hold_ends(self, mon);
    __atomic_store_n(&mon->spin_word, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
    lb_deposit(self, &hold, LB_OBJ_SPIN, site);
    return 0;
}

/* Algorithm 6.5. Like glibc, unlocking an unlocked lock is not an error. */
int lb_spinlock_unlock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (lb_likely(mon != NULL)) {
            if (lb_likely(self && !self->busy)) {
                lb_site_count_release(self->sites, site, LB_OBJ_SPIN);
                if (lb_unlikely(lb_release_needs_accounting(mon))) {
                    lb_spin_release_accounted(self, mon, site);
                    return 0;
                }
            }
            __atomic_store_n(&mon->spin_word, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
            return 0;
        }
        /* Native: any non-monitored value (glibc's decrementing lock in
         * another process may leave negatives) becomes UNLOCKED, by CAS so
         * a concurrent conversion is never overwritten. */
        int seen = __atomic_load_n(lock, __ATOMIC_RELAXED);
        while (!lb_spin_word_is_monitored(seen)) {
            if (__atomic_compare_exchange_n(lock, &seen, LB_SPIN_UNLOCKED, false,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED))
                return 0;
        }
    }
}

/* Drop the monitored state a word still refers to (destroy, re-init). */
static void retire_word(pthread_spinlock_t *lock)
{
    int word = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    if (!lb_spin_word_is_monitored(word))
        return;
    lb_mon_t *mon = lb_spin_mon_of_word(word, lock);
    if (mon && __atomic_compare_exchange_n(lock, &word, LB_SPIN_UNLOCKED, false,
                                           __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        lb_mon_retire(mon);
}

int lb_spinlock_init(pthread_spinlock_t *lock, int pshared)
{
    retire_word(lock);
    if (pshared != PTHREAD_PROCESS_SHARED)
        lb_objmap_retire((const void *)lock); /* memory that held a pshared lock */
    if (pshared == PTHREAD_PROCESS_SHARED && !is_pshared(lock))
        remember_pshared(lock);
    __atomic_store_n(lock, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
    return 0;
}

int lb_spinlock_destroy(pthread_spinlock_t *lock)
{
    retire_word(lock);
    lb_objmap_retire((const void *)lock);
    __atomic_store_n(lock, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
    return 0;
}

int lb_spin_lock_contended(lb_thread_t *self, lb_mon_t *mon)
{
    mon_acquire_contended(self, mon);
    mon->acquisitions++;
    return 0;
}

int lb_spin_acquired_with_waiters(lb_thread_t *self, lb_mon_t *mon)
{
    lb_note_acquired(self, mon);
    return 0;
}
