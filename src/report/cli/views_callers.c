/*
 * views_callers.c - procedure views over the CCT (thesis ch. 7.2.4):
 *   --bottom-up  callers view: each procedure's cost, then the callers it
 *                was attributed to, caller by caller;
 *   --flat       one row per procedure (function + module) with its file.
 *
 * A procedure's inclusive cost sums the inclusive cost of its outermost
 * activations on each path, so recursion is counted once per path; its
 * exclusive cost sums every activation. Below a procedure, a caller chain
 * P <- Q <- R carries the inclusive (and own exclusive) cost of those
 * outermost activations of P whose callers are Q then R.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

struct rnode {      /* a node of the callers (reverse) tree */
    int32_t parent; /* rnode index, -1 for a top-level procedure */
    int32_t proc;   /* procedure id */
    int32_t frame;  /* a representative frame, for file/module */
    int32_t depth;  /* 0 = the procedure itself */
    double incl, excl;
    int32_t first_child, next; /* built after accumulation */
};

struct rtree {
    struct rnode *r;
    int32_t n;
    size_t cap;
    struct lb_map map; /* (parent + 1) << 32 | proc -> rnode */
};

static int32_t rnode_get(struct rtree *t, int32_t parent, int32_t proc, int32_t frame)
{
    bool is_new;
    int32_t *slot =
        lb_map_slot(&t->map, (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)proc, &is_new);

    if (!is_new)
        return *slot;
    lb_grow((void **)&t->r, &t->cap, (size_t)t->n + 1, sizeof *t->r);
    *slot = t->n;
    t->r[t->n] = (struct rnode){ .parent = parent,
                                 .proc = proc,
                                 .frame = frame,
                                 .depth = parent < 0 ? 0 : t->r[parent].depth + 1,
                                 .first_child = -1,
                                 .next = -1 };
    return t->n++;
}

int32_t *lb_frame_proc_ids(struct lb_profile *p, struct lb_strtab *tab)
{
    int32_t *ids = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *ids);
    struct lb_buf b = { 0 };

    for (int32_t f = 0; f < p->nframes; f++) {
        lb_buf_reset(&b);
        lb_frame_proc_key(p, f, &b);
        ids[f] = lb_strtab_intern(tab, lb_buf_str(&b));
    }
    lb_buf_free(&b);
    return ids;
}

/* Build the callers tree down to `levels` callers below each procedure.
 * Pass 0 walks the preorder keeping the current path and, per procedure,
 * how often it is on the path, to find each procedure's outermost
 * activations (their inclusive values sum to the procedure's). Then the
 * caller chains grow one level per pass over those activations; a chain
 * worth less than floor_v stops growing (its extensions are worth no more),
 * which keeps a million distinct contexts from making millions of rows. */
static void build_rtree(struct lb_profile *p, enum lb_metric m, int levels, double floor_v,
                        struct rtree *t, int32_t *nprocs_out)
{
    struct lb_strtab tab = { 0 };
    int32_t *proc_of = lb_frame_proc_ids(p, &tab);
    int32_t nprocs = tab.n;
    size_t nn = (size_t)p->nnodes + 1;
    double *excl = lb_xmalloc(nn * sizeof *excl), *incl = lb_xmalloc(nn * sizeof *incl);
    int32_t *onpath = lb_xcalloc((size_t)nprocs + 1, sizeof *onpath);
    int32_t *path = lb_xmalloc(nn * sizeof *path), len = 0;
    int32_t *act = lb_xmalloc(nn * sizeof *act), nact = 0; /* outermost activations */
    int32_t *cur = lb_xmalloc(nn * sizeof *cur);           /* act -> rnode of its chain so far */
    int32_t *anc = lb_xmalloc(nn * sizeof *anc);           /* act -> next caller node */

    lb_node_exclusive(p, m, excl);
    lb_node_inclusive(p, excl, incl);
    /* top-level rnodes get ids 0..nprocs-1 in procedure order */
    for (int32_t pr = 0; pr < nprocs; pr++)
        rnode_get(t, -1, pr, -1);
    for (int32_t i = 0; i < p->npreorder; i++) {
        int32_t v = p->preorder[i], d = p->nodes[v].depth;

        while (len > d) { /* leave the nodes we are no longer under */
            int32_t u = path[--len], fu = p->nodes[u].frame;

            if (fu >= 0)
                onpath[proc_of[fu]]--;
        }
        path[len++] = v;
        int32_t f = p->nodes[v].frame;

        if (f < 0)
            continue;
        int32_t pr = proc_of[f];

        if (t->r[pr].frame < 0)
            t->r[pr].frame = f;
        t->r[pr].excl += excl[v];
        if (onpath[pr]++ == 0) {
            t->r[pr].incl += incl[v];
            if (incl[v] != 0) {
                act[nact] = v;
                cur[nact] = pr;
                anc[nact++] = p->nodes[v].parent;
            }
        }
    }
    for (int lvl = 0; lvl < levels; lvl++) {
        int32_t first_new = t->n, live = 0;

        for (int32_t a = 0; a < nact; a++) {
            int32_t u = anc[a];

            if (cur[a] < 0 || u < 0 || p->nodes[u].frame < 0 || fabs(t->r[cur[a]].incl) < floor_v) {
                cur[a] = -1;
                continue;
            }
            int32_t fa = p->nodes[u].frame, v = act[a];

            /* rnode_get may move t->r: keep indices, not pointers */
            cur[a] = rnode_get(t, cur[a], proc_of[fa], fa);
            t->r[cur[a]].incl += incl[v];
            t->r[cur[a]].excl += excl[v];
            anc[a] = p->nodes[u].parent;
            live++;
        }
        if (!live || t->n == first_new)
            break;
    }
    *nprocs_out = nprocs;
    free(anc);
    free(cur);
    free(act);
    free(path);
    free(onpath);
    free(excl);
    free(incl);
    free(proc_of);
    lb_strtab_free(&tab);
}

static const struct rnode *sort_r;

static int cmp_rnode(const void *a, const void *b)
{
    const struct rnode *x = &sort_r[*(const int32_t *)a], *y = &sort_r[*(const int32_t *)b];

    if (x->incl != y->incl)
        return x->incl < y->incl ? 1 : -1;
    if (x->excl != y->excl)
        return x->excl < y->excl ? 1 : -1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

static int cmp_rnode_excl(const void *a, const void *b)
{
    const struct rnode *x = &sort_r[*(const int32_t *)a], *y = &sort_r[*(const int32_t *)b];

    if (x->excl != y->excl)
        return x->excl < y->excl ? 1 : -1;
    return cmp_rnode(a, b);
}

enum {
    C_INCL,
    C_INCL_SHARE,
    C_EXCL,
    C_EXCL_SHARE,
    C_LABEL,
    C_DEPTH,
    C_PROC,
    C_FUNCTION,
    C_FILE,
    C_MODULE,
    C_NCOLS
};

static const struct lb_col proc_cols[C_NCOLS] = {
    [C_INCL] = { "inclusive_s", "Incl s", LB_C_SEC, 0 },
    [C_INCL_SHARE] = { "inclusive_share", "Incl%", LB_C_FRAC, 0 },
    [C_EXCL] = { "exclusive_s", "Excl s", LB_C_SEC, 0 },
    [C_EXCL_SHARE] = { "exclusive_share", "Excl%", LB_C_FRAC, 0 },
    [C_LABEL] = { "label", "Procedure (callers below)", LB_C_STR, LB_COL_LABEL | LB_COL_TABLEONLY },
    [C_DEPTH] = { "depth", "", LB_C_INT, LB_COL_NOTABLE },
    [C_PROC] = { "procedure", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FUNCTION] = { "function", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FILE] = { "file", "", LB_C_STR, LB_COL_NOTABLE },
    [C_MODULE] = { "module", "", LB_C_STR, LB_COL_NOTABLE },
};

static const int proc_order[] = { C_DEPTH, C_PROC, C_FUNCTION, C_FILE, C_MODULE };

static void add_proc_row(struct lb_profile *p, struct lb_table *t, const struct rnode *r,
                         const char *procedure, double total, bool flat)
{
    int row = lb_table_add_row(t);
    const char *file = r->frame >= 0 ? p->frames[r->frame].file : NULL;
    struct lb_buf b = { 0 };

    lb_table_num(t, row, C_INCL, r->incl);
    lb_table_num(t, row, C_INCL_SHARE, lb_share(r->incl, total));
    lb_table_num(t, row, C_EXCL, r->excl);
    lb_table_num(t, row, C_EXCL_SHARE, lb_share(r->excl, total));
    lb_table_indent(t, row, r->depth);
    lb_buf_printf(&b, "%s%s", r->depth ? "<- " : "", lb_frame_proc_label(p, r->frame));
    if (file) {
        lb_buf_puts(&b, " (");
        lb_put_short_path(&b, file);
        lb_buf_putc(&b, ')');
    }
    if (flat && *lb_frame_module(p, r->frame) && (r->frame < 0 || p->frames[r->frame].function)) {
        lb_buf_putc(&b, ' ');
        lb_put_module_bracketed(&b, lb_frame_module(p, r->frame));
    }
    lb_table_str(t, row, C_LABEL, lb_buf_str(&b));
    lb_table_int(t, row, C_DEPTH, r->depth);
    lb_table_str(t, row, C_PROC, procedure);
    lb_table_str(t, row, C_FUNCTION, lb_frame_proc_label(p, r->frame));
    lb_table_str(t, row, C_FILE, file);
    lb_table_str(t, row, C_MODULE, lb_frame_module(p, r->frame));
    lb_buf_free(&b);
}

static void print_and_free(struct lb_profile *p, const struct lb_report_opts *o, struct lb_table *t,
                           struct rtree *rt)
{
    if (o->format == LB_FMT_TABLE)
        lb_print_header(p, o, stdout);
    lb_table_print(t, o->format, stdout);
    lb_table_free(t);
    free(rt->r);
    lb_map_free(&rt->map);
}

int lb_view_bottom_up(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct rtree rt = { 0 };
    int32_t nprocs;
    int levels = o->n >= 0 ? o->n : 5;
    double total = lb_metric_total(p, o->metric);
    /* Caller rows under 0.1% of the total are left out in every format;
	 * a table also leaves out procedures under 0.1%. */
    double floor_v = fabs(total) * 0.001;
    double top_floor = o->format == LB_FMT_TABLE ? floor_v : 0;

    build_rtree(p, o->metric, levels, floor_v, &rt, &nprocs);
    /* child lists, then a depth-first walk with children by inclusive */
    int32_t *order = lb_xmalloc(((size_t)rt.n + 1) * sizeof *order), n = 0;

    sort_r = rt.r;
    for (int32_t i = rt.n - 1; i >= nprocs; i--) {
        rt.r[i].next = rt.r[rt.r[i].parent].first_child;
        rt.r[rt.r[i].parent].first_child = i;
    }
    for (int32_t i = 0; i < nprocs; i++)
        if (rt.r[i].incl != 0 || rt.r[i].excl != 0)
            order[n++] = i;
    lb_sort(order, (size_t)n, sizeof *order, cmp_rnode);
    struct lb_table *t = lb_table_new(proc_cols, C_NCOLS);

    lb_table_order(t, proc_order, 5);
    int32_t *stack = lb_xmalloc(((size_t)rt.n + 1) * sizeof *stack),
            *kids = lb_xmalloc(((size_t)rt.n + 1) * sizeof *kids);

    for (int32_t i = 0; i < n; i++) {
        const struct rnode *top = &rt.r[order[i]];

        if (fabs(top->incl) < top_floor && fabs(top->excl) < top_floor)
            continue;
        const char *procedure = lb_frame_proc_label(p, top->frame);
        int32_t sp = 0;

        stack[sp++] = order[i];
        while (sp > 0) {
            int32_t v = stack[--sp], nk = 0;

            add_proc_row(p, t, &rt.r[v], procedure, total, false);
            for (int32_t c = rt.r[v].first_child; c >= 0; c = rt.r[c].next)
                if (rt.r[c].incl != 0 && fabs(rt.r[c].incl) >= floor_v)
                    kids[nk++] = c;
            lb_sort(kids, (size_t)nk, sizeof *kids, cmp_rnode);
            for (int32_t k = nk - 1; k >= 0; k--)
                stack[sp++] = kids[k];
        }
    }
    free(stack);
    free(kids);
    free(order);
    print_and_free(p, o, t, &rt);
    return LB_EXIT_OK;
}

int lb_view_flat(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct rtree rt = { 0 };
    int32_t nprocs, n = 0;
    double total = lb_metric_total(p, o->metric);

    build_rtree(p, o->metric, 0, 0, &rt, &nprocs);
    int32_t *order = lb_xmalloc(((size_t)nprocs + 1) * sizeof *order);

    for (int32_t i = 0; i < nprocs; i++)
        if (rt.r[i].incl != 0 || rt.r[i].excl != 0)
            order[n++] = i;
    sort_r = rt.r;
    lb_sort(order, (size_t)n, sizeof *order, cmp_rnode_excl);
    if (o->n >= 0 && n > o->n)
        n = o->n;
    /* one row per procedure: no callers below it */
    struct lb_col cols[C_NCOLS];

    memcpy(cols, proc_cols, sizeof cols);
    cols[C_LABEL].title = "Procedure";
    struct lb_table *t = lb_table_new(cols, C_NCOLS);

    lb_table_order(t, proc_order, 5);

    for (int32_t i = 0; i < n; i++)
        add_proc_row(p, t, &rt.r[order[i]], lb_frame_proc_label(p, rt.r[order[i]].frame), total,
                     true);
    free(order);
    print_and_free(p, o, t, &rt);
    return LB_EXIT_OK;
}
