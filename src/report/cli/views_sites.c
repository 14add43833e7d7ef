/*
 * views_sites.c - `report --by-release-site`: the release-site rows
 * (site_rows.c: blame grouped by the release site's own frame and object
 * kind, or another metric by frame), with the caller chain of the
 * heaviest calling context of each site.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/site_rows.h"
#include "report/cli/views.h"

#define TABLE_ROWS 50 /* sites shown in table format */

enum {
    C_VALUE,
    C_SHARE,
    C_COUNT,
    C_BLAMED,
    C_OBJECT,
    C_LABEL,
    C_FUNCTION,
    C_FILE,
    C_LINE,
    C_BLAME,
    C_MODULE,
    C_CALLERS,
    C_STRUCTURAL,
    C_NCOLS
};

static struct lb_col site_cols[C_NCOLS] = {
    [C_VALUE] = { "value_s", "Blame s", LB_C_SEC, 0 },
    [C_SHARE] = { "share", "Share", LB_C_FRAC, 0 },
    [C_COUNT] = { "count", "Count", LB_C_INT, 0 },
    [C_BLAMED] = { "blamed_count", "Blamed", LB_C_INT, 0 },
    [C_OBJECT] = { "object", "Object", LB_C_STR, 0 },
    [C_LABEL] = { "site", "Release site (callers below)", LB_C_STR,
                  LB_COL_LABEL | LB_COL_TABLEONLY },
    [C_FUNCTION] = { "function", "Function", LB_C_STR, LB_COL_NOTABLE },
    [C_FILE] = { "file", "File", LB_C_STR, LB_COL_NOTABLE },
    [C_LINE] = { "line", "Line", LB_C_INT, LB_COL_NOTABLE },
    [C_BLAME] = { "blame_s", "Blame s", LB_C_SEC, LB_COL_NOTABLE },
    [C_MODULE] = { "module", "Module", LB_C_STR, LB_COL_NOTABLE },
    [C_CALLERS] = { "callers", "Callers", LB_C_LIST, LB_COL_NOTABLE },
    [C_STRUCTURAL] = { "structural", "Structural", LB_C_BOOL, LB_COL_NOTABLE },
};

int32_t *lb_frame_key_ids(struct lb_profile *p, struct lb_strtab *tab)
{
    int32_t *ids = lb_xmalloc(((size_t)p->nframes + 1) * sizeof *ids);
    struct lb_buf b = { 0 };

    for (int32_t f = 0; f < p->nframes; f++) {
        lb_buf_reset(&b);
        lb_frame_key(p, f, &b);
        ids[f] = lb_strtab_intern(tab, lb_buf_str(&b));
    }
    lb_buf_free(&b);
    return ids;
}

static void add_callers(struct lb_profile *p, struct lb_table *t, int row, int32_t node, int depth,
                        bool table, struct lb_buf *b)
{
    int32_t v = node >= 0 ? p->nodes[node].parent : -1;

    for (int d = 0; d < depth && v >= 0 && v != p->root; d++, v = p->nodes[v].parent) {
        if (!table) {
            lb_table_list_ref(t, row, C_CALLERS, lb_frame_desc(p, p->nodes[v].frame));
            continue;
        }
        lb_buf_reset(b);
        lb_buf_puts(b, "<- ");
        lb_frame_describe(p, p->nodes[v].frame, b);
        lb_table_detail(t, row, lb_buf_str(b));
    }
    /* an unset list cell prints as [] in JSON and "" in CSV */
}

static const char *value_title(enum lb_metric m)
{
    switch (m) {
    case LB_M_WORK:
        return "Work s";
    case LB_M_WAIT:
        return "Wait s";
    case LB_M_OVERHEAD:
        return "Overhd s";
    default:
        return "Blame s";
    }
}

static void add_row(struct lb_profile *p, struct lb_table *t, const struct lb_site_row *r,
                    double total, int depth, bool table, struct lb_buf *b)
{
    int row = lb_table_add_row(t);
    const struct lb_frame *f = r->frame >= 0 ? &p->frames[r->frame] : NULL;

    lb_table_num(t, row, C_VALUE, r->value);
    lb_table_num(t, row, C_BLAME, r->blame);
    lb_table_num(t, row, C_SHARE, lb_share(r->value, total));
    if (r->count >= 0) /* (unknown: "-", null) */
        lb_table_int(t, row, C_COUNT, r->count);
    lb_table_int(t, row, C_BLAMED, r->blamed);
    lb_table_str(t, row, C_OBJECT, r->kind < LB_OBJ_KINDS ? lb_obj_kind_names[r->kind] : "-");
    lb_table_str_ref(t, row, C_FUNCTION, lb_frame_label(p, r->frame));
    lb_table_str_ref(t, row, C_FILE, f ? f->file : NULL);
    lb_table_int(t, row, C_LINE, f ? f->line : 0);
    lb_table_str_ref(t, row, C_MODULE, lb_frame_module(p, r->frame));
    lb_table_str_ref(t, row, C_LABEL, lb_frame_desc(p, r->frame));
    lb_table_bool(t, row, C_STRUCTURAL, r->structural);
    add_callers(p, t, row, r->heaviest, depth, table, b);
}

static struct lb_table *new_table(void)
{
    struct lb_table *t = lb_table_new(site_cols, C_NCOLS);
    static const int order[] = { C_FUNCTION, C_FILE,  C_LINE,   C_OBJECT, C_BLAME,   C_VALUE,
                                 C_SHARE,    C_COUNT, C_BLAMED, C_MODULE, C_CALLERS, C_STRUCTURAL };

    lb_table_order(t, order, (int)(sizeof order / sizeof *order));
    return t;
}

/* A table shows the top TABLE_ROWS rows of [first, last) and sums up the
 * rest. */
static void print_part(struct lb_profile *p, const struct lb_site_row *rows, int32_t first,
                       int32_t last, double total, int depth, struct lb_buf *b)
{
    struct lb_table *t = new_table();
    int32_t shown = last - first > TABLE_ROWS ? first + TABLE_ROWS : last;
    double rest = 0;

    for (int32_t i = first; i < shown; i++)
        add_row(p, t, &rows[i], total, depth, true, b);
    for (int32_t i = shown; i < last; i++)
        rest += rows[i].value;
    lb_table_print(t, LB_FMT_TABLE, stdout);
    if (shown < last)
        printf("... %d more sites with %.3f s (%.1f%%); --format csv lists all\n",
               (int)(last - shown), rest, 100 * lb_share(rest, total));
    lb_table_free(t);
}

int lb_view_release_sites(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct lb_site_rows sr;
    int depth = o->n >= 0 ? o->n : 5;
    double total = lb_metric_total(p, o->metric);
    struct lb_buf b = { 0 };

    lb_site_rows(p, o->metric, &sr);
    const struct lb_site_row *rows = sr.rows;
    int32_t n = sr.n, acts = sr.acts; /* rows [0, acts) are not structural */

    site_cols[C_VALUE].title = value_title(o->metric);
    site_cols[C_LABEL].title = o->metric == LB_M_IDLENESS ? "Release site (callers below)"
                                                          : "Innermost frame (callers below)";
    if (o->format == LB_FMT_TABLE) {
        lb_print_header(p, o, stdout);
        /* Not contention-free when the threads waited out of sight. */
        const char *unseen = p->totals.unseen_notable ? "; see unseen: above" : "";
        if (!n)
            printf("(no %s recorded%s)\n",
                   o->metric == LB_M_IDLENESS ? "blame" : lb_metric_names[o->metric], unseen);
        else if (acts)
            print_part(p, rows, 0, acts, total, depth, &b);
        else
            printf("(no blame outside structural waits%s)\n", unseen);
        if (acts < n) {
            printf("\nstructural waits (joins, threads parked until shutdown, idle helpers:"
                   " the program's shape, not contention):\n");
            print_part(p, rows, acts, n, total, depth, &b);
        }
        const struct lb_totals *tt = &p->totals;

        printf("\ntotal:    blame %.3f s, hand-off latency %.3f s, unattributed %.3f s,"
               " total wait %.3f s\n",
               tt->sync_blame, tt->sync_handoff, tt->sync_unattributed, tt->sync_wait);
        lb_buf_reset(&b);
        if (o->metric == LB_M_IDLENESS && lb_waiters_hint(p, &b))
            printf("waiters:  %s\n", lb_buf_str(&b));
    } else {
        /* CSV and JSON list every site, structural ones last. */
        struct lb_table *t = new_table();

        for (int32_t i = 0; i < n; i++)
            add_row(p, t, &rows[i], total, depth, false, &b);
        lb_table_print(t, o->format, stdout);
        lb_table_free(t);
    }
    lb_buf_free(&b);
    lb_site_rows_free(&sr);
    return LB_EXIT_OK;
}
