/*
 * tree.c - derived indices of a loaded profile: metric rows grouped by node
 * (counting sort, O(rows)), the CCT as CSR child lists, a preorder from the
 * root with depths, per-node exclusive/inclusive values and run totals.
 *
 * Invariant after lb_profile_index: preorder lists each node reachable from
 * the root exactly once, parents before children; unreachable nodes (a
 * corrupt parent cycle) are in no view.
 */
#include <stdlib.h>
#include <string.h>

#include "common/unseen.h"
#include "report/cli/profile.h"

const char *const lb_metric_names[LB_NMETRICS] = {
    [LB_M_IDLENESS] = "idleness",
    [LB_M_WORK] = "work",
    [LB_M_WAIT] = "wait",
    [LB_M_OVERHEAD] = "overhead",
};

int lb_metric_parse(const char *s)
{
    for (int m = 0; s && m < LB_NMETRICS; m++)
        if (strcmp(s, lb_metric_names[m]) == 0)
            return m;
    return -1;
}

double lb_mrow_idleness(const struct lb_mrow *r)
{
    double s = 0;

    for (int k = 0; k < LB_OBJ_KINDS; k++)
        s += r->idle[k];
    return s;
}

double lb_mrow_value(const struct lb_mrow *r, enum lb_metric m)
{
    switch (m) {
    case LB_M_IDLENESS:
        return lb_mrow_idleness(r);
    case LB_M_WORK:
        return r->work;
    case LB_M_WAIT:
        return r->wait;
    case LB_M_OVERHEAD:
        return r->overhead;
    default:
        return 0;
    }
}

/* Group the metric rows by node with a counting sort applied in place
 * (cycle by cycle), so 1M rows need no second 100 MB array. */
static void sort_mrows(struct lb_profile *p)
{
    int32_t *start = lb_xcalloc((size_t)p->nnodes + 1, sizeof *start);
    int32_t *dest = lb_xmalloc(((size_t)p->nmrows + 1) * sizeof *dest);

    for (int32_t i = 0; i < p->nmrows; i++)
        start[p->mrows[i].node + 1]++;
    for (int32_t i = 0; i < p->nnodes; i++)
        start[i + 1] += start[i];
    int32_t *pos = lb_xmalloc(((size_t)p->nnodes + 1) * sizeof *pos);

    memcpy(pos, start, ((size_t)p->nnodes + 1) * sizeof *pos);
    for (int32_t i = 0; i < p->nmrows; i++)
        dest[i] = pos[p->mrows[i].node]++;
    free(pos);
    for (int32_t i = 0; i < p->nmrows; i++) {
        while (dest[i] != i) {
            int32_t j = dest[i];
            struct lb_mrow tmp = p->mrows[j];

            p->mrows[j] = p->mrows[i];
            p->mrows[i] = tmp;
            dest[i] = dest[j];
            dest[j] = j;
        }
    }
    free(dest);
    p->mrow_start = start;
}

static void build_children(struct lb_profile *p)
{
    int32_t n = p->nnodes;
    int32_t *start = lb_xcalloc((size_t)n + 1, sizeof *start);
    int32_t *idx = lb_xmalloc(((size_t)n + 1) * sizeof *idx);

    for (int32_t i = 0; i < n; i++)
        if (p->nodes[i].parent >= 0)
            start[p->nodes[i].parent + 1]++;
    for (int32_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    int32_t *pos = lb_xmalloc(((size_t)n + 1) * sizeof *pos);

    memcpy(pos, start, ((size_t)n + 1) * sizeof *pos);
    for (int32_t i = 0; i < n; i++)
        if (p->nodes[i].parent >= 0)
            idx[pos[p->nodes[i].parent]++] = i;
    free(pos);
    p->child_start = start;
    p->child_idx = idx;
}

/* Iterative preorder with an explicit stack: CCTs can be deep. Every node
 * has one parent, so what the root reaches is a tree and each node is
 * pushed at most once: nnodes stack entries suffice. */
static void build_preorder(struct lb_profile *p)
{
    int32_t *stack = lb_xmalloc(((size_t)p->nnodes + 1) * sizeof *stack);
    int32_t sp = 0;

    p->preorder = lb_xmalloc(((size_t)p->nnodes + 1) * sizeof *p->preorder);
    p->npreorder = 0;
    stack[sp++] = p->root;
    p->nodes[p->root].depth = 0;
    while (sp > 0) {
        int32_t v = stack[--sp];

        p->preorder[p->npreorder++] = v;
        for (int32_t c = p->child_start[v + 1] - 1; c >= p->child_start[v]; c--) {
            int32_t w = p->child_idx[c];

            p->nodes[w].depth = p->nodes[v].depth + 1;
            stack[sp++] = w;
        }
    }
    free(stack);
}

static void compute_totals(struct lb_profile *p)
{
    struct lb_totals *t = &p->totals;

    memset(t, 0, sizeof *t);
    for (int32_t i = 0; i < p->nmrows; i++) {
        const struct lb_mrow *r = &p->mrows[i];

        t->work += r->work;
        t->overhead += r->overhead;
        t->wait += r->wait;
        for (int k = 0; k < LB_OBJ_KINDS; k++)
            t->idle_kind[k] += r->idle[k];
    }
    for (int k = 0; k < LB_OBJ_KINDS; k++)
        t->idleness += t->idle_kind[k];
    t->effort = t->work + t->idleness;
    t->structural_join = t->idle_kind[LB_OBJ_JOIN];
    for (int32_t i = 0; i < p->nstructural; i++) {
        const struct lb_structural *s = &p->structural[i];

        if (s->open)
            t->structural_open += s->end_s - s->start_s;
        else if (s->helper)
            t->structural_helper += s->blame_s;
        else
            t->structural_parked += s->blame_s;
    }
    for (int32_t i = 0; i < p->nobjs; i++) {
        t->sync_wait += p->objs[i].wait_s;
        t->sync_blame += p->objs[i].blame_s;
        t->sync_handoff += p->objs[i].handoff_s;
        t->sync_unattributed += p->objs[i].unattributed_s;
    }
    for (int32_t i = 0; i < p->nthreads; i++) {
        if (p->threads[i].unseen_s > 0)
            t->unseen += p->threads[i].unseen_s;
        t->lifetime += p->threads[i].end_s - p->threads[i].start_s;
    }
    t->unseen_notable = lb_unseen_notable(t->unseen, t->lifetime, t->wait);
}

void lb_profile_totals(struct lb_profile *p)
{
    compute_totals(p);
}

void lb_profile_index(struct lb_profile *p);

void lb_profile_index(struct lb_profile *p)
{
    sort_mrows(p);
    build_children(p);
    build_preorder(p);
    compute_totals(p);
}

void lb_node_exclusive(const struct lb_profile *p, enum lb_metric m, double *out)
{
    for (int32_t i = 0; i < p->nnodes; i++) {
        double s = 0;

        for (int32_t r = p->mrow_start[i]; r < p->mrow_start[i + 1]; r++)
            s += lb_mrow_value(&p->mrows[r], m);
        out[i] = s;
    }
}

void lb_node_inclusive(const struct lb_profile *p, const double *excl, double *incl)
{
    memcpy(incl, excl, (size_t)p->nnodes * sizeof *incl);
    for (int32_t i = p->npreorder - 1; i > 0; i--) {
        int32_t v = p->preorder[i];

        incl[p->nodes[v].parent] += incl[v];
    }
}

double lb_metric_total(const struct lb_profile *p, enum lb_metric m)
{
    switch (m) {
    case LB_M_IDLENESS:
        return p->totals.idleness;
    case LB_M_WORK:
        return p->totals.work;
    case LB_M_WAIT:
        return p->totals.wait;
    case LB_M_OVERHEAD:
        return p->totals.overhead;
    default:
        return 0;
    }
}

void lb_profile_free(struct lb_profile *p)
{
    if (!p)
        return;
    free(p->path);
    free(p->run.command);
    free(p->run.event);
    free(p->run.event_requested);
    free(p->run.period_unit);
    free(p->run.exit_reason);
    free(p->run.executable);
    for (int32_t i = 0; i < p->nprocs; i++) {
        struct lb_run *r = &p->procs[i];

        free(r->command);
        free(r->event);
        free(r->event_requested);
        free(r->period_unit);
        free(r->exit_reason);
        free(r->executable);
    }
    free(p->procs);
    free(p->frame_runtime);
    free(p->release_entry);
    lb_map_free(&p->thread_index);
    for (int32_t i = 0; i < p->nmodules; i++) {
        free(p->modules[i].path);
        free(p->modules[i].build_id);
    }
    free(p->modules);
    free(p->names_note);
    for (int32_t i = 0; i < p->nframes; i++) {
        free(p->frames[i].function);
        free(p->frames[i].file);
        free(p->frames[i].label);
        free(p->frames[i].desc);
        free(p->frames[i].proc_label);
    }
    free(p->frames);
    free(p->nodes);
    free(p->mrows);
    free(p->threads);
    free(p->sites);
    free(p->objs);
    free(p->oblame);
    free(p->structural);
    free(p->mrow_start);
    free(p->child_start);
    free(p->child_idx);
    free(p->preorder);
    free(p);
}
