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

#define LB_SCRATCH_CHUNKS      64
#define LB_SCRATCH_HEADER      16
/* The chunk table's first entries, kept with the state (below). */
#define LB_SCRATCH_NEAR_CHUNKS 4

typedef struct chunk {
    char *base;
    size_t size;
} chunk_t;

static __thread bool active;
/* What every process's exit write writes, in the library's section of the
 * variables a fork child writes (util/common.h's LB_FORK_WRITTEN, named
 * here: common/ includes no util/ header), so that a recording fork child
 * does not fault in a page of .bss for it: the claim, the cursor, and
 * the chunk table's first entries (an exit write takes one or two). */
static struct {
    int claimed; /* 0, then 1 once a thread owns the scratch memory */
    unsigned n_chunks;
    void *(*map_chunk)(size_t bytes);
    char *cursor, *end;
    size_t mapped;
    chunk_t near[LB_SCRATCH_NEAR_CHUNKS];
} state __attribute__((section("lb_fork_written"), aligned(64)));
static chunk_t far_chunks[LB_SCRATCH_CHUNKS - LB_SCRATCH_NEAR_CHUNKS];

/* Entry i of the chunk table. */
static chunk_t *chunk_at(unsigned i)
{
    return i < LB_SCRATCH_NEAR_CHUNKS ? &state.near[i] : &far_chunks[i - LB_SCRATCH_NEAR_CHUNKS];
}

bool lb_scratch_on(void *(*map)(size_t bytes))
{
    if (active)
        return true;
    int expected = 0;
    if (!__atomic_compare_exchange_n(&state.claimed, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return false;
    state.map_chunk = map;
    active = true;
    return true;
}

static bool owned(const void *p)
{
    unsigned n = __atomic_load_n(&state.n_chunks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        const chunk_t *c = chunk_at(i);
        if ((const char *)p >= c->base && (const char *)p < c->base + c->size)
            return true;
    }
    return false;
}

/* A fresh chunk with room for `need` bytes; false when none can be made. */
static bool add_chunk(size_t need)
{
    size_t size = need > LB_SCRATCH_CHUNK ? (need + LB_SCRATCH_CHUNK - 1) & ~(LB_SCRATCH_CHUNK - 1)
                                          : LB_SCRATCH_CHUNK;
    if (state.n_chunks == LB_SCRATCH_CHUNKS || state.mapped + size > LB_SCRATCH_MAX)
        return false;
    char *base = state.map_chunk(size);
    if (!base)
        return false;
    *chunk_at(state.n_chunks) = (chunk_t){ base, size };
    __atomic_store_n(&state.n_chunks, state.n_chunks + 1, __ATOMIC_RELEASE);
    state.mapped += size;
    state.cursor = base;
    state.end = base + size;
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
    if ((size_t)(state.end - state.cursor) < need && !add_chunk(need))
        return NULL;
    char *block = state.cursor;
    state.cursor += need;
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
    if (active && bytes >= block_size(p) && bytes <= LB_SCRATCH_MAX &&
        block + old_span == state.cursor && (size_t)(state.end - block) >= block_span(bytes)) {
        /* the last block handed out grows in place (a row log's doubling);
         * never shrinks: what follows it must stay never used (zero) */
        state.cursor = block + block_span(bytes);
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
