/* Unit tests for the calling context tree (src/sampler/cct.c) and the
 * object-kind names (src/common/kinds.c).
 *
 * Built by tests/tests.mak against the library's core archive. By hand:
 *   gcc -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -Itests -pthread \
 *       tests/unit/sampler_cct.c src/sampler/cct.c src/common/kinds.c \
 *       src/util/pages.c -o /tmp/sampler_cct && /tmp/sampler_cct
 */
#include "check.h"

#include "sampler/cct.h"
#include "sampler/metrics.h"
#include "util/pages.h"

static lb_cct_t *new_tree(void)
{
    lb_cct_t *cct = lb_pages_alloc(sizeof *cct);
    ASSERT_NOT_NULL(cct);
    ASSERT_EQ(lb_cct_init(cct), 0);
    ASSERT_EQ(cct->nodes, 1);
    return cct;
}

static void test_insert_path_and_depth(void)
{
    lb_cct_t *cct = new_tree();
    const uintptr_t a[] = { 0x1000, 0x2000, 0x3000 }; /* innermost first */
    lb_cct_node_t *leaf = lb_cct_insert(cct, a, 3);
    ASSERT_UEQ(leaf->pc, 0x1000);
    ASSERT_EQ(leaf->depth, 3);
    ASSERT_EQ(cct->nodes, 4);
    lb_cct_node_t *mid = lb_cct_node(cct, leaf->parent);
    ASSERT_NOT_NULL(mid);
    ASSERT_UEQ(mid->pc, 0x2000);
    ASSERT_EQ(mid->depth, 2);
    lb_cct_node_t *top = lb_cct_node(cct, mid->parent);
    ASSERT_UEQ(top->pc, 0x3000);
    ASSERT_EQ(top->depth, 1);
    ASSERT_EQ(top->parent, 0);
    ASSERT_EQ(lb_cct_node(cct, 0)->first_child, lb_cct_id(cct, top));
    /* the same path again is found, not added */
    ASSERT_PTR_EQ(lb_cct_insert(cct, a, 3), leaf);
    ASSERT_EQ(cct->nodes, 4);
    /* an empty path is the root */
    ASSERT_PTR_EQ(lb_cct_insert(cct, a, 0), lb_cct_node(cct, 0));
    ASSERT_EQ(cct->failed_inserts, 0);
    lb_cct_destroy(cct);
}

static void test_shared_prefix_and_move_to_front(void)
{
    lb_cct_t *cct = new_tree();
    const uintptr_t a[] = { 0x10, 0x20, 0x30 };
    const uintptr_t b[] = { 0x11, 0x20, 0x30 };
    const uintptr_t c[] = { 0x12, 0x20, 0x30 };
    lb_cct_node_t *na = lb_cct_insert(cct, a, 3);
    lb_cct_node_t *nb = lb_cct_insert(cct, b, 3);
    lb_cct_node_t *nc = lb_cct_insert(cct, c, 3);
    ASSERT_EQ(cct->nodes, 6); /* root, 0x30, 0x20, three leaves */
    ASSERT_EQ(na->parent, nb->parent);
    ASSERT_EQ(nb->parent, nc->parent);
    lb_cct_node_t *parent = lb_cct_node(cct, na->parent);
    ASSERT_EQ(parent->first_child, lb_cct_id(cct, nc)); /* newest first */
    ASSERT_PTR_EQ(lb_cct_insert(cct, a, 3), na);        /* hit moves a to front */
    ASSERT_EQ(parent->first_child, lb_cct_id(cct, na));
    /* all three are still reachable through the sibling list */
    int seen = 0;
    for (uint32_t id = parent->first_child; id; id = lb_cct_node(cct, id)->next_sibling)
        seen++;
    ASSERT_EQ(seen, 3);
    ASSERT_PTR_EQ(lb_cct_insert(cct, b, 3), nb);
    ASSERT_PTR_EQ(lb_cct_insert(cct, c, 3), nc);
    ASSERT_EQ(cct->nodes, 6);
    /* a different outermost frame makes a separate subtree */
    const uintptr_t d[] = { 0x10, 0x20, 0x31 };
    lb_cct_node_t *nd = lb_cct_insert(cct, d, 3);
    ASSERT_NE(lb_cct_id(cct, nd), lb_cct_id(cct, na));
    ASSERT_EQ(cct->nodes, 9);
    lb_cct_destroy(cct);
}

static void test_ids_across_chunks(void)
{
    lb_cct_t *cct = new_tree();
    uint32_t n = 5000; /* spans chunks 0..6 */
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t p[2] = { 0x100000 + i, 0x42 };
        lb_cct_node_t *node = lb_cct_insert(cct, p, 2);
        ASSERT_EQ(node->depth, 2);
        node->m.work_samples = i;
    }
    ASSERT_EQ(cct->nodes, n + 2);
    ASSERT_NOT_NULL(cct->chunks[1]);
    ASSERT_NOT_NULL(cct->chunks[6]);
    for (uint32_t id = 0; id < cct->nodes; id++)
        ASSERT_EQ(lb_cct_id(cct, lb_cct_node(cct, id)), id);
    ASSERT_NULL(lb_cct_node(cct, cct->nodes));
    /* a late hit deep in a long sibling list still finds the old node */
    uintptr_t p[2] = { 0x100000 + 7, 0x42 };
    ASSERT_EQ(lb_cct_insert(cct, p, 2)->m.work_samples, 7);
    ASSERT_EQ(cct->nodes, n + 2);
    lb_cct_destroy(cct);
    ASSERT_EQ(cct->nodes, 0);
}

static void test_exhaustion_returns_deepest(void)
{
    lb_cct_t *cct = new_tree();
    /* Pretend the table is full but for one node: the next insert maps the
     * last chunk, the one after finds no room. */
    cct->nodes = LB_CCT_MAX_NODES - 1;
    const uintptr_t a[] = { 0xbb, 0xaa };
    lb_cct_node_t *got = lb_cct_insert(cct, a, 2);
    ASSERT_UEQ(got->pc, 0xaa);
    ASSERT_EQ(got->depth, 1);
    ASSERT_EQ(cct->failed_inserts, 1);
    ASSERT_EQ(lb_cct_id(cct, got), LB_CCT_MAX_NODES - 1);
    lb_cct_destroy(cct);
}

static void test_empty_tree_uses_dummy_root(void)
{
    lb_cct_t *cct = lb_pages_alloc(sizeof *cct);
    ASSERT_NOT_NULL(cct); /* zeroed, never initialised */
    const uintptr_t a[] = { 1, 2 };
    lb_cct_node_t *got = lb_cct_insert(cct, a, 2);
    ASSERT_NOT_NULL(got);
    ASSERT_EQ(cct->failed_inserts, 1);
    ASSERT_NULL(lb_cct_node(cct, 0));
    ASSERT_EQ(lb_cct_id(cct, got), 0);
}

static void test_compact_keeps_ids_and_metrics(void)
{
    lb_cct_t *cct = new_tree();
    for (uint32_t i = 0; i < 300; i++) {
        uintptr_t p[3] = { 0x5000 + i, 0x400 + i % 7, 0x42 };
        lb_cct_insert(cct, p, 3)->m.wait_ns = i + 1;
    }
    uint32_t nodes = cct->nodes;
    uint64_t before = 0;
    for (uint32_t id = 0; id < nodes; id++)
        before += lb_cct_node(cct, id)->m.wait_ns * id;
    lb_cct_compact(cct, 1);
    ASSERT_NOT_NULL(cct->flat);
    ASSERT_NULL(cct->chunks[0]);
    ASSERT_EQ(cct->nodes, nodes);
    uint64_t after = 0;
    for (uint32_t id = 0; id < nodes; id++) {
        ASSERT_EQ(lb_cct_id(cct, lb_cct_node(cct, id)), id);
        after += lb_cct_node(cct, id)->m.wait_ns * id;
    }
    ASSERT_UEQ(after, before);
    /* an existing path is found again; one new node fits, the next does not */
    uintptr_t old[3] = { 0x5000 + 9, 0x400 + 2, 0x42 };
    ASSERT_EQ(lb_cct_insert(cct, old, 3)->m.wait_ns, 10);
    uintptr_t fresh[1] = { 0x777 };
    ASSERT_UEQ(lb_cct_insert(cct, fresh, 1)->pc, 0x777);
    uintptr_t more[1] = { 0x778 };
    ASSERT_EQ(lb_cct_insert(cct, more, 1)->depth, 0);
    ASSERT_EQ(cct->failed_inserts, 1);
}

static void test_kind_names(void)
{
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_MUTEX), "mutex");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_SPIN), "spin");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_RWLOCK), "rwlock");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_COND), "cond");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_BARRIER), "barrier");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_SEM), "sem");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_JOIN), "join");
    ASSERT_STR_EQ(lb_obj_kind_name(LB_OBJ_KINDS), "unknown");
}

CHECK_MAIN(test_insert_path_and_depth, test_compact_keeps_ids_and_metrics,
           test_shared_prefix_and_move_to_front, test_ids_across_chunks,
           test_exhaustion_returns_deepest, test_empty_tree_uses_dummy_root, test_kind_names)
