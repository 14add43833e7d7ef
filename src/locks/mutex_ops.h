/* Monitored pthread mutexes: the logic behind the exported wrappers.
 * Every function returns exactly what the real glibc call returned.
 *
 * Where the state lives: glibc's pthread_mutex_t keeps a robust-list link
 * (__data.__list) that glibc reads and writes only for robust mutexes.
 * For the kinds we monitor (normal, recursive, errorcheck, adaptive; not
 * robust, priority-inherit/-protect or process-shared) we keep our state
 * in its two words: __list.__prev counts acquisitions, and __list.__next
 * (the stash) says what else there is:
 *   0                      native: not used since init (or not monitored)
 *   lb_mutex_counted_tag   counted: acquisitions are counted, no lb_mon
 *   offset | LB_STASH_TAG  the lb_mon holding the blame state, as its byte
 *                          offset in the pool (lb_mutex_stash_of)
 *   ... | LB_STASH_QUIET   with it: that lb_mon has nothing for the fast
 *                          paths now (blame/mutex_quiet.h), which then
 *                          treat the mutex as counted
 * A mutex becomes counted at its first operation (one store, a CAS once
 * threads exist) and gets an lb_mon only when it first needs one: at its
 * first contention (a lock or timedlock that must wait). Most locks are
 * never contended, so they never cost an lb_mon, its allocation or its
 * retirement (lock churn: init, lock, unlock, destroy). Nobody can be
 * waiting on a counted mutex, so its lock and unlock need no blame
 * accounting; the conversion at the first wait begins the holder's
 * accounting (wait_begins, blame/blame.c), exactly as for a holder that
 * acquired while no one waited on an lb_mon.
 * The counted tag changes in a fork child (lb_mutex_fork_child), so the
 * parent's counted mutexes start over there; pthread_mutex_init clears
 * both words, so a re-initialized mutex starts native again. A stale lb_mon
 * tag (memcpy'd mutex, reused memory) is detected by lb_mon.addr != the
 * mutex; such a mutex starts counting again from 0.
 *
 * Counts: every acquisition is counted twice, in the mutex (its object
 * record's figure, should it get one) and in the acquiring thread's
 * per-kind total (lb_thread.unrecorded_acquisitions: no registry of
 * counted mutexes is needed to find those still alive at exit); a count
 * folded into an object record is taken back out of the totals
 * (lifecycle.c).
 *
 * The fast paths below are inline: the uncontended lock is glibc's own
 * CAS step (plain stores while the process is single-threaded, as glibc
 * does), then a load of the stash (with an lb_mon that is not quiet:
 * its waiter test) and the two counts; the uncontended unlock of a
 * counted mutex is a load of the stash (with an lb_mon that is not quiet:
 * plus the needs-accounting test), then glibc's own release step (inline for
 * NORMAL mutexes too) and one site-count increment, after the release's
 * exchange in a threaded process. Neither takes a timestamp or an extra
 * atomic read-modify-write. Slow paths live in mutex_ops.c. */
#ifndef LB_MUTEX_OPS_H
#define LB_MUTEX_OPS_H
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "blame/blame.h"
#include "blame/mutex_quiet.h"
#include "blame/sites.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/monitored.h"
#include "util/timeout.h"

int lb_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
int lb_mutex_destroy(pthread_mutex_t *m);
int lb_mutex_trylock(pthread_mutex_t *m, uintptr_t site);
/* timedlock (clock LB_WAIT_REALTIME) and clocklock share one path. */
int lb_mutex_timedlock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       uintptr_t site);

/* For condition-variable waits, which release and re-acquire m inside
 * glibc. m is about to be released inside glibc by a wait that began at
 * `now`: its hold ends then (one clock read for both), and the blame owed
 * (none: blame_ns 0) is deposited by the caller on the wait's calling
 * context (lb_deposit_at) once it has found it. / m was re-acquired
 * inside glibc, at or just before `now` (the end of that wait). */
lb_hold_t lb_mutex_releasing_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now);
void lb_mutex_acquired_inside(lb_thread_t *self, pthread_mutex_t *m, uint64_t now);
/* The final write: take a live mutex's in-object count into its lb_mon
 * (read without faulting: the mutex's memory may be gone). */
void lb_mutex_fold_count(lb_mon_t *mon);
/* Fork child: the parent's counted mutexes are counted afresh. */
void lb_mutex_fork_child(void);

/* Slow paths (mutex_ops.c). lb_mutex_counted makes m counted if it is
 * not (native, a stale lb_mon, a parent's tag) and returns false, leaving
 * m native, when m's kind is not monitored or lockblame is not running;
 * *mon is m's lb_mon, NULL while m has none. lb_mutex_convert gives a
 * mutex its lb_mon (NULL, leaving m as it was, if it cannot). */
bool lb_mutex_counted(pthread_mutex_t *m, lb_mon_t **mon);
lb_mon_t *lb_mutex_convert(pthread_mutex_t *m);
bool lb_mutex_acquire_is_nested(const pthread_mutex_t *m);
/* began: when the lock call began (lb_now_ns), 0 if not read yet; site:
 * the lock call's return address, 0 if unknown (a sampled wait then
 * reads the clock before its first exchange). */
int lb_mutex_lock_contended(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon, clockid_t clock,
                            const struct timespec *abstime, bool timed, uint64_t began,
                            uintptr_t site);
int lb_mutex_unlock_accounted(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon, uintptr_t site);
/* The whole lock/unlock, out of line: first use, kinds other than
 * NORMAL, a site-table miss, an lb_mon in a single-threaded process. */
int lb_mutex_lock_general(lb_thread_t *self, pthread_mutex_t *m);
/* The real lock, trylock-free: pthread_mutex_lock, or with a timeout on
 * clock (LB_WAIT_REALTIME: timedlock) when timed. */
int lb_mutex_real_lock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime,
                       bool timed);
int lb_mutex_unlock_general(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site);
/* The threaded fast path's exits (see lb_mutex_lock): its attempt on a
 * NORMAL mutex failed (wait: converting a counted m first), or succeeded
 * on an m that is native (first use), has a stale stash, or has an lb_mon
 * with waiters (stash value v, read after the attempt). */
int lb_mutex_lock_missed(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site);
int lb_mutex_acquired_unusual(lb_thread_t *self, pthread_mutex_t *m, uintptr_t v);
/* self just acquired counted m without waiting (trylock, timedlock, or
 * the inline attempt when the stash changed meanwhile): the stash as it
 * is now tells whether anyone waits (an lb_mon may have arrived). */
int lb_mutex_acquired_now(lb_thread_t *self, pthread_mutex_t *m);
/* A native NORMAL mutex's first lock (lock churn: every lock's). */
int lb_mutex_lock_first(lb_thread_t *self, pthread_mutex_t *m);

/* (LB_STASH_TAG and LB_STASH_QUIET: blame/mutex_quiet.h.) The counted
 * tag: bit 1 set, bit 0 clear (no lb_mon), a fork generation above; read
 * by every fast path. */
#define LB_STASH_COUNTED    ((uintptr_t)2)
#define LB_STASH_GENERATION ((uintptr_t)4)
extern uintptr_t lb_mutex_counted_tag;

/* The bits of a stash value that hold an lb_mon's offset in the pool. */
#define LB_STASH_OFFSETS ((uintptr_t)(LB_MON_SLOTS - 1) * sizeof(lb_mon_t))

/* The stash value that names mon: its byte offset in the pool, tagged. An
 * offset rather than the pointer lets the fast paths find the lb_mon with
 * one mask and one add, and no range test: any value that is the tag
 * outside LB_STASH_OFFSETS lands inside the pool's reservation, which is
 * readable (a slot never handed out, slot 0 included, reads addr NULL). */
static inline uintptr_t lb_mutex_stash_of(const lb_mon_t *mon)
{
    return ((uintptr_t)mon - (uintptr_t)lb_mon_pool.base) | LB_STASH_TAG;
}

/* May the fast paths treat a mutex whose stash holds v as counted? It is
 * counted, or its lb_mon is quiet. */
static inline bool lb_mutex_stash_is_quiet(uintptr_t v)
{
    return v == lb_mutex_counted_tag ||
           (v & (LB_STASH_TAG | LB_STASH_QUIET)) == (LB_STASH_TAG | LB_STASH_QUIET);
}

/* The lb_mon a stash value refers to (quiet or not), if it still
 * belongs to m. Without a pool (LOCKBLAME_DISABLE, or a mutex initialized
 * before lockblame's constructor) there is none: a program's own data in
 * those words (heap memory reused for a mutex) must not be followed into
 * an unmapped pool. */
static inline lb_mon_t *lb_mutex_mon_of_stash(uintptr_t v, const pthread_mutex_t *m)
{
    if ((v & ~(LB_STASH_OFFSETS | LB_STASH_QUIET)) != LB_STASH_TAG)
        return NULL;
    uintptr_t base = (uintptr_t)lb_mon_pool.base;
    if (lb_unlikely(!base))
        return NULL;
    lb_mon_t *mon = (lb_mon_t *)(base + (v & LB_STASH_OFFSETS));
    return mon->addr == m ? mon : NULL;
}

/* The acquisition counter of a monitored mutex lives in the mutex itself,
 * in __list.__prev, which glibc also leaves alone for the kinds we
 * monitor: that cache line is written by every lock anyway, while a write
 * to the lb_mon would make a second line ping-pong between threads on
 * every acquisition (+70% in a 2-thread lock mix). Written by the holder
 * only; folded into an object record at destroy/init and at the final
 * write. */
static inline uint64_t *lb_mutex_acquisitions(pthread_mutex_t *m)
{
    return (uint64_t *)&m->__data.__list.__prev;
}

/* One acquisition by self, in both places (see the top of this file). */
static inline void lb_mutex_count_acquisition(lb_thread_t *self, pthread_mutex_t *m)
{
    ++*lb_mutex_acquisitions(m);
    ++self->unrecorded_acquisitions[LB_OBJ_MUTEX];
}

/* One acquisition attempt that never blocks; returns 0, EBUSY or the real
 * trylock's error. For a plain PTHREAD_MUTEX_NORMAL mutex (__kind == 0:
 * no recursion, error checking, robustness, priority or elision flags)
 * this is glibc's own uncontended path, done inline: CAS __lock 0 -> 1,
 * then record the owner and count the user, exactly as
 * pthread_mutex_lock does, leaving a state the real unlock accepts. It
 * saves the real trylock, which costs about 3 ns more than lock here.
 * Every other kind goes through the real trylock. */
static inline bool lb_mutex_normal_try(const lb_thread_t *self, pthread_mutex_t *m)
{
    int unlocked = 0;
    if (!__atomic_compare_exchange_n(&m->__data.__lock, &unlocked, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    m->__data.__owner = self->tid;
    ++m->__data.__nusers;
    return true;
}

static inline int lb_mutex_try_acquire(const lb_thread_t *self, pthread_mutex_t *m)
{
    if (lb_likely(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) == 0))
        return lb_mutex_normal_try(self, m) ? 0 : EBUSY;
    return lb_real.mutex_trylock(m);
}

/* self acquired m without waiting; mon is m's lb_mon, or NULL if it has
 * none (nobody waits then). */
static inline void lb_mutex_note_acquired(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon)
{
    if (mon && lb_unlikely(__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0) &&
        !lb_mutex_acquire_is_nested(m))
        lb_hold_begins_deferred(mon);
    lb_mutex_count_acquisition(self, m);
}

/* Wakes one waiter of a NORMAL mutex whose lock word was 2 (glibc's
 * __lll_lock_wake for a private futex); returns 0 (the unlock's result),
 * errno left as it was. */
int lb_mutex_wake_one(pthread_mutex_t *m);

/* The release of a PTHREAD_MUTEX_NORMAL mutex (__kind == 0), as glibc
 * 2.36's __pthread_mutex_unlock_usercnt does it in a threaded process:
 * owner cleared, user count decremented, the lock word exchanged with 0,
 * and a futex wake when it was 2 (someone may sleep on it). Done inline
 * to save the call into glibc and its kind tests (~25 instructions of
 * the pair's ~140). */
static inline int lb_mutex_normal_unlock(pthread_mutex_t *m)
{
    m->__data.__owner = 0;
    --m->__data.__nusers;
    if (lb_unlikely(__atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE) > 1))
        return lb_mutex_wake_one(m); /* a tail call: the fast path stays a leaf */
    return 0;
}

/* PTHREAD_MUTEX_NORMAL in a single-threaded process, as glibc 2.36 does
 * it (pthread_mutex_lock.c with x86's lll_lock: no atomic instruction
 * while __libc_single_threaded): a free lock word becomes 1 with a plain
 * store, then owner and user count as on the threaded path. A taken word
 * (relocking a NORMAL mutex: a self-deadlock) goes to glibc. Only this
 * thread can make the process multi-threaded, so the flag cannot change
 * under us. */
static inline int lb_mutex_lock_single(lb_thread_t *self, pthread_mutex_t *m)
{
    if (lb_unlikely(m->__data.__lock != 0))
        return lb_mutex_lock_general(self, m);
    m->__data.__lock = 1;
    m->__data.__owner = self->tid;
    ++m->__data.__nusers;
    lb_mutex_count_acquisition(self, m);
    return 0;
}

/* The release half, glibc 2.36's __pthread_mutex_unlock_usercnt for a
 * NORMAL mutex while single-threaded: owner cleared, user count
 * decremented, lock word stored 0 (nobody can be waiting). */
static inline int lb_mutex_unlock_single(pthread_mutex_t *m)
{
    m->__data.__owner = 0;
    --m->__data.__nusers;
    m->__data.__lock = 0;
    return 0;
}

/* A thread lockblame does not monitor (none yet, or inside lockblame):
 * the real call, resolving lb_real first if nothing has yet (a lock
 * before our constructor; returns 0 without locking if resolution is
 * already running on this thread, as ENSURE_REAL in exports.c). */
int lb_mutex_lock_unmonitored(pthread_mutex_t *m);
int lb_mutex_unlock_unmonitored(pthread_mutex_t *m);

/* The fast paths below are leaf functions: everything that may call out
 * (first use, conversion, other kinds, a site-table miss, waiters) leaves
 * through a tail call, so the common case saves no registers and builds
 * no frame.
 *
 * The threaded lock tries the lock word first, as glibc does, and reads
 * the stash only once it holds m (or failed): between the previous
 * release of m and this attempt run only the kind and single-threaded
 * tests. Every instruction in that window is a chance for a woken waiter
 * to take the lock and makes hand-offs more frequent than natively
 * (docs/PERFORMANCE.md, "Uncontended fast paths"). The stash read after a successful
 * attempt is also the state that counts: a waiter that converted m
 * before the attempt may wait already. A hold that begins with waiters
 * present reads its start inside the hold (lb_hold_begins_deferred): only
 * exact waiters count in mon->waiters, and they are the slow case. */

static inline int lb_mutex_lock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->busy))
        return lb_mutex_lock_unmonitored(m);
    if (lb_unlikely(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != 0))
        return lb_mutex_lock_general(self, m);
    if (lb_unlikely(__libc_single_threaded)) {
        /* One thread: glibc's single-threaded step, nobody waits. */
        uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_RELAXED);
        if (lb_likely(v == lb_mutex_counted_tag))
            return lb_mutex_lock_single(self, m);
        if (v == 0)
            return lb_mutex_lock_first(self, m);
        return lb_mutex_lock_general(self, m);
    }
    /* PTHREAD_MUTEX_NORMAL: glibc's own uncontended step, see
     * lb_mutex_try_acquire. */
    if (lb_unlikely(!lb_mutex_normal_try(self, m)))
        return lb_mutex_lock_missed(self, m, site);
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    if (lb_likely(lb_mutex_stash_is_quiet(v))) {
        lb_mutex_count_acquisition(self, m); /* no lb_mon, or a quiet one: nobody waits */
        return 0;
    }
    lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
    if (lb_unlikely(!mon || __atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0))
        return lb_mutex_acquired_unusual(self, m, v);
    lb_mutex_count_acquisition(self, m);
    return 0;
}

/* glibc's own release step for m, done inline for a NORMAL mutex (the
 * single-threaded or the threaded one), else the real unlock. */
static inline int lb_mutex_release(pthread_mutex_t *m)
{
    if (lb_likely(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) == 0))
        return __libc_single_threaded ? lb_mutex_unlock_single(m) : lb_mutex_normal_unlock(m);
    return lb_real.mutex_unlock(m);
}

/* Out of line (mutex_ops.c): the unlock of a monitored m that needs no
 * accounting, counted at site first: other kinds than NORMAL, or a site
 * other than the one counted last. */
int lb_mutex_unlock_counting(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site);
/* After the release step's exchange (word: the lock word it took), at a
 * site other than the one counted last: the count, then the wake when
 * word was 2; returns 0. */
int lb_mutex_released_counting(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site, int word);
/* The accounted release (lb_mutex_unlock_accounted), counted at site
 * first. */
int lb_mutex_unlock_accounted_at(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                                 uintptr_t site);

/* The unlock of a monitored thread (busy clear), whatever its deferred
 * state. Only the stash's test (with an lb_mon, also its needs-accounting
 * test) runs inside the hold: a NORMAL mutex in a threaded process is
 * counted at its site after glibc's release step (lb_mutex_normal_unlock),
 * between the exchange and the wake, where the count does not lengthen
 * the hold. */
static inline int lb_mutex_unlock_monitored(lb_thread_t *self, pthread_mutex_t *m, uintptr_t site)
{
    uintptr_t v = __atomic_load_n(lb_mutex_stash(m), __ATOMIC_ACQUIRE);
    if (lb_unlikely(!lb_mutex_stash_is_quiet(v))) {
        /* (counted or quiet: no hold to account, nobody waits. A
         * conversion racing this unlock is a waiter arriving just after
         * the test, as with an lb_mon's needs-accounting test.) */
        lb_mon_t *mon = lb_mutex_mon_of_stash(v, m);
        if (lb_unlikely(!mon))
            return lb_mutex_unlock_general(self, m, site);
        if (lb_unlikely(lb_release_needs_accounting(mon)))
            return lb_mutex_unlock_accounted_at(self, m, mon, site);
    }
    uintptr_t key = lb_site_key(site, LB_OBJ_MUTEX);
    if (lb_unlikely(__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) != 0))
        return lb_mutex_unlock_counting(self, m, site);
    if (lb_unlikely(__libc_single_threaded)) {
        if (lb_unlikely(self->last_site_key != key))
            return lb_mutex_unlock_counting(self, m, site);
        self->last_site->releases++;
        return lb_mutex_unlock_single(m);
    }
    m->__data.__owner = 0;
    --m->__data.__nusers;
    int word = __atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE);
    if (lb_unlikely(self->last_site_key != key))
        return lb_mutex_released_counting(self, m, site, word);
    self->last_site->releases++;
    if (lb_unlikely(word > 1))
        return lb_mutex_wake_one(m); /* a tail call: the fast path stays a leaf */
    return 0;
}

/* The unlock of a thread that is busy, unmonitored, or has a deferred
 * wait end (blame/wait_deferred.h), which runs after m's release if it
 * was waiting on m's cond. */
int lb_mutex_unlock_gated(pthread_mutex_t *m, uintptr_t site);

static inline int lb_mutex_unlock(pthread_mutex_t *m, uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (lb_unlikely(!self || self->gate))
        return lb_mutex_unlock_gated(m, site);
    return lb_mutex_unlock_monitored(self, m, site);
}
#endif
