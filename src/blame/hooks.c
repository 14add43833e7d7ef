/* The blame layer's part of a thread record (core/hooks.h): the
 * per-site counts (mmap'd, compacted into the arena at exit), the rwlock
 * holds, the per-object blame table and the wait note; the context cache
 * (context.c, thread-local) is unmapped when the thread stops. Written only by the owning thread;
 * read by the final write and by a joiner after the thread exited. */
#include <stddef.h>

#include "blame/context.h"
#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/rw_holds.h"
#include "blame/sites.h"
#include "blame/spin_sampled.h"
#include "blame/wait_deferred.h"
#include "blame/wait_note.h"
#include "core/hooks.h"
#include "core/thread_tables.h"
#include "util/pages.h"

typedef struct {
    lb_rw_holds_t rw_holds;
    lb_object_blame_table_t object_blame;
    lb_wait_note_t wait_note;
    lb_wait_deferred_t wait_deferred;
} blame_part_t;

static int blame_init(lb_thread_t *t)
{
    blame_part_t *part = lb_arena_alloc_lines(sizeof *part);
    lb_site_table_t *sites = part ? lb_thread_tables_take(t, LB_TT_PART_SITES, LB_TT_SITES) : NULL;
    if (part && !sites)
        sites = lb_pages_alloc_recycled(sizeof *sites); /* no block: a table of its own */
    if (!sites)
        return -1; /* arena memory is simply not used */
    t->rw_holds = &part->rw_holds;
    t->object_blame = &part->object_blame;
    t->wait_note = &part->wait_note;
    t->wait_deferred = &part->wait_deferred;
    t->sites = sites;
    t->site_pages = 0; /* a fresh table: no page claimed */
    t->site_overflow = 0;
    return 0;
}

static void blame_start(lb_thread_t *t)
{
    lb_object_totals_bind(t->unrecorded_acquisitions);
}

/* The thread ends: a deferred wait end is finished, its context cache
 * given back, its sampled spin waits go to their record. */
static void blame_stop(lb_thread_t *t)
{
    lb_wait_deferred_flush(t);
    lb_context_thread_exit(t);
    lb_spin_sampled_flush(t);
}

/* Keep only the used site slots, in arena memory; on failure the table
 * stays mapped (correct, only bigger). */
static void blame_compact(lb_thread_t *t)
{
    uint32_t n = 0;
    lb_site_t *kept = lb_sites_compact(t, &n);
    if (kept || n == 0) {
        t->kept_sites = kept;
        t->n_kept_sites = n;
        lb_site_table_t *table = t->sites;
        t->sites = NULL;
        if (t->tables_parts & LB_TT_PART_SITES) {
            lb_thread_tables_wrote(t, t->site_pages << (LB_TT_SITES / LB_TT_PAGE));
            lb_thread_tables_release(t, LB_TT_PART_SITES);
        } else
            lb_pages_free_recycled(table, sizeof *table);
    }
}

_Static_assert(sizeof(lb_site_table_t) == LB_TT_SITES_BYTES && LB_TT_SITES % LB_SITE_PAGE == 0 &&
                   LB_TT_SITES + LB_SITE_BACK * sizeof(lb_site_t) == LB_TT_HOT,
               "the site table is its part of the thread tables, its front on the hot page");

LB_THREAD_HOOKS(blame_hooks) = {
    .rank = LB_RANK_BLAME,
    .init = blame_init,
    .start = blame_start,
    .stop = blame_stop,
    .compact = blame_compact,
};
