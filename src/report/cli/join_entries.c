/*
 * join_entries.c - where a std::thread's join blame sits in the tree.
 *
 * A join waits for a thread's end, and the library blames the joined
 * thread's start routine: a one-frame calling context at the root. For a
 * std::thread that routine is libstdc++'s trampoline, the same for every
 * std::thread and unnamed in Debian's libstdc++, so the join blame of all
 * of a program's std::threads sat on one childless root node of
 * `--top-down`, the flame graphs and `compare`. Here each thread's join
 * blame moves to a child of that node named by the function the thread
 * ran (lb_release_entries), one child per function: the tree then says
 * whose end the joins waited for, as `--by-release-site` does. The
 * thread's other figures at the trampoline (its work, its own waits) stay
 * where they are. Runs once, at load, before the profile is indexed, and
 * keeps the entries it used in p->release_entry for the views.
 */
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

/* A node whose path has no frame of the program's own. */
static bool runtime_only(const struct lb_profile *p, int32_t v)
{
    int32_t f = p->nodes[lb_site_node(p, v)].frame;

    return f >= 0 && lb_frame_is_runtime(p, f);
}

void lb_profile_join_entries(struct lb_profile *p)
{
    int32_t *entry = lb_xmalloc(((size_t)p->nthreads + 1) * sizeof *entry);
    struct lb_map child = { 0 };

    p->release_entry = entry; /* kept for the views (views.h) */
    size_t node_cap = (size_t)p->nnodes, mrow_cap = (size_t)p->nmrows;
    int64_t next_id = 0;
    int32_t nmrows = p->nmrows;

    lb_release_entries(p, entry);
    for (int32_t v = 0; v < p->nnodes; v++)
        if (p->nodes[v].id >= next_id)
            next_id = p->nodes[v].id + 1;
    for (int32_t i = 0; i < nmrows; i++) {
        const struct lb_mrow *r = &p->mrows[i];
        int32_t t = lb_map_get(&p->thread_index, (uint64_t)r->thread_id);

        if (r->idle[LB_OBJ_JOIN] <= 0 || t < 0 || entry[t] < 0 || !runtime_only(p, r->node))
            continue;
        bool is_new;
        int32_t *slot = lb_map_slot(&child, (uint64_t)r->node << 32 | (uint32_t)entry[t], &is_new);

        if (is_new) {
            lb_grow((void **)&p->nodes, &node_cap, (size_t)p->nnodes + 1, sizeof *p->nodes);
            p->nodes[p->nnodes] =
                (struct lb_node){ .id = next_id++, .parent = r->node, .frame = entry[t] };
            *slot = p->nnodes++;
        }
        int32_t to = *slot;

        lb_grow((void **)&p->mrows, &mrow_cap, (size_t)p->nmrows + 1, sizeof *p->mrows);
        struct lb_mrow *from = &p->mrows[i], *moved = &p->mrows[p->nmrows++];
        bool join_only = true;

        for (int k = 0; k < LB_OBJ_KINDS; k++)
            join_only &= k == LB_OBJ_JOIN || from->idle[k] <= 0;
        memset(moved, 0, sizeof *moved);
        moved->node = to;
        moved->thread_id = from->thread_id;
        moved->idle[LB_OBJ_JOIN] = from->idle[LB_OBJ_JOIN];
        from->idle[LB_OBJ_JOIN] = 0;
        if (join_only) { /* its blamed releases were the joins' */
            moved->blamed_count = from->blamed_count;
            from->blamed_count = 0;
        }
    }
    lb_map_free(&child);
}
