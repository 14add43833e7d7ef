/* lb_mon: the monitored state of one synchronization object (64 bytes).
 *
 * Dual representation (thesis ch. 6.4.3): an object stays native until
 * lockblame runs; then its first operation converts it by installing a
 * reference to an lb_mon with one CAS:
 *   - spin locks: the 32-bit lock word itself becomes a tagged pool index
 *     (spin_ops.c, Algorithms 6.2-6.5), whose low bit stays the lock;
 *   - mutexes: glibc's object must stay valid (cond_wait relocks it
 *     inside glibc), so the reference goes into a field glibc leaves unused
 *     for non-robust, process-private mutexes; a mutex is only counted
 *     until its first contention, which converts it (mutex_ops.h).
 *
 * Field ownership: see blame/mon.h, where the type is.
 * An lb_mon lives in one mmap'd pool and is never unmapped, so a stale
 * reference always points at readable memory; `addr` tells whether the
 * state still belongs to the object that references it. */
#ifndef LB_MONITORED_H
#define LB_MONITORED_H
#include <stdint.h>

#include "blame/mon.h"
#include "util/common.h"

/* Pool of lb_mon in one reserved mapping; index 0 is never used.
 * Failure contract: lb_mon_alloc returns NULL when the pool is exhausted
 * or unmapped (the caller leaves the object native). */
int lb_mon_pool_setup(void);
lb_mon_t *lb_mon_alloc(const void *addr, lb_obj_kind kind);
/* The calling thread keeps a small cache of free slots from now on /
 * gives its cache back (thread exit). */
void lb_mon_cache_enable(void);
void lb_mon_cache_flush(void);
/* Return an lb_mon whose object was destroyed or re-initialized. */
void lb_mon_free(lb_mon_t *mon);
uint32_t lb_mon_index(const lb_mon_t *mon);
/* The lb_mon at index, or NULL if index is not a pool slot. */
static inline lb_mon_t *lb_mon_at(uint32_t index);
/* The lb_mon whose address is p, or NULL if p is not a pool slot. */
static inline lb_mon_t *lb_mon_from_ptr(uintptr_t p);
/* True while the pool grows rather than recycles freed slots (a hint). */
bool lb_mon_pool_growing(void);
/* Orphans reclaimed by this thread do not mean locks are being destroyed:
 * keep the hint set. */
void lb_mon_pool_keep_growing(void);
/* Slots handed out so far, and live now (a scan; for the memory figures). */
uint32_t lb_mon_slots_used(void);
uint32_t lb_mon_live(void);
/* fork: prepare holds the pool lock; parent releases it; the child also
 * releases every lb_mon's meta lock, which another (now vanished) thread
 * may have held at the fork. */
void lb_mon_fork_prepare(void);
void lb_mon_fork_parent(void);
void lb_mon_fork_child(void);
/* Call fn for every live lb_mon (final write; objects may still be in use). */
void lb_mon_for_each(void (*fn)(lb_mon_t *mon, void *arg), void *arg);

/* The pool's reservation; set once at setup, before any lock converts.
 * Slots past the bump pointer are reserved zero pages, so a lookup that
 * lands there finds addr == NULL and is rejected by its caller. */
#define LB_MON_SLOTS (1u << 24) /* 16M live monitored objects, 1 GiB reserved */
/* Read by every lock fast path: alone on its cache line, so that no
 * counter a slow path writes can share (and keep invalidating) it. */
typedef struct {
    lb_mon_t *base;
    char pad[LB_CACHELINE - sizeof(lb_mon_t *)];
} __attribute__((aligned(LB_CACHELINE))) lb_mon_pool_t;
extern lb_mon_pool_t lb_mon_pool;

static inline lb_mon_t *lb_mon_at(uint32_t index)
{
    if (index == 0 || index >= LB_MON_SLOTS || !lb_mon_pool.base)
        return NULL;
    return &lb_mon_pool.base[index];
}

static inline lb_mon_t *lb_mon_from_ptr(uintptr_t p)
{
    uintptr_t first = (uintptr_t)lb_mon_pool.base + sizeof(lb_mon_t);
    if (p - first >= (uintptr_t)(LB_MON_SLOTS - 1) * sizeof(lb_mon_t) ||
        (p & (sizeof(lb_mon_t) - 1)) != 0)
        return NULL;
    return (lb_mon_t *)p;
}
#endif
