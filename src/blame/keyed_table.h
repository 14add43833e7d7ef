/* A per-thread open-addressing table of fixed-size entries, each starting
 * with a nonzero 64-bit key (0 marks an empty slot): the storage of the
 * per-thread object tables (object_blame.h, object_accum.h), which differ
 * only in their keys and counters.
 *
 * Invariants: written only by the owning thread, never from a signal
 * handler; read by the final write. At most half full; grows by doubling
 * (arena memory while small, mmap'd beyond a page; an outgrown table is
 * kept, never unmapped, so another thread reading it while it grows reads
 * valid memory). Entries never move except when the table grows, so an
 * entry pointer stays valid until the next lb_keyed_get that grows (it
 * reports that). Another thread that reads the table (the final write
 * while the owner may still run) goes through lb_keyed_view, which takes
 * the slots and their number together. */
#ifndef LB_KEYED_TABLE_H
#define LB_KEYED_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lb_keyed_table {
    void *slot;             /* capacity entries of entry_size bytes */
    uint32_t capacity;      /* power of two, 0 before first use */
    uint32_t used;
} lb_keyed_table_t;

/* The entry for key (nonzero), made zero-filled but for its key if new;
 * NULL if the table had to grow and no memory was left. *grew is set
 * when the table grew (earlier entry pointers are then stale). Leaves
 * errno as it found it. */
void *lb_keyed_get(lb_keyed_table_t *t, size_t entry_size, uint64_t key, bool *grew);

/* Each table's slots follow a header that holds their number. */
#define LB_KEYED_HEADER 16

/* The entry in slot i of slots (its key is 0 if the slot is empty). */
static inline void *lb_keyed_at(void *slots, size_t entry_size, uint32_t i)
{
    return (char *)slots + (size_t)i * entry_size;
}

/* The entry in slot i < t->capacity, for the owner (or once it stopped). */
static inline void *lb_keyed_slot(const lb_keyed_table_t *t, size_t entry_size, uint32_t i)
{
    return lb_keyed_at(t->slot, entry_size, i);
}

/* For a reader on another thread while the owner may still add: the
 * current slots (*slots; NULL before first use) and their number, read
 * from one table (an outgrown one stays valid, see above). */
static inline uint32_t lb_keyed_view(const lb_keyed_table_t *t, void **slots)
{
    *slots = __atomic_load_n(&t->slot, __ATOMIC_ACQUIRE);
    return *slots ? *(const uint32_t *)((const char *)*slots - LB_KEYED_HEADER) : 0;
}

static inline uint64_t lb_keyed_key(const void *entry)
{
    return *(const uint64_t *)entry;
}
#endif
