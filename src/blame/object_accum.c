#include "blame/object_accum.h"

#include <string.h>

#include "core/thread.h"

/* What an unused recent slot points at: no record index matches it. */
static lb_object_accum_entry_t no_entry = { .object = UINT64_MAX };

static void forget_recent(lb_object_accum_table_t *t)
{
    for (int i = 0; i < LB_OBJECT_ACCUM_RECENT; i++)
        t->recent[i] = &no_entry;
}

/* Bound to threads with no table of their own: never added to. */
static lb_object_accum_table_t unbound = {
    .recent = { &no_entry, &no_entry, &no_entry, &no_entry },
};
_Static_assert(LB_OBJECT_ACCUM_RECENT == 4, "unbound.recent lists every slot");

LB_TLS lb_object_accum_table_t *lb_object_accums_here = &unbound;

void lb_object_accum_bind(lb_object_accum_table_t *table)
{
    if (table)
        forget_recent(table);
    lb_object_accums_here = table ? table : &unbound;
}

lb_object_accum_t *lb_object_accum_of_slow(uint32_t index)
{
    if (index == 0)
        return NULL;
    lb_object_accum_table_t *t = lb_object_accums_here;
    if (t != &unbound) {
        bool grew;
        lb_object_accum_entry_t *e = lb_keyed_get(&t->entries, sizeof *e, index, &grew);
        if (grew)
            forget_recent(t);
        if (e) {
            t->recent[index % LB_OBJECT_ACCUM_RECENT] = e;
            return &e->sums;
        }
    }
    return &lb_object_stats_of_mon(index)->base;
}

static void add_table(lb_object_accum_t *out, uint32_t count, const lb_object_accum_table_t *t)
{
    void *slots;
    uint32_t capacity = lb_keyed_view(&t->entries, &slots); /* the owner may still run */
    for (uint32_t i = 0; i < capacity; i++) {
        const lb_object_accum_entry_t *e = lb_keyed_at(slots, sizeof *e, i);
        if (e->object && e->object < count)
            lb_object_accum_add(&out[e->object], &e->sums);
    }
}

void lb_object_accum_totals(lb_object_accum_t *out, uint32_t count)
{
    memset(out, 0, count * sizeof *out);
    for (uint32_t i = 1; i < count; i++) {
        const lb_object_stats_t *s = lb_object_stats_at(i);
        if (s)
            out[i] = s->base;
    }
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (t->object_accum)
            add_table(out, count, t->object_accum);
    }
}

void lb_object_accum_forget(lb_object_accum_table_t *table)
{
    for (uint32_t i = 0; table && i < table->entries.capacity; i++) {
        lb_object_accum_entry_t *e = lb_keyed_slot(&table->entries, sizeof *e, i);
        memset(&e->sums, 0, sizeof e->sums);
    }
}
