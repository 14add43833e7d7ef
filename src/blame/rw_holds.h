/* Per-thread record of the rwlocks this thread holds, with the blame
 * clock value at its acquisition: shared holders each need their own
 * V(acquire), so it cannot live in the lock's lb_mon.
 *
 * Invariants: written and read only by the owning thread; a stack, so
 * recursive read locks pair with their unlocks. A full stack leaves the
 * hold unrecorded and its blame becomes unattributed (counted). */
#ifndef LB_RW_HOLDS_H
#define LB_RW_HOLDS_H
#include <stdint.h>

#define LB_RW_HOLDS 16

struct lb_mon;

typedef struct lb_rw_hold {
    const struct lb_mon *mon;
    double clock_at_acquire;
    uint8_t was_contended;
} lb_rw_hold_t;

typedef struct lb_rw_holds {
    lb_rw_hold_t hold[LB_RW_HOLDS];
    uint32_t depth;
    uint32_t overflow; /* holds not recorded */
} lb_rw_holds_t;
#endif
