/* The sampler's part of a thread record (core/hooks.h): its sampling
 * state and calling-context tree, allocated together from the arena when
 * the thread attaches, started once it is lb_self, stopped at its exit,
 * and the CCT compacted after. Written only by the owning thread (and the
 * signal handler on it), read by the final write after quiesce. */
#include <stddef.h>

#include "core/hooks.h"
#include "core/thread_tables.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"
#include "sampler/unwind_cfi.h"
#include "util/pages.h"

typedef struct {
    lb_sampler_thread_t sampler;
    lb_cct_t cct;
} sampler_part_t;

static int sampler_init(lb_thread_t *t)
{
    sampler_part_t *part = lb_arena_alloc_lines(sizeof *part);
    if (!part)
        return -1;
    part->sampler.perf_fd = -1;
    t->sampler = &part->sampler;
    void *chunk0 = lb_thread_tables_take(t, LB_TT_PART_CCT, LB_TT_CCT);
    t->cct = lb_cct_init_in(&part->cct, chunk0) == 0 ? &part->cct : NULL;
    if (!t->cct)
        lb_thread_tables_release(t, LB_TT_PART_CCT);
    return 0;
}

_Static_assert(LB_TT_CCT_BYTES == LB_CCT_FIRST_CHUNK * sizeof(lb_cct_node_t) && LB_TT_CCT % 8 == 0,
               "the CCT's first chunk is its part of the thread tables");

static void sampler_compact(lb_thread_t *t)
{
    if (t->cct)
        lb_cct_compact(t->cct, 1); /* one spare node: the join blame */
    if (!t->cct || t->cct->flat) { /* its first chunk no longer used */
        if (t->cct && t->cct->chunk0_given) {
            uint32_t written =
                t->cct->nodes < LB_CCT_FIRST_CHUNK ? t->cct->nodes : LB_CCT_FIRST_CHUNK;
            lb_thread_tables_wrote(t, lb_thread_tables_pages(LB_TT_CCT, (written ? written : 1) *
                                                                            sizeof(lb_cct_node_t)));
        }
        lb_thread_tables_release(t, LB_TT_PART_CCT);
    }
}

LB_THREAD_HOOKS(sampler_hooks) = {
    .rank = LB_RANK_SAMPLER,
    .init = sampler_init,
    .start = lb_sampler_thread_start,
    .start_foreign = lb_sampler_thread_start,
    .stop = lb_sampler_thread_stop,
    .compact = sampler_compact,
};

static void sampler_setup(void)
{
    lb_unwind_setup();
    lb_sampler_setup();
}

static void sampler_fork_child(lb_thread_t *self)
{
    lb_unwind_cfi_fork_child();
    if (self)
        lb_sampler_after_fork_child(self);
}

LB_PROCESS_HOOKS(sampler_process_hooks) = {
    .rank = LB_RANK_SAMPLER,
    .setup = sampler_setup,
    .quiesce = lb_sampler_quiesce,
    .fork_prepare = lb_unwind_cfi_fork_prepare,
    .fork_child = sampler_fork_child,
};
