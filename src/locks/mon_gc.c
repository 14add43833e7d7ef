/* The orphan sweep.
 *
 * A mutex's lb_mon is referenced only from the mutex (its stash field); a
 * spin lock's only from its lock word. If the program frees the lock's
 * memory, zeroes it or re-initializes it with an initializer instead of
 * pthread_*_destroy/init, that reference disappears and the lb_mon would
 * stay allocated for ever. The sweep finds such orphans: for every
 * published mutex/spin lb_mon it reads the reference back from the
 * object's address and retires the lb_mon when it no longer points at it.
 *
 * Reading an address the program may have unmapped must not fault, so the
 * reads go through process_vm_readv on our own pid, 512 per system call;
 * a batch with an unreadable address is retried one read at a time, and an
 * unreadable object is an orphan.
 *
 * Most reuse happens at the same address (malloc hands freed blocks back
 * out), so conversion catches it first: while the pool is growing (the
 * free list is empty, so locks are not being destroyed), lb_mon_published swaps
 * the new lb_mon's index into a direct-mapped table keyed by address; an
 * lb_mon found there with the same address belongs to nobody any more
 * (the object now references the new one) and is retired on the spot.
 * The sweep is for the rest: memory freed and not reused, or table
 * collisions.
 *
 * Invariants: one sweep at a time (sweeping flag); lb_mons that are not
 * yet published (a conversion between allocation and its CAS) are never
 * touched; retiring races with destroy/init through lb_mon_retire's claim
 * on lb_mon.addr. Sweeps run when the pool's high-water mark has grown by
 * max(1M, live after the last sweep), so their cost is amortized over
 * the conversions that grew it. */
#include "locks/mon_gc.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/hash.h"
#include "locks/lifecycle.h"
#include "locks/monitored.h"
#include "locks/mutex_ops.h"
#include "locks/spin_ops.h"
#include "util/own_memory.h"
#include "util/pages.h"
#include "util/proc_numbers.h"

#define LB_GC_BATCH      512
#define LB_GC_MIN_GROWTH (1u << 20)
#define LB_RECENT_BITS   20
#define LB_RECENT_SLOTS  (1u << LB_RECENT_BITS) /* 4 MiB reserved, touched as used */

static uint32_t *recent
    LB_FORK_WRITTEN; /* address hash -> index of the lb_mon last published there */
static uint32_t sweeping;
static uint32_t next_sweep_at = LB_GC_MIN_GROWTH;
static uint64_t reclaimed;

uint64_t lb_mon_gc_reclaimed(void)
{
    return __atomic_load_n(&reclaimed, __ATOMIC_RELAXED);
}

/* The bits of the word that holds an object's reference to mon that
 * are the object's state, not part of the reference: compared set (see
 * check_batch). A spin lock's held bit; a mutex stash's quiet bit
 * (blame/mutex_quiet.h). */
static uint64_t state_bits(const lb_mon_t *mon)
{
    if (mon->kind == LB_OBJ_SPIN)
        return LB_SPIN_HELD;
    return mon->kind == LB_OBJ_MUTEX ? LB_STASH_QUIET : 0;
}

/* Where the object keeps its reference to mon, how wide it is, and what
 * it holds while the reference is intact. */
static bool reference_of(const lb_mon_t *mon, const void *addr, struct iovec *remote,
                         uint64_t *expected)
{
    if (mon->kind == LB_OBJ_MUTEX) {
        remote->iov_base = lb_mutex_stash((pthread_mutex_t *)addr);
        remote->iov_len = sizeof(uintptr_t);
        *expected = lb_mutex_stash_of(mon) | state_bits(mon);
        return true;
    }
    if (mon->kind == LB_OBJ_SPIN) {
        remote->iov_base = (void *)addr;
        remote->iov_len = sizeof(uint32_t);
        *expected = (uint32_t)(lb_spin_word_of_index(lb_mon_index(mon)) | state_bits(mon));
        return true;
    }
    return false;
}

/* Read n words from our own address space without faulting; ok[i] tells
 * which reads succeeded. */
static void read_back(const struct iovec *remote, uint64_t *value, bool *ok, int n)
{
    struct iovec local[LB_GC_BATCH];
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        value[i] = 0;
        local[i].iov_base = &value[i];
        local[i].iov_len = remote[i].iov_len;
        total += remote[i].iov_len;
    }
    pid_t self = lb_own_pid();
    if (process_vm_readv(self, local, (unsigned long)n, remote, (unsigned long)n, 0) ==
        (ssize_t)total) {
        for (int i = 0; i < n; i++)
            ok[i] = true;
        return;
    }
    for (int i = 0; i < n; i++)
        ok[i] = lb_read_own(remote[i].iov_base, &value[i], remote[i].iov_len);
}

/* Retires the records whose lock no longer refers to them. Each is
 * claimed with the address its reference was read for (addrs[i]): if
 * destroy/init retired it meanwhile and it was reused for another lock,
 * the claim fails and the live record is left alone. */
static void check_batch(lb_mon_t **mons, const void *const *addrs, const struct iovec *remote,
                        const uint64_t *expected, int n, uint32_t *live)
{
    uint64_t value[LB_GC_BATCH];
    bool ok[LB_GC_BATCH];
    read_back(remote, value, ok, n);
    for (int i = 0; i < n; i++) {
        uint64_t state = state_bits(mons[i]);
        if (ok[i] && (value[i] | state) == expected[i]) {
            (*live)++;
            continue;
        }
        if (lb_mon_claim(mons[i], addrs[i])) {
            lb_mon_retire_claimed(mons[i]);
            __atomic_fetch_add(&reclaimed, 1, __ATOMIC_RELAXED);
        }
    }
}

/* Whether an lb_mon the recent table named was published in its object:
 * `published` is a mutex's or spin lock's word only (the slot may have
 * been reused for another kind since, whose word it shares: a
 * semaphore's sem_counted, an rwlock's waiting readers). */
static bool previous_published(const lb_mon_t *previous)
{
    uint8_t kind = __atomic_load_n(&previous->kind, __ATOMIC_RELAXED);
    return (kind == LB_OBJ_MUTEX || kind == LB_OBJ_SPIN) &&
           __atomic_load_n(&previous->published, __ATOMIC_ACQUIRE);
}

/* One sweep over the pool; returns how many lb_mons are still live. */
static uint32_t sweep(uint32_t slots_used)
{
    lb_mon_t *mons[LB_GC_BATCH];
    const void *addrs[LB_GC_BATCH];
    struct iovec remote[LB_GC_BATCH];
    uint64_t expected[LB_GC_BATCH];
    uint32_t live = 0;
    int n = 0;
    for (uint32_t i = 1; i <= slots_used; i++) {
        lb_mon_t *mon = lb_mon_at(i);
        const void *addr = mon ? __atomic_load_n(&mon->addr, __ATOMIC_ACQUIRE) : NULL;
        if (!addr)
            continue;
        if (!__atomic_load_n(&mon->published, __ATOMIC_ACQUIRE) ||
            !reference_of(mon, addr, &remote[n], &expected[n])) {
            live++;
            continue;
        }
        addrs[n] = addr;
        mons[n++] = mon;
        if (n == LB_GC_BATCH) {
            check_batch(mons, addrs, remote, expected, n, &live);
            n = 0;
        }
    }
    if (n)
        check_batch(mons, addrs, remote, expected, n, &live);
    return live;
}

void lb_mon_gc_maybe(uint32_t slots_used)
{
    if (slots_used < __atomic_load_n(&next_sweep_at, __ATOMIC_RELAXED) ||
        __atomic_exchange_n(&sweeping, 1, __ATOMIC_ACQUIRE))
        return;
    uint32_t live = sweep(slots_used);
    lb_mon_pool_keep_growing();
    uint32_t growth = live > LB_GC_MIN_GROWTH ? live : LB_GC_MIN_GROWTH;
    __atomic_store_n(&next_sweep_at, slots_used + growth, __ATOMIC_RELAXED);
    __atomic_store_n(&sweeping, 0, __ATOMIC_RELEASE);
}

static uint32_t *recent_table(void)
{
    return lb_pages_reserve_once((void **)&recent, (size_t)LB_RECENT_SLOTS * sizeof *recent);
}

void lb_mon_gc_reserve(void)
{
    recent_table();
}

void lb_mon_published(lb_mon_t *mon, const void *addr)
{
    __atomic_store_n(&mon->published, 1, __ATOMIC_RELEASE);
    /* While destroyed locks keep the free list stocked, nothing leaks:
     * skip the table (two cache misses a conversion under churn). */
    if (!lb_mon_pool_growing())
        return;
    uint32_t *t = recent_table();
    if (!t)
        return;
    uint32_t slot = lb_hash_index((uintptr_t)addr, LB_RECENT_BITS);
    lb_mon_t *previous =
        lb_mon_at(__atomic_exchange_n(&t[slot], lb_mon_index(mon), __ATOMIC_ACQ_REL));
    if (previous && previous != mon && previous_published(previous) &&
        lb_mon_claim(previous, addr)) {
        lb_mon_retire_claimed(previous); /* addr now refers to mon: previous is an orphan */
        lb_mon_pool_keep_growing();
        __atomic_fetch_add(&reclaimed, 1, __ATOMIC_RELAXED);
    }
}
