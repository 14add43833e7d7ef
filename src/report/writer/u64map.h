/* A growable open-addressing map from 64-bit keys to 32-bit values, for
 * the final write (malloc-based; never used on a lock path or in the
 * signal handler). Key 0 is reserved as "empty". */
#ifndef LB_U64MAP_H
#define LB_U64MAP_H
#include <stdbool.h>
#include <stdint.h>

typedef struct lb_u64map {
    uint64_t *keys;
    uint32_t *values;
    uint32_t capacity;   /* power of two */
    uint32_t used;
} lb_u64map_t;

/* Returns 0, or -1 if out of memory (map left empty but valid). */
int lb_u64map_init(lb_u64map_t *map, uint32_t expected);
void lb_u64map_free(lb_u64map_t *map);
/* Value for key, or false if absent. */
bool lb_u64map_get(const lb_u64map_t *map, uint64_t key, uint32_t *value);
/* Insert or overwrite; returns -1 if out of memory (map unchanged). */
int lb_u64map_put(lb_u64map_t *map, uint64_t key, uint32_t value);
#endif
