#include "blame/object_blame.h"

#include <errno.h>

#include "common/hash.h"
#include "util/pages.h"

static uint32_t slot_of(uint32_t object, uint32_t node, uint32_t capacity)
{
    return lb_hash_index((uint64_t)object << 32 | node, (unsigned)__builtin_ctz(capacity));
}

static lb_object_blame_t *find(lb_object_blame_t *slot, uint32_t capacity, uint32_t object,
                               uint32_t node)
{
    for (uint32_t i = slot_of(object, node, capacity);; i = (i + 1) & (capacity - 1)) {
        if (slot[i].object == 0 || (slot[i].object == object && slot[i].node == node))
            return &slot[i];
    }
}

/* Tables up to a page come from the arena (most threads blame one or
 * two objects; a page each would dominate their memory), larger ones are
 * mapped and unmapped. Arena blocks outgrown are not reused: at most the
 * size of the final table. */
#define LB_OBJECT_BLAME_ARENA_BYTES 4096

static lb_object_blame_t *table_alloc(uint32_t capacity)
{
    size_t bytes = capacity * sizeof(lb_object_blame_t);
    return bytes <= LB_OBJECT_BLAME_ARENA_BYTES ? lb_arena_alloc(bytes) : lb_pages_alloc(bytes);
}

static void table_free(lb_object_blame_t *slot, uint32_t capacity)
{
    size_t bytes = capacity * sizeof(lb_object_blame_t);
    if (bytes > LB_OBJECT_BLAME_ARENA_BYTES)
        lb_pages_free(slot, bytes);
}

/* Doubles the table; returns -1 (table unchanged) if no memory. */
static int grow(lb_object_blame_table_t *t)
{
    uint32_t capacity = t->capacity ? t->capacity * 2 : 4;
    lb_object_blame_t *fresh = table_alloc(capacity);
    if (!fresh)
        return -1;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (t->slot[i].object)
            *find(fresh, capacity, t->slot[i].object, t->slot[i].node) = t->slot[i];
    }
    table_free(t->slot, t->capacity);
    t->slot = fresh;
    t->capacity = capacity;
    for (int i = 0; i < LB_OBJECT_BLAME_RECENT; i++)
        t->recent[i] = NULL;
    return 0;
}

void lb_object_blame_add_slow(lb_object_blame_table_t *t, uint32_t object, uint32_t node,
                              double blame_ns)
{
    int saved_errno = errno; /* growing maps memory */
    if ((t->used + 1) * 2 > t->capacity && grow(t) != 0) {
        t->dropped_ns += blame_ns;
        errno = saved_errno;
        return;
    }
    errno = saved_errno;
    lb_object_blame_t *e = find(t->slot, t->capacity, object, node);
    if (e->object == 0) {
        e->object = object;
        e->node = node;
        t->used++;
    }
    e->blame_ns += blame_ns;
    e->count++;
    t->recent[t->recent_next++ % LB_OBJECT_BLAME_RECENT] = e;
}
