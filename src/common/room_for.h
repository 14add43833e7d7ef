/* Room in a growable array, for the common/ code that keeps its lists in
 * malloc'd arrays (a merge's names, its held records). */
#ifndef LB_COMMON_ROOM_FOR_H
#define LB_COMMON_ROOM_FOR_H
#include <stdbool.h>
#include <stdlib.h>

/* Room in *array (of *cap elements of `size` bytes, NULL at first) for
 * element n: the array doubled (to `first` at first) when it is full;
 * false when there is no memory for it (the array unchanged). */
static inline bool lb_room_for(void **array, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return true;
    size_t grown_cap = *cap ? 2 * *cap : first;
    void *grown = realloc(*array, grown_cap * size);
    if (!grown)
        return false;
    *array = grown;
    *cap = grown_cap;
    return true;
}
#endif
