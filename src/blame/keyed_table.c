#include "blame/keyed_table.h"

#include <errno.h>
#include <string.h>

#include "common/hash.h"
#include "util/pages.h"

/* The slot holding key, or the empty slot where it would go. */
static void *find(void *slot, uint32_t capacity, size_t entry_size, uint64_t key)
{
    for (uint32_t i = lb_hash_index(key, (unsigned)__builtin_ctz(capacity));;
         i = (i + 1) & (capacity - 1)) {
        void *e = (char *)slot + (size_t)i * entry_size;
        uint64_t k = lb_keyed_key(e);
        if (k == 0 || k == key)
            return e;
    }
}

/* Tables up to a page come from the arena (most threads touch one or two
 * objects; a page each would dominate their memory), larger ones are
 * mapped and unmapped. */
#define LB_KEYED_ARENA_BYTES 4096

static void *table_alloc(size_t bytes)
{
    return bytes <= LB_KEYED_ARENA_BYTES ? lb_arena_alloc(bytes) : lb_pages_alloc(bytes);
}

static void table_free(void *slot, size_t bytes)
{
    if (slot && bytes > LB_KEYED_ARENA_BYTES)
        lb_pages_free(slot, bytes);
}

/* Doubles the table; returns -1 (table unchanged) if no memory. */
static int grow(lb_keyed_table_t *t, size_t entry_size)
{
    uint32_t capacity = t->capacity ? t->capacity * 2 : 4;
    void *fresh = table_alloc(capacity * entry_size);
    if (!fresh)
        return -1;
    for (uint32_t i = 0; i < t->capacity; i++) {
        const void *e = lb_keyed_slot(t, entry_size, i);
        if (lb_keyed_key(e))
            memcpy(find(fresh, capacity, entry_size, lb_keyed_key(e)), e, entry_size);
    }
    table_free(t->slot, t->capacity * entry_size);
    t->slot = fresh;
    t->capacity = capacity;
    return 0;
}

void *lb_keyed_get(lb_keyed_table_t *t, size_t entry_size, uint64_t key, bool *grew)
{
    *grew = false;
    if ((t->used + 1) * 2 > t->capacity) {
        int saved_errno = errno; /* growing maps memory */
        int rc = grow(t, entry_size);
        errno = saved_errno;
        if (rc != 0)
            return NULL;
        *grew = true;
    }
    void *e = find(t->slot, t->capacity, entry_size, key);
    if (lb_keyed_key(e) == 0) {
        *(uint64_t *)e = key;
        t->used++;
    }
    return e;
}
