/*
 * compare_compute.c - match calling contexts across runs and compute each
 * one's change (see compare.h). Pure computation: prints nothing.
 */
#include <math.h>
#include <stdlib.h>

#include "report/cli/compare.h"

static int32_t ctx_get(struct cmp *c, int32_t parent, int32_t key, int run, int32_t frame)
{
    bool is_new;
    int32_t *slot =
        lb_map_slot(&c->map, (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)key, &is_new);

    if (!is_new)
        return *slot;
    lb_grow((void **)&c->ctx, &c->cap, (size_t)c->nctx + 1, sizeof *c->ctx);
    *slot = c->nctx;
    c->ctx[c->nctx] = (struct cmp_ctx){ .parent = parent, .run = run, .frame = frame };
    return c->nctx++;
}

/* Map every node of run r to a ctx (by path, or by innermost function) and
 * return the mapping (malloc'd, -1 for the root). */
static int32_t *map_run(struct cmp *c, int r)
{
    struct lb_profile *p = c->runs[r];
    int32_t *node_ctx = lb_xmalloc(((size_t)p->nnodes + 1) * sizeof *node_ctx);
    int32_t *fkey = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *fkey);
    struct lb_buf b = { 0 };

    for (int32_t f = 0; f < p->nframes; f++) {
        lb_buf_reset(&b);
        if (c->by_function)
            lb_frame_proc_key(p, f, &b);
        else
            lb_frame_key(p, f, &b);
        fkey[f] = lb_strtab_intern(&c->keys, lb_buf_str(&b));
    }
    for (int32_t i = 0; i < p->nnodes; i++)
        node_ctx[i] = -1;
    for (int32_t i = 0; i < p->npreorder; i++) {
        int32_t v = p->preorder[i], f = p->nodes[v].frame;

        if (v == p->root || f < 0) {
            node_ctx[v] = v == p->root ? -1 : node_ctx[p->nodes[v].parent];
            continue;
        }
        int32_t parent = c->by_function ? -1 : node_ctx[p->nodes[v].parent];

        node_ctx[v] = ctx_get(c, parent, fkey[f], r, f);
    }
    lb_buf_free(&b);
    free(fkey);
    return node_ctx;
}

static void accumulate(struct cmp *c)
{
    int32_t **maps = lb_xmalloc((size_t)c->nruns * sizeof *maps);

    for (int r = 0; r < c->nruns; r++)
        maps[r] = map_run(c, r);
    c->work = lb_xmalloc((size_t)c->nruns * sizeof *c->work);
    c->idle = lb_xmalloc((size_t)c->nruns * sizeof *c->idle);
    for (int r = 0; r < c->nruns; r++) {
        const struct lb_profile *p = c->runs[r];

        c->work[r] = lb_xcalloc((size_t)c->nctx + 1, sizeof **c->work);
        c->idle[r] = lb_xcalloc((size_t)c->nctx + 1, sizeof **c->idle);
        for (int32_t i = 0; i < p->nmrows; i++) {
            const struct lb_mrow *m = &p->mrows[i];
            int32_t x = maps[r][m->node];

            if (x < 0)
                x = c->nctx; /* metrics at the root: kept in the totals slot */
            c->work[r][x] += m->work;
            c->idle[r][x] += lb_mrow_idleness(m);
        }
        /* Structural waits (joins, threads parked until shutdown) are
		 * the program's shape and grow with its wall time: left out,
		 * as report ranks them apart (docs/DESIGN.md rule 6). */
        double *sblame = lb_xcalloc((size_t)p->nnodes * LB_OBJ_KINDS + 1, sizeof *sblame);
        lb_node_structural(p, sblame);
        for (int32_t v = 0; v < p->nnodes; v++) {
            double s = 0;
            for (int k = 0; k < LB_OBJ_KINDS; k++)
                s += sblame[(size_t)v * LB_OBJ_KINDS + k];
            if (s != 0)
                c->idle[r][maps[r][v] < 0 ? c->nctx : maps[r][v]] -= s;
        }
        free(sblame);
        free(maps[r]);
    }
    free(maps);
}

double lb_cmp_effort(const struct cmp *c, int r, int32_t x)
{
    return c->work[r][x] + c->idle[r][x];
}

static const double *sort_key;

static int by_abs_change(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    double kx = fabs(sort_key[x]), ky = fabs(sort_key[y]);

    if (kx != ky)
        return kx < ky ? 1 : -1;
    return x - y;
}

void lb_cmp_compute(struct cmp *c)
{
    int last = c->nruns - 1;

    accumulate(c);
    c->excess = lb_xmalloc(((size_t)c->nctx + 1) * sizeof *c->excess);
    c->change = lb_xmalloc(((size_t)c->nctx + 1) * sizeof *c->change);
    c->order = lb_xmalloc(((size_t)c->nctx + 1) * sizeof *c->order);
    c->norder = 0;
    for (int32_t x = 0; x < c->nctx; x++) {
        bool any = false;

        c->change[x] = 0;
        for (int r = 0; r < c->nruns; r++) {
            double d = lb_cmp_effort(c, r, x) - lb_cmp_effort(c, 0, x);

            any |= lb_cmp_effort(c, r, x) != 0;
            if (fabs(d) > fabs(c->change[x]))
                c->change[x] = d;
        }
        c->excess[x] = lb_cmp_effort(c, last, x) - lb_cmp_effort(c, 0, x);
        c->abs_total += fabs(c->excess[x]);
        if (c->excess[x] > 0)
            c->losses += c->excess[x];
        else
            c->gains += c->excess[x];
        if (any)
            c->order[c->norder++] = x;
    }
    sort_key = c->change;
    lb_sort(c->order, (size_t)c->norder, sizeof *c->order, by_abs_change);
}
