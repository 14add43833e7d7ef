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
 * objects; a page each would dominate their memory), on lines of their
 * own (they are written on lock paths: no line shared with another
 * thread's data), larger ones are mapped. An outgrown table is kept, not unmapped: the final write may be
 * reading it (object_accum.h tables are written while it runs); all of
 * them together are smaller than the final one. */
#define LB_KEYED_ARENA_BYTES 4096

/* The slots of a fresh table, after a header that holds their number
 * (lb_keyed_view reads it there). */
static void *table_alloc(uint32_t capacity, size_t entry_size)
{
    size_t bytes = LB_KEYED_HEADER + capacity * entry_size;
    char *p = bytes <= LB_KEYED_ARENA_BYTES ? lb_arena_alloc_lines(bytes) : lb_pages_alloc(bytes);
    if (!p)
        return NULL;
    *(uint32_t *)p = capacity;
    return p + LB_KEYED_HEADER;
}

/* Doubles the table; returns -1 (table unchanged) if no memory. */
static int grow(lb_keyed_table_t *t, size_t entry_size)
{
    uint32_t capacity = t->capacity ? t->capacity * 2 : 4;
    void *fresh = table_alloc(capacity, entry_size);
    if (!fresh)
        return -1;
    for (uint32_t i = 0; i < t->capacity; i++) {
        const void *e = lb_keyed_slot(t, entry_size, i);
        if (lb_keyed_key(e))
            memcpy(find(fresh, capacity, entry_size, lb_keyed_key(e)), e, entry_size);
    }
    __atomic_store_n(&t->slot, fresh, __ATOMIC_RELEASE); /* for lb_keyed_view */
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
