/*
 * site_rows.c - blame grouped by the release site's own frame (function,
 * file, line) and object kind (the innermost program frame: site_frame.c);
 * with another metric the same grouping ranks frames by that metric
 * (site_rows.h).
 *
 * Counts come from the site table: releases for idleness (the calls that
 * could carry blame), contended acquisitions for wait, none otherwise.
 */
#include "report/cli/site_rows.h"

#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

static int cmp_rows(const void *a, const void *b)
{
    const struct lb_site_row *x = a, *y = b;

    if (x->structural != y->structural)
        return x->structural ? 1 : -1; /* what a user can act on first */
    if (x->value != y->value)
        return x->value < y->value ? 1 : -1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->kind - y->kind;
}

static uint64_t row_map_key(int32_t key, int kind, bool structural)
{
    return ((uint64_t)key * (LB_SITE_NO_KIND + 1) + (uint64_t)kind) * 2 + structural;
}

/* Find or add the row for (key, kind). */
static struct lb_site_row *row_for(struct lb_map *map, struct lb_site_row **rows, int32_t *n,
                                   size_t *cap, int32_t key, int kind, int32_t frame,
                                   bool structural)
{
    bool is_new;
    int32_t *slot = lb_map_slot(map, row_map_key(key, kind, structural), &is_new);

    if (!is_new)
        return &(*rows)[*slot];
    lb_grow((void **)rows, cap, (size_t)*n + 1, sizeof **rows);
    *slot = *n;
    struct lb_site_row *r = &(*rows)[(*n)++];

    memset(r, 0, sizeof *r);
    r->key = key;
    r->kind = kind;
    r->frame = frame;
    r->heaviest = -1;
    r->structural = structural;
    return r;
}

static void credit(struct lb_site_row *r, int32_t node, double value, double blame, int64_t blamed)
{
    r->value += value;
    r->blame += blame;
    r->blamed += blamed;
    if (r->heaviest < 0 || value > r->heaviest_value) {
        r->heaviest = node;
        r->heaviest_value = value;
    }
}

/* The blame of metric rows [first, last) of one node, by kind, into the
 * rows of (key, kind): what a user can act on and the structural part
 * (st: the node's structural blame per kind, lb_node_structural), each
 * row remembering `node` as a context of its site. */
static void credit_idle(struct lb_site_row **rows, int32_t *n, size_t *cap, struct lb_map *map,
                        const struct lb_profile *p, int32_t first, int32_t last, int32_t key,
                        int32_t frame, int32_t node, const double *st, const int64_t *sc)
{
    double idle[LB_OBJ_KINDS] = { 0 };
    int64_t blamed[LB_OBJ_KINDS] = { 0 };

    for (int32_t i = first; i < last; i++)
        for (int k = 0; k < LB_OBJ_KINDS; k++) {
            idle[k] += p->mrows[i].idle[k];
            if (p->mrows[i].idle[k] > 0)
                blamed[k] += p->mrows[i].blamed_count;
        }
    for (int k = 0; k < LB_OBJ_KINDS; k++) {
        if (idle[k] <= 0)
            continue;
        double sk = st[k] < idle[k] ? st[k] : idle[k], ak = idle[k] - sk;
        bool acts = ak > 1e-9 * idle[k];

        if (acts)
            credit(row_for(map, rows, n, cap, key, k, frame, false), node, ak, ak, blamed[k]);
        /* the structural row counts the releases that carried its blame
         * (sc: the node's, where it has a part a user can act on too) */
        int64_t sblamed = !acts ? blamed[k] : sc && sc[k] < blamed[k] ? sc[k] : sc ? blamed[k] : 0;
        if (sk > 0)
            credit(row_for(map, rows, n, cap, key, k, frame, true), node, sk, sk, sblamed);
    }
}

/* A release call made in runtime code (libstdc++'s notify_all, an inline
 * std::lock_guard) is counted in the site table under that code's frame,
 * while its blame goes to the program frame below it. leaf_rows maps the
 * runtime frame's key to the row key its blame went to, or to
 * LEAF_AMBIGUOUS when it went to several (one libstdc++ call site serving
 * several callers: its count cannot be split among them). */
#define LEAF_AMBIGUOUS (-2)

static void note_leaf(struct lb_map *leaf_rows, int32_t leaf_key, int32_t row_key)
{
    bool is_new;
    int32_t *slot = lb_map_slot(leaf_rows, (uint64_t)leaf_key, &is_new);

    if (is_new)
        *slot = row_key;
    else if (*slot != row_key)
        *slot = LEAF_AMBIGUOUS;
}

/* Group the metric rows node by node (they are sorted by node). Idleness
 * is split into what a user can act on and the structural part (sblame:
 * per node and kind, lb_node_structural). A release context with no frame
 * of the program's own (a std::thread's end, which a join waited for, is
 * in libstdc++ alone) is told by the function the thread ran
 * (lb_release_frame), each thread's rows on their own, with
 * their share of the node's structural part. */
static void collect(struct lb_profile *p, enum lb_metric m, const int32_t *keys,
                    const int32_t *entry, const double *sblame, const int64_t *sreleases,
                    struct lb_map *map, struct lb_site_row **rows, int32_t *n, size_t *cap,
                    struct lb_map *leaf_rows)
{
    for (int32_t v = 0; v < p->nnodes; v++) {
        int32_t f = p->nodes[v].frame, first = p->mrow_start[v], last = p->mrow_start[v + 1];

        if (first == last)
            continue;
        int32_t site = m == LB_M_IDLENESS || m == LB_M_WAIT ? lb_site_node(p, v) : v;

        f = p->nodes[site].frame;
        int32_t key = f >= 0 ? keys[f] : -1;
        double value = 0, blame = 0;
        int64_t blamed_all = 0;

        if (key < 0)
            key = INT32_MAX; /* the root: its own group */
        if (m == LB_M_IDLENESS) {
            const double *st = &sblame[(size_t)v * LB_OBJ_KINDS];

            if (!lb_frame_is_runtime(p, f)) {
                credit_idle(rows, n, cap, map, p, first, last, key, f, site, st,
                            &sreleases[(size_t)v * LB_OBJ_KINDS]);
                if (site != v && p->nodes[v].frame >= 0)
                    note_leaf(leaf_rows, keys[p->nodes[v].frame], key);
                continue;
            }
            double tot[LB_OBJ_KINDS] = { 0 };

            for (int32_t i = first; i < last; i++)
                for (int k = 0; k < LB_OBJ_KINDS; k++)
                    tot[k] += p->mrows[i].idle[k];
            for (int32_t i = first; i < last; i++) {
                int32_t ef = lb_release_frame(p, v, p->mrows[i].thread_id, entry);
                double sti[LB_OBJ_KINDS]; /* its share of the structural part */

                for (int k = 0; k < LB_OBJ_KINDS; k++)
                    sti[k] = tot[k] > 0 ? st[k] * p->mrows[i].idle[k] / tot[k] : 0;
                credit_idle(rows, n, cap, map, p, i, i + 1, ef >= 0 ? keys[ef] : key, ef, site, sti,
                            NULL);
            }
            continue;
        }
        for (int32_t i = first; i < last; i++) {
            for (int k = 0; k < LB_OBJ_KINDS; k++)
                blame += p->mrows[i].idle[k];
            value += lb_mrow_value(&p->mrows[i], m);
            blamed_all += p->mrows[i].blamed_count;
        }
        if (value == 0)
            continue;
        credit(row_for(map, rows, n, cap, key, LB_SITE_NO_KIND, f, false), site, value, blame,
               blamed_all);
    }
}

/* Counts from the site table, and for metrics without a kind, the kind of
 * the frame's most frequent contended/acquired operation. */
static void add_counts(struct lb_profile *p, enum lb_metric m, const int32_t *keys,
                       struct lb_site_row *rows, int32_t n, const struct lb_map *map,
                       const struct lb_map *leaf_rows)
{
    struct lb_map kmap = { 0 };
    size_t cap = 0;
    int64_t(*acc)[3] = NULL; /* releases, contended, acquisitions per key*8+kind */
    int32_t nacc = 0;

    for (int32_t i = 0; i < p->nsites; i++) {
        const struct lb_site *s = &p->sites[i];
        bool is_new;
        int32_t pf = lb_frame_program(p, s->frame), key = keys[pf];

        if (lb_frame_is_runtime(p, pf)) { /* counted in runtime code */
            int32_t to = lb_map_get(leaf_rows, (uint64_t)keys[s->frame]);

            if (to >= 0)
                key = to;
        }
        int32_t *slot =
            lb_map_slot(&kmap, (uint64_t)key * (LB_SITE_NO_KIND + 1) + (uint64_t)s->kind, &is_new);

        if (is_new) {
            lb_grow((void **)&acc, &cap, (size_t)nacc + 1, sizeof *acc);
            *slot = nacc;
            memset(acc[nacc++], 0, sizeof *acc);
        }
        acc[*slot][0] += s->releases;
        acc[*slot][1] += s->contended;
        acc[*slot][2] += s->acquisitions;
    }
    for (int32_t i = 0; i < n; i++) {
        struct lb_site_row *r = &rows[i];

        if (r->key == INT32_MAX)
            continue;
        if (r->kind != LB_SITE_NO_KIND) {
            int32_t a =
                lb_map_get(&kmap, (uint64_t)r->key * (LB_SITE_NO_KIND + 1) + (uint64_t)r->kind);

            r->count = a >= 0 ? acc[a][0] : 0;
            /* A join's release is the joined thread's end: every join
			 * that found its thread is one (Blamed); the site table has
			 * no call to count. Elsewhere fewer calls than blamed ones
			 * means some were counted where no row is (a runtime call
			 * site serving several program callers): unknown, "-". */
            if (r->kind == LB_OBJ_JOIN)
                r->count = r->blamed;
            else if (r->count < r->blamed)
                r->count = -1;
            /* a site whose blame is split (rows[].structural) keeps its
			 * calls on the row a user can act on, not on both */
            else if (r->structural && lb_map_get(map, row_map_key(r->key, r->kind, false)) >= 0)
                r->count = -1;
            continue;
        }
        int best = LB_SITE_NO_KIND;
        int64_t best_n = 0;

        for (int k = 0; k < LB_OBJ_KINDS; k++) {
            int32_t a = lb_map_get(&kmap, (uint64_t)r->key * (LB_SITE_NO_KIND + 1) + (uint64_t)k);
            int64_t c = a < 0 ? 0 : acc[a][1] * 1000000 + acc[a][2] + acc[a][0];

            if (a >= 0 && c > best_n) {
                best = k;
                best_n = c;
                r->count = m == LB_M_WAIT ? acc[a][1] : 0;
            }
        }
        r->kind = best;
    }
    free(acc);
    lb_map_free(&kmap);
}

void lb_site_rows(struct lb_profile *p, enum lb_metric m, struct lb_site_rows *out)
{
    struct lb_strtab keytab = { 0 };
    int32_t *keys = lb_frame_key_ids(p, &keytab);
    struct lb_map map = { 0 }, leaf_rows = { 0 };
    size_t cap = 0;
    double *sblame = lb_xmalloc(((size_t)p->nnodes + 1) * LB_OBJ_KINDS * sizeof *sblame);
    int64_t *sreleases = lb_xmalloc(((size_t)p->nnodes + 1) * LB_OBJ_KINDS * sizeof *sreleases);

    memset(out, 0, sizeof *out);
    lb_node_structural(p, sblame);
    lb_node_structural_releases(p, sreleases);
    /* (p->release_entry: at load, join_entries.c) */
    collect(p, m, keys, p->release_entry, sblame, sreleases, &map, &out->rows, &out->n, &cap,
            &leaf_rows);
    add_counts(p, m, keys, out->rows, out->n, &map, &leaf_rows);
    lb_sort(out->rows, (size_t)out->n, sizeof *out->rows, cmp_rows);
    while (out->acts < out->n && !out->rows[out->acts].structural)
        out->acts++;
    free(sblame);
    free(sreleases);
    free(keys);
    lb_map_free(&leaf_rows);
    lb_map_free(&map);
    lb_strtab_free(&keytab);
}

void lb_site_rows_free(struct lb_site_rows *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}
