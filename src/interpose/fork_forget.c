/* A fork child starts a process of its own in the run's database, so it
 * forgets what its parent recorded before the fork: otherwise the parent's
 * work and waits would be counted twice, and every child of a profiled
 * process would look as if it had recorded something.
 *
 * A fork_child process hook (core/hooks.h) at the top rank: it runs while
 * the forking thread is the only thread, after the lower layers' own
 * fork_child steps. */
#include <string.h>

#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/sites.h"
#include "blame/wait_note.h"
#include "core/hooks.h"
#include "locks/monitored.h"
#include "locks/mutex_ops.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "util/fork_pages.h"
#include "util/own_memory.h"

/* A live object's acquisition count: in the lb_mon, and for a pthread
 * mutex (published in the mutex) also in the mutex itself (written
 * fault-free: its memory may be gone); an OpenMP lock's lb_mon is never
 * published (locks/omp_lock_ops.c). A mutex without an lb_mon is not
 * found here: its counted tag is the parent's, so it starts counting
 * afresh (locks/mutex_ops.h). */
static void forget_mon(lb_mon_t *mon, void *unused)
{
    LB_STORE_CHANGED(&mon->acquisitions, 0);
    if (mon->kind == LB_OBJ_MUTEX && mon->published && mon->addr) {
        uint64_t zero = 0;
        lb_write_own(lb_mutex_acquisitions((pthread_mutex_t *)mon->addr), &zero, sizeof zero);
    }
}

/* Zero the forking thread's counts (CCT metrics, samples, sites, object
 * blame), every live object's acquisitions and every object record,
 * writing only what is not 0 already (util/fork_pages.h). */
static void fork_forget(lb_thread_t *self)
{
    if (!self)
        return; /* lockblame was not running on the forking thread */
    lb_mon_for_each(forget_mon, NULL);
    /* the parent's run of timed waits (wait_note.h): the child's own
     * waits are not its (written only where set: a page the child would
     * otherwise not copy) */
    if (self->wait_note && self->wait_note->expired.mon)
        self->wait_note->expired = (lb_expired_run_t){ 0 };
    if (self->expired_mon)
        self->expired_mon = NULL;
    if (self->cct) {
        for (uint32_t id = 0; id < self->cct->nodes; id++) {
            lb_cct_node_t *node = lb_cct_node(self->cct, id);
            if (node)
                lb_zero_changed(&node->m, sizeof node->m);
        }
    }
    if (self->sampler) {
        LB_STORE_CHANGED(&self->sampler->samples, 0);
        LB_STORE_CHANGED(&self->sampler->dropped, 0);
        LB_STORE_CHANGED(&self->sampler->busy_samples, 0);
    }
    if (self->sites) {
        for (uint32_t i = 0; i < LB_SITE_SLOTS; i++) {
            if (!lb_site_in_use(self, i))
                continue; /* all 0, on a page maybe never touched */
            lb_site_t *site = &self->sites->slot[i];
            LB_STORE_CHANGED(&site->releases, 0u);
            LB_STORE_CHANGED(&site->acquisitions, 0u);
            LB_STORE_CHANGED(&site->contended, 0u);
        }
    }
    lb_object_blame_table_t *ob = self->object_blame;
    for (uint32_t i = 0; ob && i < ob->capacity; i++) {
        LB_STORE_CHANGED(&ob->slot[i].blame_ns, 0.0);
        LB_STORE_CHANGED(&ob->slot[i].count, 0u);
    }
    lb_zero_changed(self->unrecorded_acquisitions, sizeof self->unrecorded_acquisitions);
    LB_STORE_CHANGED(&self->spin_sampled_waits, 0); /* the parent's sampled spin waits */
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (!s)
            continue;
        lb_object_stats_fold_sampled(s);
        LB_STORE_CHANGED(&s->acquisitions, 0);
        LB_STORE_CHANGED(&s->contended, 0);
        LB_STORE_CHANGED(&s->wait_ns, 0);
        LB_STORE_CHANGED(&s->accrued_held_ns, 0);
        LB_STORE_CHANGED(&s->blamed_ns, 0);
        LB_STORE_CHANGED(&s->handoff_ns, 0);
        LB_STORE_CHANGED(&s->shared_handoff_ns, 0);
        LB_STORE_CHANGED(&s->outside_ns, 0);
        LB_STORE_CHANGED(&s->settled_ns, 0);
        LB_STORE_CHANGED(&s->expired_ns, 0);
    }
}

LB_PROCESS_HOOKS(fork_forget_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .fork_child = fork_forget,
};
