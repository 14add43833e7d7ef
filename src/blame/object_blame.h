/* Per-thread record of which release contexts took each object's blame:
 * (object stats index, CCT node) -> blame, count. Feeds the per-lock view.
 *
 * Invariants: written only by the owning thread, outside the signal
 * handler, while lb_thread.busy is held; read by the final write. Grows by
 * doubling (arena memory while small, mmap'd beyond a page); if memory runs out the entry is
 * counted in `dropped_ns` instead of being lost silently. `recent` keeps
 * the entries the last LB_OBJECT_BLAME_RECENT distinct slow-path adds
 * went to (NULL before the first and after a grow): the releases and
 * signals of a contended loop (a lock's release, a condition's signal,
 * each from its one place) add to them without hashing or probing. */
#ifndef LB_OBJECT_BLAME_H
#define LB_OBJECT_BLAME_H
#include <stdint.h>

typedef struct lb_object_blame {
    uint32_t object; /* lb_object_stats index (0 = empty slot) */
    uint32_t node;   /* node id in the owning thread's CCT */
    double blame_ns;
    uint64_t count;
} lb_object_blame_t;

#define LB_OBJECT_BLAME_RECENT 4 /* a power of two */

typedef struct lb_object_blame_table {
    lb_object_blame_t *slot;
    uint32_t capacity; /* power of two, 0 before first use */
    uint32_t used;
    double dropped_ns;                                 /* blame that found no memory */
    lb_object_blame_t *recent[LB_OBJECT_BLAME_RECENT]; /* see above */
    uint32_t recent_next; /* the recent slot the next slow-path add replaces */
} lb_object_blame_table_t;

/* The general case of lb_object_blame_add: find or make the entry. */
void lb_object_blame_add_slow(lb_object_blame_table_t *t, uint32_t object, uint32_t node,
                              double blame_ns);

/* Add blame for (object, node). Never fails; see dropped_ns. Leaves
 * errno as it found it. */
static inline void lb_object_blame_add(lb_object_blame_table_t *t, uint32_t object, uint32_t node,
                                       double blame_ns)
{
    for (int i = 0; i < LB_OBJECT_BLAME_RECENT; i++) {
        lb_object_blame_t *e = t->recent[i];
        if (e && e->object == object && e->node == node) {
            e->blame_ns += blame_ns;
            e->count++;
            return;
        }
    }
    lb_object_blame_add_slow(t, object, node, blame_ns);
}
#endif
