/* Scratch memory for an exit write (contract in scratch.h).
 *
 * Mappings ("chunks") are made on demand by the caller's mapper, each at
 * least LB_SCRATCH_CHUNK bytes (the library's reserves address space
 * only: a page commits memory when written), and filled in order. Each
 * block has a 16-byte header holding its size, so that a realloc knows
 * how much to copy.
 *
 * Invariants: only the owner thread (the one whose lb_scratch_on won the
 * claim) allocates, appends to the chunk table and moves the cursor; a
 * chunk's entry is written before n_chunks counts it (release), so any
 * thread that frees a block tells scratch memory from malloc's by the
 * entries it counts (acquire); a block's header is written before the
 * block is handed out. A block handed out is never handed out again. */
#include "common/scratch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LB_SCRATCH_CHUNKS 64
#define LB_SCRATCH_HEADER 16

static __thread bool active;
static int claimed; /* 0, then 1 once a thread owns the scratch memory */
static struct {
    char *base;
    size_t size;
} chunks[LB_SCRATCH_CHUNKS];
static unsigned n_chunks;
static void *(*map_chunk)(size_t bytes);
static char *cursor, *end;
static size_t mapped;

bool lb_scratch_on(void *(*map)(size_t bytes))
{
    if (active)
        return true;
    int expected = 0;
    if (!__atomic_compare_exchange_n(&claimed, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return false;
    map_chunk = map;
    active = true;
    return true;
}

static bool owned(const void *p)
{
    unsigned n = __atomic_load_n(&n_chunks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if ((const char *)p >= chunks[i].base && (const char *)p < chunks[i].base + chunks[i].size)
            return true;
    return false;
}

/* A fresh chunk with room for `need` bytes; false when none can be made. */
static bool add_chunk(size_t need)
{
    size_t size = need > LB_SCRATCH_CHUNK ? (need + LB_SCRATCH_CHUNK - 1) & ~(LB_SCRATCH_CHUNK - 1)
                                          : LB_SCRATCH_CHUNK;
    if (n_chunks == LB_SCRATCH_CHUNKS || mapped + size > LB_SCRATCH_MAX)
        return false;
    char *base = map_chunk(size);
    if (!base)
        return false;
    chunks[n_chunks].base = base;
    chunks[n_chunks].size = size;
    __atomic_store_n(&n_chunks, n_chunks + 1, __ATOMIC_RELEASE);
    mapped += size;
    cursor = base;
    end = base + size;
    return true;
}

/* Bytes a block of `bytes` takes, its header included. */
static size_t block_span(size_t bytes)
{
    return LB_SCRATCH_HEADER + ((bytes + 15) & ~(size_t)15);
}

/* A zeroed scratch block of `bytes`, or NULL (the caller then uses libc). */
static void *take(size_t bytes)
{
    if (bytes > LB_SCRATCH_MAX)
        return NULL;
    size_t need = block_span(bytes);
    if ((size_t)(end - cursor) < need && !add_chunk(need))
        return NULL;
    char *block = cursor;
    cursor += need;
    memcpy(block, &bytes, sizeof bytes);
    return block + LB_SCRATCH_HEADER;
}

void *lb_scratch_malloc(size_t bytes)
{
    void *p = active ? take(bytes) : NULL;
    return p ? p : malloc(bytes);
}

void *lb_scratch_calloc(size_t n, size_t size)
{
    if (!active)
        return calloc(n, size);
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = take(n * size); /* fresh mappings read as zeros */
    return p ? p : calloc(n, size);
}

/* The size of scratch block p. */
static size_t block_size(const void *p)
{
    size_t bytes;
    memcpy(&bytes, (const char *)p - LB_SCRATCH_HEADER, sizeof bytes);
    return bytes;
}

void *lb_scratch_realloc(void *p, size_t bytes)
{
    if (!p || !owned(p))
        return active && !p ? lb_scratch_malloc(bytes) : realloc(p, bytes);
    char *block = (char *)p - LB_SCRATCH_HEADER;
    size_t old_span = block_span(block_size(p));
    if (active && bytes >= block_size(p) && bytes <= LB_SCRATCH_MAX && block + old_span == cursor &&
        (size_t)(end - block) >= block_span(bytes)) {
        /* the last block handed out grows in place (a row log's doubling);
         * never shrinks: what follows it must stay never used (zero) */
        cursor = block + block_span(bytes);
        memcpy(block, &bytes, sizeof bytes);
        return p;
    }
    void *grown = lb_scratch_malloc(bytes); /* another thread's: malloc's */
    if (grown) {
        size_t old = block_size(p);
        memcpy(grown, p, old < bytes ? old : bytes);
    }
    return grown;
}

void lb_scratch_free(void *p)
{
    if (!owned(p))
        free(p);
}
