/* Reclaiming the state of mutexes and spin locks whose memory was freed,
 * zeroed or reused without pthread_*_destroy (docs/DESIGN.md "Monitored
 * locks": the state is reclaimed also when the lock's memory is reused
 * without a destroy). */
#ifndef LB_MON_GC_H
#define LB_MON_GC_H
#include <stdint.h>

struct lb_mon;
/* mon was just installed in the object at addr (the conversion's CAS
 * succeeded): the sweep may check it from now on, and an older lb_mon for
 * the same address, orphaned by memory reuse, is retired. */
void lb_mon_published(struct lb_mon *mon, const void *addr);
/* Called when the pool grows: sweeps once the pool has grown enough since
 * the last sweep. Never blocks: a sweep already running elsewhere wins. */
void lb_mon_gc_maybe(uint32_t slots_used);
/* Reserves the table of recent conversions now (before a fork, as
 * lb_objmap_reserve). */
void lb_mon_gc_reserve(void);
/* lb_mons reclaimed so far (for the run's metadata). */
uint64_t lb_mon_gc_reclaimed(void);
#endif
