/* Per-thread parts of the objects' accumulators (object_stats.h): the
 * contended paths add wait, counts, accrual and blame to the running
 * thread's own entry for the object instead of to its shared record, so
 * the only line every contending thread writes is the lb_mon's.
 *
 * Invariants: a table is written only by its own thread (the one it is
 * bound to, under the object's meta lock), never from a signal handler,
 * and read by the final write; entries are keyed by the record index
 * (keyed_table.h). Tables come from the arena and are never freed, so an
 * exited thread's part is still summed at the write; a fork child keeps
 * only the forking thread's, zeroed (interpose/fork_forget.c). A thread
 * with no table of its own (not attached, or out of memory) is bound to
 * a shared empty one and adds to the record's `base` instead. `recent` is
 * direct-mapped by index: an object the thread touched lately is found
 * with one compare; its unused slots point at a sentinel entry that no
 * index matches (never NULL), so the fast path has no other test. */
#ifndef LB_OBJECT_ACCUM_H
#define LB_OBJECT_ACCUM_H
#include <stdint.h>

#include "blame/keyed_table.h"
#include "blame/object_stats.h"
#include "util/common.h"

typedef struct lb_object_accum_entry {
    uint64_t object;          /* lb_object_stats index: the key (0 = empty slot) */
    lb_object_accum_t sums;
} lb_object_accum_entry_t;

#define LB_OBJECT_ACCUM_RECENT 4 /* a power of two */

typedef struct lb_object_accum_table {
    lb_keyed_table_t entries; /* of lb_object_accum_entry_t */
    lb_object_accum_entry_t *recent[LB_OBJECT_ACCUM_RECENT]; /* by index % RECENT */
} lb_object_accum_table_t;

/* The calling thread's table (bound by its blame start hook; never NULL). */
extern LB_TLS lb_object_accum_table_t *lb_object_accums_here;
void lb_object_accum_bind(lb_object_accum_table_t *table);

lb_object_accum_t *lb_object_accum_of_slow(uint32_t index);

/* Where the calling thread adds to object `index`'s accumulators (a
 * record index from an lb_mon); NULL for 0 (no record). Never fails;
 * leaves errno as it found it. */
static inline lb_object_accum_t *lb_object_accum_of(uint32_t index)
{
    lb_object_accum_entry_t *e = lb_object_accums_here->recent[index % LB_OBJECT_ACCUM_RECENT];
    if (lb_likely(e->object == index))
        return &e->sums;
    return lb_object_accum_of_slow(index);
}

/* For the final write: out[i] = object i's accumulators, summed over its
 * record's base and every registered thread's table, for i < count. */
void lb_object_accum_totals(lb_object_accum_t *out, uint32_t count);

/* For a fork child: zero the table's sums (its entries stay). */
void lb_object_accum_forget(lb_object_accum_table_t *table);
#endif
