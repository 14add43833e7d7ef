/*
 * views_locks.c - `report --by-lock`: contended sync objects (address not
 * NULL). By default, instances are grouped as perf lock does, by kind and
 * the place lockblame first saw them (usually where they are initialised
 * or first locked): a pool of 40 identical locks is one row with its
 * instance count. --per-address gives one row per object. Each row has its
 * counts and times and the three release contexts (grouped by frame) that
 * took most of its blame. A table shows LOCK_ROWS rows unless -n says.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/sampled_limits.h"
#include "report/cli/views.h"

#define LOCK_ROWS 20 /* default table rows */

enum {
    C_KIND,
    C_INSTANCES,
    C_ADDRESS,
    C_ACQ,
    C_CONT,
    C_CONT_SHARE,
    C_WAIT,
    C_BLAME,
    C_HANDOFF,
    C_UNATTR,
    C_FIRST,
    C_ID,
    C_FIRST_FUNCTION,
    C_FIRST_FILE,
    C_FIRST_LINE,
    C_HOLDERS,
    C_ADDRESSES,
    C_OBJECTS,
    C_SAMPLED,
    C_NCOLS
};

static struct lb_col lock_cols[C_NCOLS] = {
    [C_KIND] = { "object", "Kind", LB_C_STR, 0 },
    [C_INSTANCES] = { "instances", "Locks", LB_C_INT, 0 },     /* distinct addresses */
    [C_OBJECTS] = { "objects", "", LB_C_INT, LB_COL_NOTABLE }, /* lifetimes (init..destroy) */
    [C_ADDRESS] = { "address", "Address", LB_C_STR, 0 },
    [C_ADDRESSES] = { "addresses", "", LB_C_LIST, LB_COL_NOTABLE },
    [C_ACQ] = { "acquisitions", "Acq", LB_C_INT, 0 },
    [C_CONT] = { "contended", "Contended", LB_C_INT, LB_COL_NOTABLE },
    [C_CONT_SHARE] = { "contended_share", "Cont%", LB_C_FRAC, 0 },
    [C_WAIT] = { "wait_s", "Wait s", LB_C_SEC, 0 },
    [C_BLAME] = { "blame_s", "Blame s", LB_C_SEC, 0 },
    [C_HANDOFF] = { "handoff_s", "Handoff", LB_C_SEC, 0 },
    [C_UNATTR] = { "unattributed_s", "Unattr", LB_C_SEC, 0 },
    [C_FIRST] = { "first_seen", "First contended at (holders below)", LB_C_STR, LB_COL_LABEL },
    [C_ID] = { "id", "Id", LB_C_INT, LB_COL_NOTABLE },
    [C_FIRST_FUNCTION] = { "first_function", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FIRST_FILE] = { "first_file", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FIRST_LINE] = { "first_line", "", LB_C_INT, LB_COL_NOTABLE },
    [C_HOLDERS] = { "holders", "", LB_C_LIST, LB_COL_NOTABLE },
    [C_SAMPLED] = { "sampled_waits", "", LB_C_INT, LB_COL_NOTABLE }, /* of contended */
};

struct holder {
    int32_t group; /* row group */
    int32_t frame; /* representative frame of the release site */
    double blame;
    int64_t count;
};

struct group {         /* one row: a kind + first-seen site, or one object */
    int32_t obj;       /* the heaviest object (by wait): address, ids, first seen */
    int32_t instances; /* objects (an address re-initialised counts again) */
    int64_t acquisitions, contended, sampled_waits;
    double wait_s, blame_s, handoff_s, unattributed_s;
};

static int cmp_holders(const void *a, const void *b)
{
    const struct holder *x = a, *y = b;

    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->blame != y->blame)
        return x->blame < y->blame ? 1 : -1;
    return x->frame - y->frame;
}

static const struct lb_profile *sort_profile;
static const struct group *sort_groups;

static int cmp_objs(const void *a, const void *b)
{
    const struct lb_syncobj *x = &sort_profile->objs[*(const int32_t *)a];
    const struct lb_syncobj *y = &sort_profile->objs[*(const int32_t *)b];

    if (x->wait_s != y->wait_s)
        return x->wait_s < y->wait_s ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_groups(const void *a, const void *b)
{
    const struct group *x = &sort_groups[*(const int32_t *)a],
                       *y = &sort_groups[*(const int32_t *)b];

    if (x->wait_s != y->wait_s)
        return x->wait_s < y->wait_s ? 1 : -1;
    return cmp_objs(&x->obj, &y->obj);
}

/* The contended objects in groups: per address, or by (kind, first-seen
 * frame key). Fills group_of[obj] (-1: not contended) and returns the
 * groups; objects are visited heaviest first, so a group's obj is its
 * heaviest instance. */
static struct group *make_groups(struct lb_profile *p, const int32_t *keys, bool per_address,
                                 int32_t *group_of, int32_t *ngroups)
{
    int32_t *order = lb_xmalloc(((size_t)p->nobjs + 1) * sizeof *order), n = 0;
    struct group *g = lb_xcalloc((size_t)p->nobjs + 1, sizeof *g);
    struct lb_map map = { 0 };

    for (int32_t i = 0; i < p->nobjs; i++) {
        group_of[i] = -1;
        if (p->objs[i].has_address)
            order[n++] = i;
    }
    sort_profile = p;
    lb_sort(order, (size_t)n, sizeof *order, cmp_objs);
    *ngroups = 0;
    for (int32_t i = 0; i < n; i++) {
        const struct lb_syncobj *ob = &p->objs[order[i]];
        int32_t f = ob->first_node >= 0 ? p->nodes[lb_site_node(p, ob->first_node)].frame : -1;
        uint64_t key =
            (uint64_t)(uint32_t)(ob->kind + 1) << 32 | (uint32_t)(f >= 0 ? keys[f] : INT32_MAX);
        bool is_new = true;
        int32_t *slot = per_address ? NULL : lb_map_slot(&map, key, &is_new), k;

        if (is_new) {
            k = (*ngroups)++;
            g[k].obj = order[i];
            if (slot)
                *slot = k;
        } else {
            k = *slot;
        }
        group_of[order[i]] = k;
        g[k].instances++;
        if (ob->acquisitions < 0 || g[k].acquisitions < 0)
            g[k].acquisitions = -1; /* one unknown count: the sum is unknown */
        else
            g[k].acquisitions += ob->acquisitions;
        g[k].contended += ob->contended;
        g[k].sampled_waits += ob->sampled_waits;
        g[k].wait_s += ob->wait_s;
        g[k].blame_s += ob->blame_s;
        g[k].handoff_s += ob->handoff_s;
        g[k].unattributed_s += ob->unattributed_s;
    }
    lb_map_free(&map);
    free(order);
    return g;
}

/* object_blame grouped by (row group, release frame key); sorted by group,
 * then blame descending. first[group] is the first entry of each group. */
static struct holder *group_holders(struct lb_profile *p, const int32_t *keys,
                                    const int32_t *group_of, int32_t ngroups, int32_t *nout,
                                    int32_t **first)
{
    struct lb_map map = { 0 };
    struct holder *h = NULL;
    int32_t n = 0;
    size_t cap = 0;
    const int32_t *entry = p->release_entry; /* (at load: join_entries.c) */

    for (int32_t i = 0; i < p->noblame; i++) {
        const struct lb_objblame *ob = &p->oblame[i];
        int32_t f = lb_release_frame(p, ob->node, ob->thread_id, entry), grp = group_of[ob->object];

        if (grp < 0)
            continue;
        uint64_t key = (uint64_t)grp << 32 | (uint32_t)(f >= 0 ? keys[f] : INT32_MAX);
        bool is_new;
        int32_t *slot = lb_map_slot(&map, key, &is_new);

        if (is_new) {
            lb_grow((void **)&h, &cap, (size_t)n + 1, sizeof *h);
            *slot = n;
            h[n++] = (struct holder){ .group = grp, .frame = f };
        }
        h[*slot].blame += ob->blame_s;
        h[*slot].count += ob->count;
    }
    lb_sort(h, (size_t)n, sizeof *h, cmp_holders);
    *first = lb_xmalloc(((size_t)ngroups + 1) * sizeof **first);
    memset(*first, 0xff, ((size_t)ngroups + 1) * sizeof **first);
    for (int32_t i = n - 1; i >= 0; i--)
        (*first)[h[i].group] = i;
    *nout = n;
    lb_map_free(&map);
    return h;
}

/* Seconds for people: "0.600 s", "0.065 ms", "12.3 us" (never %g). */
void lb_buf_seconds(struct lb_buf *b, double s)
{
    if (s >= 0.1 || s == 0)
        lb_buf_printf(b, "%.3f s", s);
    else if (s >= 1e-4)
        lb_buf_printf(b, "%.3f ms", s * 1e3);
    else
        lb_buf_printf(b, "%.1f us", s * 1e6);
}

static void add_holders(struct lb_profile *p, struct lb_table *t, int row, const struct holder *h,
                        int32_t j, int32_t nh, int32_t grp, double blame, struct lb_buf *b)
{
    for (int k = 0; j >= 0 && j < nh && h[j].group == grp && k < 3; j++, k++) {
        lb_buf_reset(b);
        lb_frame_describe(p, h[j].frame, b);
        lb_buf_puts(b, ": ");
        lb_buf_seconds(b, h[j].blame);
        lb_buf_printf(b, " in %" PRId64 " releases", h[j].count);
        lb_table_list_add(t, row, C_HOLDERS, lb_buf_str(b));
        lb_buf_reset(b);
        lb_buf_printf(b, "holder %.3f s (%.1f%%) x%" PRId64 "  ", h[j].blame,
                      100 * lb_share(h[j].blame, blame), h[j].count);
        lb_frame_describe(p, h[j].frame, b);
        lb_table_detail(t, row, lb_buf_str(b));
    }
}

static void add_row(struct lb_profile *p, struct lb_table *t, const struct group *g,
                    const int32_t *group_of, int32_t grp, struct lb_buf *b)
{
    const struct lb_syncobj *ob = &p->objs[g->obj];
    int row = lb_table_add_row(t);
    int32_t f = ob->first_node >= 0 ? p->nodes[lb_site_node(p, ob->first_node)].frame : -1;

    lb_table_int(t, row, C_ID, ob->id);
    lb_table_str(t, row, C_KIND, ob->kind >= 0 ? lb_obj_kind_names[ob->kind] : "?");
    lb_buf_reset(b);
    lb_buf_printf(b, "0x%" PRIx64, ob->address);
    lb_table_str(t, row, C_ADDRESS, lb_buf_str(b));
    struct lb_map seen = { 0 }; /* an address reused by several objects is listed once */

    for (int32_t i = 0; i < p->nobjs; i++) {
        bool is_new;

        if (group_of[i] != grp)
            continue;
        *lb_map_slot(&seen, p->objs[i].address, &is_new) = 0;
        if (!is_new)
            continue;
        lb_buf_reset(b);
        lb_buf_printf(b, "0x%" PRIx64, p->objs[i].address);
        lb_table_list_add(t, row, C_ADDRESSES, lb_buf_str(b));
    }
    lb_table_int(t, row, C_INSTANCES, (int64_t)seen.m.used);
    lb_table_int(t, row, C_OBJECTS, g->instances);
    lb_map_free(&seen);
    if (g->acquisitions >= 0) { /* (unknown: "-", null) */
        lb_table_int(t, row, C_ACQ, g->acquisitions);
        lb_table_num(t, row, C_CONT_SHARE, lb_share((double)g->contended, (double)g->acquisitions));
    }
    lb_table_int(t, row, C_CONT, g->contended);
    lb_table_int(t, row, C_SAMPLED, g->sampled_waits);
    lb_table_num(t, row, C_WAIT, g->wait_s);
    lb_table_num(t, row, C_BLAME, g->blame_s);
    lb_table_num(t, row, C_HANDOFF, g->handoff_s);
    lb_table_num(t, row, C_UNATTR, g->unattributed_s);
    if (ob->first_node >= 0) {
        lb_buf_reset(b);
        lb_frame_describe(p, f, b);
        lb_table_str(t, row, C_FIRST, lb_buf_str(b));
        lb_table_str(t, row, C_FIRST_FUNCTION, lb_frame_label(p, f));
        lb_table_str(t, row, C_FIRST_FILE, f >= 0 ? p->frames[f].file : NULL);
        lb_table_int(t, row, C_FIRST_LINE, f >= 0 ? p->frames[f].line : 0);
    } else {
        lb_table_str(t, row, C_FIRST, "(unknown)");
    }
}

int lb_view_locks(struct lb_profile *p, const struct lb_report_opts *o)
{
    struct lb_strtab tab = { 0 };
    int32_t *keys = lb_frame_key_ids(p, &tab);
    int32_t *group_of = lb_xmalloc(((size_t)p->nobjs + 1) * sizeof *group_of), ng, nh, *first;
    struct group *g = make_groups(p, keys, o->per_address, group_of, &ng);
    struct holder *h = group_holders(p, keys, group_of, ng, &nh, &first);
    int32_t *order = lb_xmalloc(((size_t)ng + 1) * sizeof *order);
    bool table = o->format == LB_FMT_TABLE;
    int32_t limit = o->n >= 0 ? o->n : table ? LOCK_ROWS : ng, shown = ng < limit ? ng : limit;
    struct lb_buf b = { 0 };
    static const int col_order[] = { C_ID, C_KIND, C_INSTANCES, C_ADDRESS };

    lock_cols[C_INSTANCES].flags = o->per_address ? LB_COL_NOTABLE : 0;
    lock_cols[C_ADDRESS].title = o->per_address ? "Address" : "Heaviest at";
    lock_cols[C_FIRST].title = o->per_address ? "First contended at (holders below)"
                                              : "Locks first contended at (holders below)";
    struct lb_table *t = lb_table_new(lock_cols, C_NCOLS);

    lb_table_order(t, col_order, 4);
    for (int32_t i = 0; i < ng; i++)
        order[i] = i;
    sort_profile = p;
    sort_groups = g;
    lb_sort(order, (size_t)ng, sizeof *order, cmp_groups);
    for (int32_t i = 0; i < shown; i++) {
        add_row(p, t, &g[order[i]], group_of, order[i], &b);
        add_holders(p, t, lb_table_rows(t) - 1, h, first[order[i]], nh, order[i],
                    g[order[i]].blame_s, &b);
    }
    if (table) {
        lb_print_header(p, o, stdout);
        if (!ng)
            printf("(no contended objects recorded)\n");
        else
            lb_table_print(t, o->format, stdout);
        if (shown < ng)
            printf("(%d more %s; -n N shows more)\n", ng - shown,
                   o->per_address ? "objects" : "groups");
        if (!o->per_address && ng)
            printf("(lock instances grouped by kind and where a thread first waited on them; "
                   "--per-address lists each)\n");
        int64_t spin = 0, mutex = 0, signalled = 0;
        for (int32_t i = 0; i < ng; i++) {
            int kind = p->objs[g[i].obj].kind;
            *(kind == LB_OBJ_SPIN    ? &spin
              : kind == LB_OBJ_MUTEX ? &mutex
                                     : &signalled) += g[i].sampled_waits;
        }
        if (spin)
            printf("(%" PRId64 " spin waits were measured by CPU samples, not timed: their wait,"
                   " blame and hand-off are sums of sample periods)\n",
                   spin);
        if (mutex)
            printf("(%" PRId64 " mutex waits were blamed by CPU samples of their holders: the"
                   " waits are timed, the blame is a sum of sample periods times the waiters,"
                   " the rest of the wait is hand-off)\n",
                   mutex);
        if (signalled)
            printf("(%" PRId64 " cond/sem waits had their blame estimated: the waits and the"
                   " idleness are timed; intervals between signals longer than %u us were"
                   " measured whole, of the others one in N, chosen at random, was"
                   " measured and counted N times (N = %d, up to %d for a thread that"
                   " signals faster than %d times a second); the rest of the idleness is"
                   " unattributed)\n",
                   signalled, LB_SIGNAL_GAP_NS / 1000, LB_SIGNAL_SAMPLE_EVERY, LB_SIGNAL_SAMPLE_MAX,
                   LB_SIGNAL_MARKS_PER_S * LB_SIGNAL_SAMPLE_EVERY);
    } else {
        lb_table_print(t, o->format, stdout);
    }
    lb_table_free(t);
    lb_buf_free(&b);
    lb_strtab_free(&tab);
    free(keys);
    free(group_of);
    free(g);
    free(order);
    free(first);
    free(h);
    return LB_EXIT_OK;
}
