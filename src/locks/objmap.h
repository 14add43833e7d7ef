/* Address -> lb_mon for objects whose glibc layout has no spare field
 * (condition variables, semaphores, barriers, rwlocks): a fixed-size,
 * lock-free open-addressing table.
 *
 * Invariants: a slot's key goes 0 -> address once (CAS) and then only
 * changes back to 0 in a fork child reset; its value is published with a
 * CAS after the key, so readers spin briefly on a claimed slot whose value
 * is not yet set. Destroy keeps the key (the address may be reused for the
 * same kind) and retires the lb_mon. A full table leaves new objects
 * unmonitored and counts them. */
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
