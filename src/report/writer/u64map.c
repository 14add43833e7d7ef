#include "report/writer/u64map.h"

#include <stdlib.h>

static uint32_t home(uint64_t key, uint32_t capacity)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (capacity - 1);
}

int lb_u64map_init(lb_u64map_t *map, uint32_t expected)
{
    uint32_t capacity = 64;
    while (capacity < expected * 2)
        capacity *= 2;
    map->keys = calloc(capacity, sizeof *map->keys);
    map->values = calloc(capacity, sizeof *map->values);
    map->used = 0;
    if (!map->keys || !map->values) {
        free(map->keys);
        free(map->values);
        map->keys = NULL;
        map->values = NULL;
        map->capacity = 0;
        return -1;
    }
    map->capacity = capacity;
    return 0;
}

void lb_u64map_free(lb_u64map_t *map)
{
    free(map->keys);
    free(map->values);
    map->keys = NULL;
    map->values = NULL;
    map->capacity = map->used = 0;
}

bool lb_u64map_get(const lb_u64map_t *map, uint64_t key, uint32_t *value)
{
    if (!map->capacity)
        return false;
    for (uint32_t i = home(key, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
        if (map->keys[i] == key) {
            *value = map->values[i];
            return true;
        }
        if (map->keys[i] == 0)
            return false;
    }
}

static int grow(lb_u64map_t *map)
{
    lb_u64map_t bigger;
    if (lb_u64map_init(&bigger, map->capacity ? map->capacity : 32) != 0)
        return -1;
    for (uint32_t i = 0; i < map->capacity; i++) {
        if (map->keys[i])
            lb_u64map_put(&bigger, map->keys[i], map->values[i]);
    }
    lb_u64map_free(map);
    *map = bigger;
    return 0;
}

int lb_u64map_put(lb_u64map_t *map, uint64_t key, uint32_t value)
{
    if ((map->used + 1) * 2 > map->capacity && grow(map) != 0)
        return -1;
    for (uint32_t i = home(key, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
        if (map->keys[i] == key || map->keys[i] == 0) {
            if (map->keys[i] == 0)
                map->used++;
            map->keys[i] = key;
            map->values[i] = value;
            return 0;
        }
    }
}
