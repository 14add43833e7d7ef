/*
 * waiters_hint.c - one line under the release-site table when most of the
 * waiting was done by helper threads with little else to do (an I/O
 * thread of zstd or lbzip2 waiting for the next buffer, redis's bio
 * threads parked for the whole run). Their waits are real and blamed by
 * the same rules, so the top rows are right, but a reader should know
 * they are threads waiting for work, not work waiting on a lock. Only
 * waits for a signal count (condition variables and semaphores): a
 * thread that waits on a mutex is contending, whatever its CPU time (one
 * that sleeps inside its holds is busy little and waits a lot), and a
 * join is the program's shape. The initial thread is counted apart: when
 * it alone did most of the waiting that way, busy a small part of its
 * life, it is a coordinator waiting for its workers (git's pack-objects
 * hands out chunks and waits for the workers to finish them), and the
 * line says that instead.
 */
#include <stdlib.h>

#include "report/cli/views.h"

/* A helper: a thread (not a process's initial one) busy less than this
 * share of its life. */
#define LB_HELPER_BUSY       0.10
/* The line is printed when helpers did at least this share of the wait. */
#define LB_HELPER_WAIT_SHARE 0.5

bool lb_waiters_hint(struct lb_profile *p, struct lb_buf *b)
{
    double *wait = calloc((size_t)p->nthreads + 1, sizeof *wait);
    double total = 0;

    if (!wait)
        return false;
    /* each thread's wait sites, (thread, frame) -> SIGNALLED for a wait
	 * for a signal, JOINED for a join (left out of the total: the
	 * program's shape), 0 for other kinds; and the threads still parked
	 * on a cond or semaphore at exit, whose open wait has no site row (a
	 * site counts a wait when it ends): a site of theirs unknown here is
	 * it */
    enum {
        SIGNALLED = 1,
        JOINED = 2
    };
    struct lb_map sites = { 0 }, parked = { 0 };

    for (int32_t i = 0; i < p->nsites; i++) {
        const struct lb_site *st = &p->sites[i];
        bool is_new;
        int32_t kind = lb_obj_kind_is_signalled(st->kind) ? SIGNALLED
                       : st->kind == LB_OBJ_JOIN          ? JOINED
                                                          : 0;
        int32_t *v =
            lb_map_slot(&sites, (uint64_t)st->thread_id << 32 | (uint32_t)st->frame, &is_new);

        *v = is_new ? kind : (*v | kind);
    }
    for (int32_t i = 0; i < p->nstructural; i++) {
        const struct lb_structural *st = &p->structural[i];
        bool is_new;

        if (st->open && lb_obj_kind_is_signalled(st->kind))
            *lb_map_slot(&parked, (uint64_t)st->thread_id, &is_new) = 1;
    }
    for (int32_t i = 0; i < p->nmrows; i++) {
        const struct lb_mrow *r = &p->mrows[i];
        int32_t k = lb_map_get(&p->thread_index, (uint64_t)r->thread_id);

        if (r->wait <= 0)
            continue;
        int32_t f = lb_frame_program(p, p->nodes[lb_site_node(p, r->node)].frame);
        int32_t site = lb_map_get(&sites, (uint64_t)r->thread_id << 32 | (uint32_t)f);

        if (site == JOINED)
            continue;
        total += r->wait;
        if (k >= 0 && ((site >= 0 && (site & SIGNALLED)) ||
                       (site < 0 && lb_map_get(&parked, (uint64_t)r->thread_id) >= 0)))
            wait[k] += r->wait;
    }
    lb_map_free(&sites);
    lb_map_free(&parked);
    double helpers_wait = 0;
    int32_t helpers = 0, first = -1, initial = -1;

    for (int32_t i = 0; i < p->nthreads; i++) {
        const struct lb_thread *t = &p->threads[i];
        double life = t->end_s - t->start_s;

        if (wait[i] <= 0 || life <= 0 || t->cpu_s >= LB_HELPER_BUSY * life)
            continue;
        if (lb_thread_is_initial(p, t)) {
            if (initial < 0 || wait[i] > wait[initial])
                initial = i;
            continue;
        }
        helpers_wait += wait[i];
        helpers++;
        if (first < 0 || wait[i] > wait[first])
            first = i;
    }
    bool hint = helpers > 0 && total > 0 && helpers_wait >= LB_HELPER_WAIT_SHARE * total;
    bool coordinator =
        !hint && initial >= 0 && total > 0 && wait[initial] >= LB_HELPER_WAIT_SHARE * total;

    if (coordinator)
        lb_buf_printf(b,
                      "%.0f%% of the wait (joins aside) is the initial thread (main) waiting for"
                      " signals, busy less than %.0f%% of its life: a coordinator waiting"
                      " for its workers, if that is its job; --by-thread",
                      100.0 * wait[initial] / total, 100.0 * LB_HELPER_BUSY);
    if (hint) {
        struct lb_buf name = { 0 }; /* as --by-thread names it */
        lb_thread_label(p, first, p->release_entry, &name);
        lb_buf_printf(
            b,
            "%.0f%% of the wait (joins aside) is %d thread(s) waiting for signals, busy less"
            " than %.0f%% of their lives (the most: %s): helpers waiting for work,"
            " if that is their job; --by-thread",
            100.0 * helpers_wait / total, helpers, 100.0 * LB_HELPER_BUSY, lb_buf_str(&name));
        lb_buf_free(&name);
    }
    free(wait);
    return hint || coordinator;
}
