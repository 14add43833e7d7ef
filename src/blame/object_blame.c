#include "blame/object_blame.h"

void lb_object_blame_add_slow(lb_object_blame_table_t *t, uint32_t object, uint32_t node,
                              double blame_ns)
{
    bool grew;
    lb_object_blame_t *e = lb_keyed_get(&t->entries, sizeof *e,
                                        (uint64_t)node << 32 | object, &grew);
    if (grew) {
        for (int i = 0; i < LB_OBJECT_BLAME_RECENT; i++)
            t->recent[i] = NULL;
    }
    if (!e) {
        t->dropped_ns += blame_ns;
        return;
    }
    e->blame_ns += blame_ns;
    e->count++;
    t->recent[t->recent_next++ % LB_OBJECT_BLAME_RECENT] = e;
}
