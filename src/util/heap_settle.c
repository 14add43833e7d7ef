/* See heap_settle.h. */
#include "util/heap_settle.h"

#include <stdlib.h>

/* A request in glibc's large-bin range (chunks of 1,024 bytes and more),
 * which no small bin serves first, that its thread cache still takes back
 * at the free (chunks up to 1,040 bytes): the free leaves no chunk in the
 * unsorted list. calloc, unlike malloc, never takes from the thread cache,
 * so the allocation always reaches the arena's sort. */
#define SETTLE_REQUEST 1016

void lb_heap_settle(void)
{
    void *volatile chunk = calloc(1, SETTLE_REQUEST); /* volatile: kept */
    free(chunk);
}
