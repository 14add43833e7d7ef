/* Dual-representation spin locks (thesis ch. 6.4.3, Algorithms 6.2-6.5).
 *
 * The 32-bit lock word holds one of:
 *   LB_SPIN_UNLOCKED (1)                        native, unlocked
 *   LB_SPIN_LOCKED (0), or any other value      native, locked (glibc's
 *     that is not ours                          x86-64 code treats every
 *                                               value but 1 as locked)
 *   LB_SPIN_MON_BASE + (index << 1) + held      a monitored lock: the held
 *                                               bit is the lock itself, the
 *                                               lb_mon only accounts
 * We interpose every pthread_spin_* call, so the program never runs
 * glibc's spin code on these words.
 *
 * A value is "ours" when it is in the monitored range and its index is a
 * pool slot handed out already: live, or stale (memcpy'd or reused
 * memory; the held bit is still the lock's state). Anything else, such as
 * an uninitialised 0x41414141, is a native value and gets glibc's
 * behaviour: trylock EBUSY, lock decrements until it takes the lock at 0,
 * unlock stores 1.
 *
 * Invariants:
 *   - A word changes from native to monitored only by the CAS in convert(),
 *     which keeps the current state in the held bit; it goes back to
 *     native only in init/destroy (or demote_stale).
 *   - Every change of the word is a CAS or a store by the holder (unlock),
 *     so a concurrent conversion is never lost: a failed CAS re-reads the
 *     word and takes the branch for what it now is.
 *   - The lock is shared through the word alone, so a process-private lock
 *     in shared memory keeps excluding across fork (each process accounts
 *     in its own copy of the pool).
 *   - Waiting is timed only after the first failed attempt; the accrual
 *     rule is the same blame clock as for mutexes.
 *   - A thread notes the monitored lock it acquired last, its lb_mon and
 *     its word (lb_thread.spin_held, spin_ops.h), until it acquires
 *     another, or destroys or re-initialises it; the release stores the
 *     noted word instead of reading it back (the read would wait for the
 *     acquiring CAS), and the next lock of the same lock tries one CAS on
 *     it. The noted lb_mon is checked to belong to the lock (at most one
 *     live lb_mon per address, and it is the one the word refers to: only
 *     destroy, re-init and the orphan sweep change the word's index bits
 *     or retire it, and retiring clears its addr); a CAS on the noted word
 *     fails if the word changed anyway (a memcpy'd lock), and the word is
 *     then looked up again. */
#include "locks/spin_ops.h"

#include <errno.h>

#include "blame/blame.h"
#include "blame/spin_sampled.h"
#include "core/phase.h"
#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "locks/monitored.h"
#include "locks/objmap.h"
#include "sampler/sampler.h"

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

/* A monitored-range value whose index is a slot handed out (live or
 * stale); see the header comment. */
static bool word_is_ours(int word)
{
    if (!lb_spin_word_is_monitored(word))
        return false;
    uint32_t index = (uint32_t)(word - LB_SPIN_MON_BASE) >> 1;
    return index >= 1 && index <= lb_mon_slots_used() && lb_mon_at(index) != NULL;
}

/* Algorithm 6.2: install a monitored lock with one CAS, keeping the
 * current state (native, or a stale word's held bit) in the held bit.
 * Returns NULL (lock stays native) when lockblame is not running, has no
 * memory, or the word is a native value that is neither 1 nor 0 (glibc
 * semantics for those are kept by the native paths). A word that refers
 * to someone else's lb_mon (memcpy'd lock) is replaced. */
LB_COLD static lb_mon_t *convert(pthread_spinlock_t *lock)
{
    if (!lb_runtime_monitoring() || is_pshared(lock))
        return NULL;
    int first = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
    if (first != LB_SPIN_UNLOCKED && first != LB_SPIN_LOCKED && !word_is_ours(first))
        return NULL;
    lb_mon_t *fresh = lb_mon_alloc((const void *)lock, LB_OBJ_SPIN);
    if (!fresh)
        return NULL;
    int want = lb_spin_word_of_index(lb_mon_index(fresh));
    for (;;) {
        int seen = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
        int held;
        if (word_is_ours(seen)) {
            lb_mon_t *winner = lb_spin_mon_of_word(seen, lock);
            if (winner) {
                lb_mon_free(fresh);
                return winner;
            }
            held = seen & LB_SPIN_HELD;
        } else if (seen == LB_SPIN_UNLOCKED || seen == LB_SPIN_LOCKED) {
            held = seen == LB_SPIN_LOCKED ? LB_SPIN_HELD : 0;
        } else {
            lb_mon_free(fresh); /* a native value of another kind: stays native */
            return NULL;
        }
        if (__atomic_compare_exchange_n(lock, &seen, want | held, false, __ATOMIC_ACQ_REL,
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
    int state = word & LB_SPIN_HELD ? LB_SPIN_LOCKED : LB_SPIN_UNLOCKED;
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
    if (!mon && word_is_ours(word))
        demote_stale(lock, word);
    return mon;
}

/* Spin on a monitored word until the held bit is ours (test-and-test-
 * and-set). The word never leaves the monitored form while in use.
 * Returns the word acquired (held bit clear). */
static inline int word_acquire(pthread_spinlock_t *lock)
{
    for (;;) {
        int w = __atomic_load_n(lock, __ATOMIC_RELAXED);
        if (lb_spin_word_try_acquire(lock, w))
            return w;
        __builtin_ia32_pause();
    }
}

/* Algorithm 6.3, monitored branch after a failed first attempt: spin
 * with the wait accounted, by samples where the lock is sampled
 * (blame/spin_sampled.h: nothing then runs in anyone's hold), else by
 * timestamps. site: the wrapper's return address. */
LB_NOINLINE static void mon_acquire_contended(lb_thread_t *self, lb_mon_t *mon,
                                              pthread_spinlock_t *lock, uintptr_t site)
{
    lb_spin_outer_t outer = lb_spin_sampled_outer(self);
    if (lb_spin_wait_sampled(mon) && lb_spin_sampled_wait_begin(self, mon, site)) {
        int word = word_acquire(lock);
        lb_spin_sampled_wait_end(self, outer);
        lb_spin_note_held(self, lock, mon, word);
        return;
    }
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_SPIN, &wait);
    int word = word_acquire(lock);
    lb_wait_end(self, &wait, true);
    lb_spin_note_held(self, lock, mon, word);
}

/* The calling thread no longer holds what it noted as held: `lock` is
 * released, destroyed or re-initialised. */
static inline void forget_held(lb_thread_t *self, const pthread_spinlock_t *lock)
{
    if (self && self->spin_held == lock)
        self->spin_held = NULL;
}

/* Native acquisition attempt; tolerates a concurrent conversion.
 * Returns 1 acquired, 0 busy, -1 the word became ours. */
static inline int native_try(pthread_spinlock_t *lock)
{
    int expected = LB_SPIN_UNLOCKED;
    if (__atomic_compare_exchange_n(lock, &expected, LB_SPIN_LOCKED, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
        return 1;
    return word_is_ours(expected) ? -1 : 0;
}

/* glibc's x86-64 pthread_spin_lock on a native word: decrement; the
 * decrement that reaches 0 takes the lock; while the value is <= 0, spin.
 * (So an uninitialised positive value is counted down, as natively.) Done
 * by CAS so a concurrent conversion is seen. Returns 1 acquired, -1 the
 * word became ours. */
static int native_lock(pthread_spinlock_t *lock)
{
    int w = __atomic_load_n(lock, __ATOMIC_RELAXED);
    for (;;) {
        if (word_is_ours(w))
            return -1;
        if (w <= 0) {
            __builtin_ia32_pause();
            w = __atomic_load_n(lock, __ATOMIC_RELAXED);
            continue;
        }
        if (__atomic_compare_exchange_n(lock, &w, w - 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED) &&
            w == 1)
            return 1;
        if (w != 1 && w > 0) /* our decrement landed, not yet at 0 */
            w = __atomic_load_n(lock, __ATOMIC_RELAXED);
    }
}

/* self acquired mon's lock without waiting: a hold that others wait
 * through is accounted, and the acquisition counted. */
static void note_acquired(lb_thread_t *self, lb_mon_t *mon)
{
    if (lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0))
        lb_hold_begins(self, mon);
    lb_spin_count_acquisition(self, mon);
}

int lb_spinlock_lock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (lb_likely(mon != NULL)) {
            int word = __atomic_load_n(lock, __ATOMIC_RELAXED);
            if (lb_likely(lb_spin_word_try_acquire(lock, word))) {
                if (self) {
                    lb_spin_note_held(self, lock, mon, word);
                    note_acquired(self, mon);
                }
                return 0;
            }
            if (self && !self->busy) {
                mon_acquire_contended(self, mon, lock, site);
                lb_spin_count_acquisition(self, mon);
                return 0;
            }
            word_acquire(lock);
            return 0;
        }
        if (native_lock(lock) == 1)
            return 0;
    }
}

/* Algorithm 6.4. */
int lb_spinlock_trylock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (mon) {
            int word = __atomic_load_n(lock, __ATOMIC_RELAXED);
            if (!lb_spin_word_try_acquire(lock, word))
                return EBUSY;
            if (self) {
                lb_spin_note_held(self, lock, mon, word);
                note_acquired(self, mon);
            }
            return 0;
        }
        int r = native_try(lock);
        if (r >= 0)
            return r ? 0 : EBUSY;
    }
}

int lb_spin_release_accounted(lb_thread_t *self, lb_mon_t *mon, pthread_spinlock_t *lock, int word,
                              uintptr_t site)
{
    lb_release_blame(self, mon, LB_OBJ_SPIN, site); /* before: a spinning waiter races the rest */
    __atomic_store_n(lock, word, __ATOMIC_RELEASE);
    return 0;
}

/* Algorithm 6.5. Like glibc, unlocking an unlocked lock is not an error. */
int lb_spinlock_unlock(pthread_spinlock_t *lock, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    forget_held(self, lock);
    for (;;) {
        lb_mon_t *mon = mon_for(lock, self);
        if (lb_likely(mon != NULL)) {
            int free_word = lb_spin_word_of_index(lb_mon_index(mon));
            if (lb_likely(self && !self->busy)) {
                lb_site_count_release(self, site, LB_OBJ_SPIN);
                if (lb_unlikely(lb_release_needs_accounting(mon))) {
                    lb_spin_release_accounted(self, mon, lock, free_word, site);
                    return 0;
                }
            }
            __atomic_store_n(lock, free_word, __ATOMIC_RELEASE);
            return 0;
        }
        /* Native: any value that is not ours (glibc's decrementing lock
         * in another process may leave negatives; an uninitialised word)
         * becomes UNLOCKED, by CAS so a concurrent conversion is never
         * overwritten. */
        int seen = __atomic_load_n(lock, __ATOMIC_RELAXED);
        while (!word_is_ours(seen)) {
            if (__atomic_compare_exchange_n(lock, &seen, LB_SPIN_UNLOCKED, false, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED))
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
    if (mon && __atomic_compare_exchange_n(lock, &word, LB_SPIN_UNLOCKED, false, __ATOMIC_ACQ_REL,
                                           __ATOMIC_RELAXED))
        lb_mon_retire(mon);
}

int lb_spinlock_init(pthread_spinlock_t *lock, int pshared)
{
    forget_held(lb_self, lock);
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
    forget_held(lb_self, lock);
    retire_word(lock);
    lb_objmap_retire((const void *)lock);
    __atomic_store_n(lock, LB_SPIN_UNLOCKED, __ATOMIC_RELEASE);
    return 0;
}

int lb_spin_lock_contended(lb_thread_t *self, lb_mon_t *mon, pthread_spinlock_t *lock,
                           uintptr_t site)
{
    mon_acquire_contended(self, mon, lock, site);
    lb_spin_count_acquisition(self, mon);
    return 0;
}

int lb_spin_acquired_with_waiters(lb_thread_t *self, lb_mon_t *mon)
{
    note_acquired(self, mon);
    return 0;
}

/* The sampler's spin hook (sampler.h): a sample of a thread in a sampled
 * spin wait, the lock held or not as its word says now. The lock's memory
 * is live: the thread is spinning on it. */
static void spin_sample(lb_thread_t *t, lb_cct_node_t *node, uint64_t ns)
{
    const lb_mon_t *mon = t->spin_sampled;
    int word = __atomic_load_n((const int *)mon->addr, __ATOMIC_RELAXED);
    lb_spin_sampled_account(t, node, ns, (word & LB_SPIN_HELD) != 0);
}

void lb_spin_sampling_setup(void)
{
    lb_spin_sampled_setup();
    if (lb_spin_mode != LB_SAMPLED_EXACT)
        lb_sampler_spin_hook = spin_sample;
}
