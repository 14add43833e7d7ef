/* Unit tests for lb_heap_settle (src/util/heap_settle.h): freed chunks
 * that glibc left in its arena's unsorted list are in their bins after the
 * call, and the call leaves none of its own there. The list is read from
 * malloc_info's report of the calling thread's arena (heap 0: the main
 * thread's), written through an unbuffered stream opened before the frees
 * so that the report's own stdio allocates nothing in between. */
#include "check.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "util/heap_settle.h"

#define HOLES 32
#define CHUNK 1500 /* past the thread cache (1,032 bytes): a free goes to the list */

static char report[1 << 16];

/* The main arena's unsorted chunk count, from malloc_info; -1 if unread. */
static long unsorted_count(FILE *f)
{
    memset(report, 0, sizeof report);
    rewind(f);
    if (malloc_info(0, f) != 0)
        return -1;
    fflush(f);
    const char *heap = strstr(report, "<heap nr=\"0\">");
    const char *end = heap ? strstr(heap, "</heap>") : NULL;
    if (!end)
        return -1;
    const char *u = strstr(heap, "<unsorted ");
    if (!u || u > end)
        return 0;
    const char *count = strstr(u, "count=\"");
    return count ? strtol(count + 7, NULL, 10) : -1;
}

static void test_settle_sorts_the_unsorted_chunks(void)
{
    FILE *f = fmemopen(report, sizeof report - 1, "w");
    ASSERT_NOT_NULL(f);
    setvbuf(f, NULL, _IONBF, 0);
    void *keep[HOLES], *hole[HOLES];
    for (int i = 0; i < HOLES; i++) { /* holes between kept chunks: no merging */
        hole[i] = malloc(CHUNK);
        keep[i] = malloc(CHUNK);
        ASSERT_NOT_NULL(hole[i]);
        ASSERT_NOT_NULL(keep[i]);
    }
    for (int i = 0; i < HOLES; i++)
        free(hole[i]);
    long before = unsorted_count(f);
    if (before >= HOLES)
        lb_heap_settle(); /* nothing else allocates between the two counts */
    long after = unsorted_count(f);
    printf("# unsorted chunks before: %ld, after: %ld\n", before, after);
    if (before < HOLES) {
        printf("# this malloc keeps no unsorted list of glibc's kind: skipped\n");
    } else {
        ASSERT_GE(after, 0);
        ASSERT_LE(after, 1); /* at most a remainder split off for the call's own chunk */
    }
    for (int i = 0; i < HOLES; i++)
        free(keep[i]);
    fclose(f);
}

CHECK_MAIN(test_settle_sorts_the_unsorted_chunks)
