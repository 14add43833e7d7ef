/* Address -> lb_mon for objects whose glibc layout has no spare field
 * (condition variables, semaphores, barriers, rwlocks): a fixed-size,
 * lock-free open-addressing table.
 *
 * Invariants: a slot's key goes 0 -> address once (CAS) and never
 * changes again, so a lookup that found the slot keeps it. Its lb_mon is
 * installed by CAS after the key: a thread that finds the slot still
 * empty (or holding another kind's lb_mon, memory reused without destroy)
 * allocates one and races to install it; the loser frees its own and uses
 * the winner's, a replaced lb_mon is retired. Destroy and init keep the
 * key (the address may be reused) and retire the lb_mon, but for an
 * rwlock's that never saw a wait, which stays (its count folded). A key that finds
 * no free slot within LB_OBJMAP_PROBES leaves its object unmonitored
 * (counted). Each thread remembers (thread-local, written only by itself)
 * the slots of the objects it used last: since a slot's key never changes
 * and the table is never replaced, such an entry cannot go stale. */
#ifndef LB_OBJMAP_H
#define LB_OBJMAP_H
#include "locks/monitored.h"
#include "util/common.h"

typedef struct lb_objmap_slot {
    uintptr_t key; /* object address, 0 = empty */
    lb_mon_t *mon; /* NULL until published, or after retire */
} lb_objmap_slot_t;

/* Per thread: the slots of the objects it used last, direct-mapped by
 * address. A slot's key never changes once set and the table is never
 * replaced, so an entry stays right forever: a hit skips the hash and
 * the probe, nothing else (the lb_mon is still read from the slot). A
 * hit is the slot's own key, not the entry's: a signal handler on this
 * thread may rewrite the entry (sem_post is async-signal-safe) between
 * our reads of its two words. */
#define LB_OBJMAP_RECENT 8 /* a power of two */
extern LB_TLS lb_objmap_slot_t *lb_objmap_recent[LB_OBJMAP_RECENT];

static inline unsigned lb_objmap_recent_of(uintptr_t key)
{
    return (unsigned)(key >> 4) & (LB_OBJMAP_RECENT - 1);
}

/* key's slot if the calling thread used key lately (its recent entry
 * names the slot, and the slot's own key is key), else NULL. */
static inline lb_objmap_slot_t *lb_objmap_recent_slot(uintptr_t key)
{
    lb_objmap_slot_t *s = lb_objmap_recent[lb_objmap_recent_of(key)];
    return s != NULL && __atomic_load_n(&s->key, __ATOMIC_RELAXED) == key ? s : NULL;
}

/* addr's lb_mon if the calling thread used addr lately and it has one of
 * this kind, else NULL: the signal's inline path (a leaf: no probe, no
 * creation; lb_objmap_get does those). */
static inline lb_mon_t *lb_objmap_recent_mon(const void *addr, lb_obj_kind kind)
{
    lb_objmap_slot_t *s = lb_objmap_recent_slot((uintptr_t)addr);
    if (lb_unlikely(s == NULL))
        return NULL;
    lb_mon_t *mon = __atomic_load_n(&s->mon, __ATOMIC_ACQUIRE);
    return lb_likely(mon != NULL && mon->kind == kind) ? mon : NULL;
}

/* lb_objmap_get past the thread's recent objects: the table's probe,
 * and the lb_mon's creation on first use (objmap.c). */
lb_mon_t *lb_objmap_get_probed(const void *addr, lb_obj_kind kind);
/* The lb_mon for addr, created on first use; NULL when lockblame is not
 * running or the table/pool is full. An object the thread used lately
 * costs no call. */
static inline lb_mon_t *lb_objmap_get(const void *addr, lb_obj_kind kind)
{
    lb_mon_t *mon = lb_objmap_recent_mon(addr, kind);
    return lb_likely(mon != NULL) ? mon : lb_objmap_get_probed(addr, kind);
}
/* Reserves the table now where the first contention has not (before a
 * fork: each child would reserve its own at its first contention). */
void lb_objmap_reserve(void);
/* The lb_mon for addr if one exists (no creation). */
lb_mon_t *lb_objmap_find(const void *addr);
/* Retire addr's state (destroy / init). */
void lb_objmap_retire(const void *addr);
#endif
