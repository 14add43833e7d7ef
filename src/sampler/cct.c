/* The per-thread calling context tree (see cct.h for the contract).
 *
 * Layout: node ids index a two-level table of chunks that double in size
 * (64, 128, 256, ... nodes), so a short-lived thread maps a few KB and a
 * busy one still grows to 16M nodes with 18 pointers. After the owner
 * exits, lb_cct_compact may move the nodes into one flat block.
 * Chunks are anonymous mappings (lb_pages_alloc; the first one may be
 * the caller's memory: lb_cct_init_in), so a chunk can be added
 * from the sampling signal handler; nothing here calls malloc or takes a
 * lock. A node's children form a singly linked sibling list; a hit moves
 * the child to the front, so the hot path of a thread is found in one or
 * two probes per level.
 *
 * Invariants:
 *  - Only the owning thread writes a tree (normal code under lb_thread.busy,
 *    or its own signal handler when busy is clear), so no atomics are needed.
 *  - nodes only grows; a node's pc, parent and depth never change after it
 *    is linked, so ids handed out stay valid until lb_cct_destroy.
 *  - A node is fully initialised before it is linked into its parent's list. */
#include "sampler/cct.h"

#include <stddef.h>

#include "util/common.h"
#include "util/pages.h"

static inline uint32_t chunk_nodes(uint32_t chunk)
{
    return LB_CCT_FIRST_CHUNK << chunk;
}

static inline size_t chunk_bytes(uint32_t chunk)
{
    return (size_t)chunk_nodes(chunk) * sizeof(lb_cct_node_t);
}

/* Chunk i starts at id FIRST * (2^i - 1). */
static inline uint32_t chunk_of(uint32_t id)
{
    return 31u - (uint32_t)__builtin_clz((id >> LB_CCT_FIRST_SHIFT) + 1u);
}

static inline uint32_t chunk_start(uint32_t chunk)
{
    return LB_CCT_FIRST_CHUNK * ((1u << chunk) - 1u);
}

/* Where inserts land when a tree has no memory at all. Shared by all such
 * trees, so its counters are approximate; it is never reported as a node. */
static lb_cct_node_t lb_cct_dummy_root;

static inline lb_cct_node_t *lb_cct_at(const lb_cct_t *cct, uint32_t id)
{
    if (lb_unlikely(cct->flat != NULL))
        return &cct->flat[id];
    uint32_t chunk = chunk_of(id);
    return &cct->chunks[chunk][id - chunk_start(chunk)];
}

/* Creates node 0. On failure the tree stays empty (nodes == 0) and every
 * insert returns the dummy root. Returns 0 or -1. */
int lb_cct_init(lb_cct_t *cct)
{
    return lb_cct_init_in(cct, NULL);
}

int lb_cct_init_in(lb_cct_t *cct, void *chunk0)
{
    for (uint32_t i = 0; i < LB_CCT_MAX_CHUNKS; i++)
        cct->chunks[i] = NULL;
    cct->nodes = 0;
    cct->failed_inserts = 0;
    cct->flat = NULL;
    cct->flat_capacity = 0;
    cct->chunk0_given = chunk0 != NULL;
    cct->chunks[0] =
        chunk0 ? chunk0 : lb_pages_alloc_recycled(chunk_bytes(0)); /* at thread start */
    if (!cct->chunks[0])
        return -1;
    /* fresh memory is zeroed: the root has pc 0, parent 0, no children. */
    cct->nodes = 1;
    return 0;
}

/* Frees the chunks (the first unless it was given). */
static void free_chunks(lb_cct_t *cct)
{
    if (!cct->chunk0_given)
        lb_pages_free_recycled(cct->chunks[0], chunk_bytes(0));
    cct->chunks[0] = NULL;
    for (uint32_t i = 1; i < LB_CCT_MAX_CHUNKS; i++) {
        lb_pages_free(cct->chunks[i], chunk_bytes(i));
        cct->chunks[i] = NULL;
    }
}

/* Unmaps every chunk. The tree is empty afterwards (inserts hit the dummy
 * root); the caller must make sure no handler can still be inside it. */
void lb_cct_destroy(lb_cct_t *cct)
{
    free_chunks(cct);
    cct->flat = NULL; /* arena memory is never returned */
    cct->flat_capacity = 0;
    cct->nodes = 0;
}

/* A fresh zeroed node id, mapping a new chunk when the last one is full.
 * Returns 0 (never a valid child id) when the table or the kernel has no
 * more memory; nothing is changed then. */
static uint32_t lb_cct_new_node(lb_cct_t *cct)
{
    uint32_t id = cct->nodes;
    if (cct->flat) {
        if (id >= cct->flat_capacity)
            return 0;
        cct->nodes = id + 1;
        return id;
    }
    if (id >= LB_CCT_MAX_NODES)
        return 0;
    uint32_t chunk = chunk_of(id);
    if (!cct->chunks[chunk]) {
        cct->chunks[chunk] = lb_pages_alloc(chunk_bytes(chunk));
        if (!cct->chunks[chunk])
            return 0;
    }
    cct->nodes = id + 1;
    return id;
}

/* Finds or adds pcs[n-1] ... pcs[0] below the root and returns the node of
 * pcs[0]. Async-signal-safe. On exhaustion returns the deepest existing
 * node of the path and counts one failed insert; never returns NULL. */
lb_cct_node_t *lb_cct_insert(lb_cct_t *cct, const uintptr_t *pcs, int n)
{
    if (lb_unlikely(cct->nodes == 0)) {
        cct->failed_inserts++;
        return &lb_cct_dummy_root;
    }
    uint32_t cur_id = 0;
    lb_cct_node_t *cur = lb_cct_at(cct, 0);
    for (int i = n - 1; i >= 0; i--) {
        uintptr_t pc = pcs[i];
        uint32_t prev_id = 0;
        uint32_t c = cur->first_child;
        lb_cct_node_t *child = NULL;
        while (c) {
            lb_cct_node_t *node = lb_cct_at(cct, c);
            if (node->pc == pc) {
                child = node;
                if (prev_id) { /* move to front */
                    lb_cct_at(cct, prev_id)->next_sibling = node->next_sibling;
                    node->next_sibling = cur->first_child;
                    cur->first_child = c;
                }
                break;
            }
            prev_id = c;
            c = node->next_sibling;
        }
        if (!child) {
            c = lb_cct_new_node(cct);
            if (!c) {
                cct->failed_inserts++;
                return cur;
            }
            child = lb_cct_at(cct, c);
            child->pc = pc;
            child->parent = cur_id;
            child->depth = cur->depth + 1;
            child->first_child = 0;
            child->next_sibling = cur->first_child;
            cur->first_child = c;
        }
        cur = child;
        cur_id = c;
    }
    return cur;
}

/* The node with this id, or NULL when id is not below nodes. */
lb_cct_node_t *lb_cct_node(const lb_cct_t *cct, uint32_t id)
{
    if (id >= cct->nodes)
        return NULL;
    return lb_cct_at(cct, id);
}

/* The id of node. Scans the chunk table (a few pointers for a typical
 * tree); returns 0 (the root) for the dummy root or a foreign pointer. */
uint32_t lb_cct_id(const lb_cct_t *cct, const lb_cct_node_t *node)
{
    if (cct->flat)
        return node >= cct->flat && node < cct->flat + cct->flat_capacity
                   ? (uint32_t)(node - cct->flat)
                   : 0;
    for (uint32_t i = 0; i < LB_CCT_MAX_CHUNKS; i++) {
        const lb_cct_node_t *base = cct->chunks[i];
        if (base && node >= base && node < base + chunk_nodes(i))
            return chunk_start(i) + (uint32_t)(node - base);
    }
    return 0;
}

void lb_cct_compact(lb_cct_t *cct, uint32_t spare)
{
    if (cct->flat || cct->nodes == 0)
        return;
    uint32_t capacity = cct->nodes + spare;
    lb_cct_node_t *flat = lb_arena_alloc((size_t)capacity * sizeof *flat);
    if (!flat)
        return;
    for (uint32_t id = 0; id < cct->nodes; id++)
        flat[id] = *lb_cct_at(cct, id);
    cct->flat_capacity = capacity;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cct->flat = flat;
    free_chunks(cct);
}
