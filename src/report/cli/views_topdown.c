/*
 * views_topdown.c - `report --top-down`: the calling context tree with
 * inclusive and exclusive values of the selected metric, children ordered
 * by inclusive value so the hot path comes first; and `--format folded`:
 * one "root;...;leaf microseconds" line per distinct stack (flamegraph.pl).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

enum {
    C_INCL,
    C_INCL_SHARE,
    C_EXCL,
    C_EXCL_SHARE,
    C_EFFORT_SHARE,
    C_LABEL,
    C_NODE,
    C_PARENT,
    C_DEPTH,
    C_FUNCTION,
    C_FILE,
    C_LINE,
    C_MODULE,
    C_NCOLS
};

static const struct lb_col td_cols[C_NCOLS] = {
    [C_INCL] = { "inclusive_s", "Incl s", LB_C_SEC, 0 },
    [C_INCL_SHARE] = { "inclusive_share", "Incl%", LB_C_FRAC, 0 },
    [C_EXCL] = { "exclusive_s", "Excl s", LB_C_SEC, 0 },
    [C_EXCL_SHARE] = { "exclusive_share", "Excl%", LB_C_FRAC, 0 },
    [C_EFFORT_SHARE] = { "effort_share", "%Effort", LB_C_FRAC, 0 },
    [C_LABEL] = { "context", "Calling context", LB_C_STR, LB_COL_LABEL | LB_COL_TABLEONLY },
    [C_NODE] = { "node_id", "", LB_C_INT, LB_COL_NOTABLE },
    [C_PARENT] = { "parent_id", "", LB_C_INT, LB_COL_NOTABLE },
    [C_DEPTH] = { "depth", "", LB_C_INT, LB_COL_NOTABLE },
    [C_FUNCTION] = { "function", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FILE] = { "file", "", LB_C_STR, LB_COL_NOTABLE },
    [C_LINE] = { "line", "", LB_C_INT, LB_COL_NOTABLE },
    [C_MODULE] = { "module", "", LB_C_STR, LB_COL_NOTABLE },
};

static const double *sort_incl;

static int cmp_incl_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    if (sort_incl[x] != sort_incl[y])
        return sort_incl[x] < sort_incl[y] ? 1 : -1;
    return x - y;
}

int lb_view_top_down(struct lb_profile *p, const struct lb_report_opts *o)
{
    size_t nn = (size_t)p->nnodes + 1;
    double *excl = lb_xmalloc(nn * sizeof *excl), *incl = lb_xmalloc(nn * sizeof *incl);
    double total = lb_metric_total(p, o->metric);
    /* Hide contexts under 0.1% of the total in the table; depth 10 by
	 * default there, unlimited in CSV/JSON. */
    double floor_v = o->format == LB_FMT_TABLE ? fabs(total) * 0.001 : 0;
    int max_depth = o->n >= 0 ? o->n : (o->format == LB_FMT_TABLE ? 10 : INT32_MAX);
    int32_t *stack = lb_xmalloc(nn * sizeof *stack), sp = 0;
    int32_t *kids = lb_xmalloc(nn * sizeof *kids);
    struct lb_table *t = lb_table_new(td_cols, C_NCOLS);
    struct lb_buf b = { 0 };
    static const int order[] = { C_NODE, C_PARENT, C_DEPTH, C_FUNCTION, C_FILE, C_LINE, C_MODULE };

    lb_table_order(t, order, 7);

    lb_node_exclusive(p, o->metric, excl);
    lb_node_inclusive(p, excl, incl);
    sort_incl = incl;
    stack[sp++] = p->root;
    while (sp > 0) {
        int32_t v = stack[--sp];
        const struct lb_node *nd = &p->nodes[v];
        int row = lb_table_add_row(t);
        int32_t f = nd->frame;

        lb_table_num(t, row, C_INCL, incl[v]);
        lb_table_num(t, row, C_INCL_SHARE, lb_share(incl[v], total));
        lb_table_num(t, row, C_EXCL, excl[v]);
        lb_table_num(t, row, C_EXCL_SHARE, lb_share(excl[v], total));
        lb_table_num(t, row, C_EFFORT_SHARE, lb_share(incl[v], p->totals.effort));
        lb_table_indent(t, row, nd->depth);
        lb_buf_reset(&b);
        lb_frame_describe(p, f, &b);
        lb_table_str(t, row, C_LABEL, lb_buf_str(&b));
        lb_table_int(t, row, C_NODE, nd->id);
        if (nd->parent >= 0)
            lb_table_int(t, row, C_PARENT, p->nodes[nd->parent].id);
        lb_table_int(t, row, C_DEPTH, nd->depth);
        lb_table_str(t, row, C_FUNCTION, lb_frame_label(p, f));
        lb_table_str(t, row, C_FILE, f >= 0 ? p->frames[f].file : NULL);
        lb_table_int(t, row, C_LINE, f >= 0 ? p->frames[f].line : 0);
        lb_table_str(t, row, C_MODULE, lb_frame_module(p, f));
        if (nd->depth >= max_depth)
            continue;
        int32_t nk = 0;

        for (int32_t c = p->child_start[v]; c < p->child_start[v + 1]; c++) {
            int32_t w = p->child_idx[c];

            if (incl[w] != 0 && fabs(incl[w]) >= floor_v)
                kids[nk++] = w;
        }
        lb_sort(kids, (size_t)nk, sizeof *kids, cmp_incl_desc);
        for (int32_t k = nk - 1; k >= 0; k--)
            stack[sp++] = kids[k];
    }
    if (o->format == LB_FMT_TABLE)
        lb_print_header(p, o, stdout);
    lb_table_print(t, o->format, stdout);
    lb_table_free(t);
    lb_buf_free(&b);
    free(kids);
    free(stack);
    free(excl);
    free(incl);
    return LB_EXIT_OK;
}

/* flamegraph.pl splits a line at its last blank and stacks at ';'. */
static void put_folded_label(struct lb_buf *b, const char *s)
{
    for (; *s; s++)
        lb_buf_putc(b, *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s);
}

/* Folded stacks merge contexts whose label paths are equal (frames that
 * differ only by line). Each node gets a "label path" id interned from its
 * parent's id and its own label id, so merging costs one hash lookup per
 * node; strings are built only for the stacks that are printed. */
int lb_view_folded(struct lb_profile *p, const struct lb_report_opts *o)
{
    size_t nn = (size_t)p->nnodes + 1;
    double *excl = lb_xmalloc(nn * sizeof *excl);
    int32_t *node_lp = lb_xmalloc(nn * sizeof *node_lp);
    int32_t *lp_parent = lb_xmalloc(nn * sizeof *lp_parent);
    int32_t *lp_label = lb_xmalloc(nn * sizeof *lp_label);
    int64_t *lp_us = lb_xcalloc(nn, sizeof *lp_us);
    int32_t nlp = 0;
    struct lb_strtab labels = { 0 };
    int32_t *frame_label = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *frame_label);
    struct lb_map map = { 0 };
    struct lb_buf b = { 0 };

    for (int32_t f = 0; f < p->nframes; f++) {
        lb_buf_reset(&b);
        put_folded_label(&b, lb_frame_label(p, f));
        frame_label[f] = lb_strtab_intern(&labels, lb_buf_str(&b));
    }
    lb_node_exclusive(p, o->metric, excl);
    for (int32_t i = 0; i < p->npreorder; i++) {
        int32_t v = p->preorder[i];

        if (v == p->root) {
            node_lp[v] = -1;
            continue;
        }
        int32_t par = node_lp[p->nodes[v].parent], f = p->nodes[v].frame;
        int32_t lab = f >= 0 ? frame_label[f] : lb_strtab_intern(&labels, "[unknown]");
        bool is_new;
        int32_t *slot =
            lb_map_slot(&map, (uint64_t)(uint32_t)(par + 1) << 32 | (uint32_t)lab, &is_new);

        if (is_new) {
            *slot = nlp;
            lp_parent[nlp] = par;
            lp_label[nlp] = lab;
            nlp++;
        }
        node_lp[v] = *slot;
        int64_t us = llround(excl[v] * 1e6);

        if (us > 0)
            lp_us[*slot] += us;
    }
    int32_t *chain = lb_xmalloc(nn * sizeof *chain);

    for (int32_t x = 0; x < nlp; x++) {
        if (lp_us[x] <= 0)
            continue;
        int32_t n = 0;

        for (int32_t y = x; y >= 0; y = lp_parent[y])
            chain[n++] = lp_label[y];
        lb_buf_reset(&b);
        for (int32_t k = n - 1; k >= 0; k--) {
            lb_buf_puts(&b, labels.strs[chain[k]]);
            if (k)
                lb_buf_putc(&b, ';');
        }
        printf("%s %" PRId64 "\n", lb_buf_str(&b), lp_us[x]);
    }
    free(chain);
    lb_map_free(&map);
    lb_strtab_free(&labels);
    lb_buf_free(&b);
    free(frame_label);
    free(lp_us);
    free(lp_label);
    free(lp_parent);
    free(node_lp);
    free(excl);
    return LB_EXIT_OK;
}
