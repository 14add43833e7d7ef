/* The one map from 64-bit keys to small non-negative integers (ids,
 * indices), for the library's final write and for the CLI: open
 * addressing, linear probing, grown by doubling at half full. Every key is
 * allowed (0 too); a value is 0..INT32_MAX, -1 marking an empty slot.
 *
 * Failure contract: it allocates with malloc and never exits: every call
 * that may allocate reports failure (NULL or -1) and leaves the map as it
 * was. Not thread-safe; never used on a lock path or in a signal handler.
 * A zero-initialized map is a valid empty one. Depends on nothing. */
#ifndef LB_COMMON_U64MAP_H
#define LB_COMMON_U64MAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lb_u64map {
    uint64_t *keys;
    int32_t *values; /* -1: empty slot */
    size_t capacity; /* power of two, 0 before the first insert */
    size_t used;
} lb_u64map_t;

/* An empty map with room for `expected` keys before it grows. Returns 0,
 * or -1 if out of memory (the map is then empty and valid). */
int lb_u64map_init(lb_u64map_t *map, size_t expected);
void lb_u64map_free(lb_u64map_t *map);
/* key's value, or -1 if absent. */
int32_t lb_u64map_find(const lb_u64map_t *map, uint64_t key);
/* The same as a bool with the value in *value (the library's style). */
bool lb_u64map_get(const lb_u64map_t *map, uint64_t key, uint32_t *value);
/* key's slot, claimed if absent (then it holds -1 and *is_new is set, and
 * the caller stores a value >= 0 before the next insert). NULL if out of
 * memory. */
int32_t *lb_u64map_slot(lb_u64map_t *map, uint64_t key, bool *is_new);
/* Insert or overwrite; -1 if out of memory or value > INT32_MAX. */
int lb_u64map_put(lb_u64map_t *map, uint64_t key, uint32_t value);
#endif
