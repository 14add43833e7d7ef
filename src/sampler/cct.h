/* The per-thread calling context tree (CCT).
 *
 * Invariants: a CCT is written only by its own thread, from normal code
 * and from that thread's sampling signal handler. The two never interleave
 * because normal code sets lb_thread.busy around every CCT write and the
 * handler drops (and counts) a sample that finds busy set. Memory comes
 * from mmap'd chunks, never malloc, so inserting is async-signal-safe.
 * Node 0 is the root. Node ids are stable for the life of the tree.
 * Other threads read a CCT only after its owner has exited or at the final
 * write, when sampling is stopped. */
#ifndef LB_CCT_H
#define LB_CCT_H
#include <stdint.h>

#include "sampler/metrics.h"

#define LB_CCT_CHUNK_SHIFT 12                      /* 4096 nodes a chunk */
#define LB_CCT_CHUNK_NODES (1u << LB_CCT_CHUNK_SHIFT)
#define LB_CCT_MAX_CHUNKS 4096                     /* at most 16M nodes a thread */
#define LB_MAX_DEPTH 256                           /* frames kept per path */

typedef struct lb_cct_node {
    uintptr_t pc;           /* code address of this frame; for callers, the call instruction (ra - 1) */
    uint32_t parent;        /* node id of the caller; root's parent is 0 */
    uint32_t first_child;   /* 0 = none */
    uint32_t next_sibling;  /* 0 = none */
    uint32_t depth;         /* root 0 */
    lb_metrics_t m;         /* exclusive metrics of this node */
} lb_cct_node_t;

typedef struct lb_cct {
    lb_cct_node_t *chunks[LB_CCT_MAX_CHUNKS];
    uint32_t nodes;          /* nodes in use, root included */
    uint32_t failed_inserts; /* paths that found no memory (attributed to the root) */
} lb_cct_t;

/* Create the root. Returns 0, or -1 if no memory (the tree stays empty and
 * every insert lands on a static dummy root). */
int lb_cct_init(lb_cct_t *cct);
/* Release all chunks; the tree must not be used afterwards. */
void lb_cct_destroy(lb_cct_t *cct);
/* Find or add the path pcs[n-1] (outermost) ... pcs[0] (innermost) below
 * the root; returns the innermost node. On memory exhaustion returns the
 * deepest node that exists and counts a failed insert. Never fails. */
lb_cct_node_t *lb_cct_insert(lb_cct_t *cct, const uintptr_t *pcs, int n);
/* The node with this id, or NULL when out of range. */
lb_cct_node_t *lb_cct_node(const lb_cct_t *cct, uint32_t id);
/* The id of a node returned by lb_cct_insert or lb_cct_node. */
uint32_t lb_cct_id(const lb_cct_t *cct, const lb_cct_node_t *node);
#endif
