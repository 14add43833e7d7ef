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
 * key (the address may be reused) and retire the lb_mon. A key that finds
 * no free slot within LB_OBJMAP_PROBES leaves its object unmonitored
 * (counted). Each thread remembers (thread-local, written only by itself)
 * the slots of the objects it used last: since a slot's key never changes
 * and the table is never replaced, such an entry cannot go stale. */
#ifndef LB_OBJMAP_H
#define LB_OBJMAP_H
#include "locks/monitored.h"

/* The lb_mon for addr, created on first use; NULL when lockblame is not
 * running or the table/pool is full. */
lb_mon_t *lb_objmap_get(const void *addr, lb_obj_kind kind);
/* The lb_mon for addr if one exists (no creation). */
lb_mon_t *lb_objmap_find(const void *addr);
/* Retire addr's state (destroy / init). */
void lb_objmap_retire(const void *addr);
#endif
