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
#include <stdbool.h>
#include <stdint.h>

#include "sampler/metrics.h"

/* Chunk i holds LB_CCT_FIRST_CHUNK << i nodes, so a thread with a handful
 * of contexts maps one small chunk and a busy one still grows to 16M. */
#define LB_CCT_FIRST_SHIFT 6
#define LB_CCT_FIRST_CHUNK (1u << LB_CCT_FIRST_SHIFT) /* 64 nodes */
#define LB_CCT_MAX_CHUNKS  18                         /* 64 * (2^18 - 1) ~ 16.8M nodes */
#define LB_CCT_MAX_NODES   (LB_CCT_FIRST_CHUNK * ((1u << LB_CCT_MAX_CHUNKS) - 1))
#define LB_MAX_DEPTH       256 /* frames kept per path */

typedef struct lb_cct_node {
    uintptr_t pc;    /* code address of this frame; for callers, the call instruction (ra - 1) */
    uint32_t parent; /* node id of the caller; root's parent is 0 */
    uint32_t first_child;  /* 0 = none */
    uint32_t next_sibling; /* 0 = none */
    uint32_t depth;        /* root 0 */
    lb_metrics_t m;        /* exclusive metrics of this node */
} lb_cct_node_t;

typedef struct lb_cct {
    uint32_t nodes;          /* nodes in use, root included */
    uint32_t failed_inserts; /* paths that found no memory (attributed to the root) */
    lb_cct_node_t *chunks[LB_CCT_MAX_CHUNKS]; /* growing form */
    lb_cct_node_t *flat;                      /* compact form (after lb_cct_compact), else NULL */
    uint32_t flat_capacity;                   /* nodes the compact form can hold */
    bool chunk0_given;                        /* chunks[0] is lb_cct_init_in's, not freed here */
} lb_cct_t;

/* Create the root. Returns 0, or -1 if no memory (the tree stays empty and
 * every insert lands on a static dummy root). */
int lb_cct_init(lb_cct_t *cct);
/* The same with the first chunk in zeroed memory of the caller's
 * (LB_CCT_FIRST_CHUNK nodes, 8-byte aligned), which the tree never
 * frees; chunk0 NULL maps one as lb_cct_init does. */
int lb_cct_init_in(lb_cct_t *cct, void *chunk0);
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
/* The owner has exited: move the nodes into one right-sized block from
 * lb_arena_alloc (room for `spare` more nodes) and unmap the chunks. On
 * failure the tree stays as it was. Only the exited owner's last writer
 * (a joiner adding the start-routine node) may insert afterwards. */
void lb_cct_compact(lb_cct_t *cct, uint32_t spare);
#endif
