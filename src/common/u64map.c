/* See u64map.h. Invariant: used * 2 <= capacity after every insert, so a
 * probe always ends at an empty slot. */
#include "common/u64map.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/scratch.h"

static size_t home(uint64_t key, size_t capacity)
{
    return lb_hash_index(key, (unsigned)__builtin_ctzll(capacity));
}

/* Move every entry into a table of `capacity` slots; -1 (map unchanged)
 * if out of memory. */
static int resize(lb_u64map_t *map, size_t capacity)
{
    uint64_t *keys = lb_scratch_malloc(capacity * sizeof *keys);
    int32_t *values = lb_scratch_malloc(capacity * sizeof *values);
    if (!keys || !values) {
        lb_scratch_free(keys);
        lb_scratch_free(values);
        return -1;
    }
    memset(values, 0xff, capacity * sizeof *values);
    for (size_t j = 0; j < map->capacity; j++) {
        if (map->values[j] < 0)
            continue;
        size_t i = home(map->keys[j], capacity);
        while (values[i] >= 0)
            i = (i + 1) & (capacity - 1);
        keys[i] = map->keys[j];
        values[i] = map->values[j];
    }
    lb_scratch_free(map->keys);
    lb_scratch_free(map->values);
    map->keys = keys;
    map->values = values;
    map->capacity = capacity;
    return 0;
}

int lb_u64map_init(lb_u64map_t *map, size_t expected)
{
    memset(map, 0, sizeof *map);
    size_t capacity = 64;
    while (capacity < expected * 2)
        capacity *= 2;
    return resize(map, capacity);
}

void lb_u64map_free(lb_u64map_t *map)
{
    lb_scratch_free(map->keys);
    lb_scratch_free(map->values);
    memset(map, 0, sizeof *map);
}

int32_t lb_u64map_find(const lb_u64map_t *map, uint64_t key)
{
    if (!map->capacity)
        return -1;
    for (size_t i = home(key, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
        if (map->values[i] < 0)
            return -1;
        if (map->keys[i] == key)
            return map->values[i];
    }
}

bool lb_u64map_get(const lb_u64map_t *map, uint64_t key, uint32_t *value)
{
    int32_t v = lb_u64map_find(map, key);
    if (v < 0)
        return false;
    *value = (uint32_t)v;
    return true;
}

int32_t *lb_u64map_slot(lb_u64map_t *map, uint64_t key, bool *is_new)
{
    if ((map->used + 1) * 2 > map->capacity &&
        resize(map, map->capacity ? map->capacity * 2 : 64) != 0)
        return NULL;
    size_t i = home(key, map->capacity);
    for (; map->values[i] >= 0; i = (i + 1) & (map->capacity - 1)) {
        if (map->keys[i] == key) {
            *is_new = false;
            return &map->values[i];
        }
    }
    map->keys[i] = key;
    map->used++;
    *is_new = true;
    return &map->values[i];
}

int lb_u64map_put(lb_u64map_t *map, uint64_t key, uint32_t value)
{
    bool is_new;
    int32_t *slot = value <= INT32_MAX ? lb_u64map_slot(map, key, &is_new) : NULL;
    if (!slot)
        return -1;
    *slot = (int32_t)value;
    return 0;
}
