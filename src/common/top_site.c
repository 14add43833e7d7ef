/* The exit line's top release site (contract in top_site.h).
 *
 * Runs at the final write on the process's own profile, and in `lockblame
 * run` on the run's database; uses malloc freely. Node and frame ids are
 * nearly dense (the writer numbers them from 0 and 1; each process added
 * to a run's database shifts them past the largest), so both go into
 * arrays indexed by id: every node, for the walks from the blamed nodes
 * to their program frames, and only the frames those walks reach, read
 * as they reach them. A database whose threads waited on nothing reads
 * neither. */
#include "common/top_site.h"
#include "common/demangle.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clone_name.h"
#include "common/path_base.h"
#include "common/runtime_frames.h"

typedef struct {
    char *function, *file, *module;
    long long line, offset;
    bool runtime;
    bool read; /* looked up (frame_of) */
} frame_t;

typedef struct {
    char *key; /* "function\tfile\tline\tkind" of the site frame */
    long long node, frame;
    char kind[16];
    double v;
} cand_t;

static long long max_id(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static char *dup_col(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? strdup(s) : NULL;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const cand_t *)a)->key, ((const cand_t *)b)->key);
}

/* Frame id (0 < id < the array's size) read by lookup at its first use:
 * a site's walk visits a few of a database's frames. A frame the table
 * lacks stays as calloc left it, as does frame 0 (none). */
static const frame_t *frame_of(sqlite3_stmt *lookup, frame_t *fr, long long id)
{
    frame_t *f = &fr[id];
    if (id <= 0 || f->read || !lookup)
        return f;
    f->read = true;
    sqlite3_bind_int64(lookup, 1, id);
    if (sqlite3_step(lookup) == SQLITE_ROW) {
        f->function = dup_col(lookup, 0);
        f->file = dup_col(lookup, 1);
        f->line = sqlite3_column_int64(lookup, 2);
        f->module = dup_col(lookup, 3);
        f->offset = sqlite3_column_int64(lookup, 4);
        f->runtime = lb_runtime_frame(f->function, f->file, f->module);
    }
    sqlite3_reset(lookup);
    return f;
}

/* Blame per (node, kind), less its structural share; joins are
 * structural. The structural share is summed once per (node, kind) in
 * the table's order, the order a scan per group summed it in. */
#define CANDIDATES_SQL                                                                 \
    "WITH s(node_id, object, b) AS (SELECT DISTINCT node_id, object, SUM(blame_s)"     \
    " OVER (PARTITION BY node_id, object ORDER BY rowid"                               \
    " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM structural_wait)" \
    " SELECT k.node_id, k.kind, SUM(k.v) - COALESCE(s.b, 0)"                           \
    " FROM (SELECT node_id, 'mutex' AS kind, idle_mutex_s AS v FROM metric"            \
    " UNION ALL SELECT node_id, 'spin', idle_spin_s FROM metric"                       \
    " UNION ALL SELECT node_id, 'rwlock', idle_rwlock_s FROM metric"                   \
    " UNION ALL SELECT node_id, 'cond', idle_cond_s FROM metric"                       \
    " UNION ALL SELECT node_id, 'barrier', idle_barrier_s FROM metric"                 \
    " UNION ALL SELECT node_id, 'sem', idle_sem_s FROM metric"                         \
    " UNION ALL SELECT node_id, 'futex', idle_futex_s FROM metric) k"                  \
    " LEFT JOIN s ON s.node_id = k.node_id AND s.object = k.kind"                      \
    " WHERE k.v > 0 GROUP BY k.node_id, k.kind"

void lb_top_site(sqlite3 *db, char *site, size_t site_size, char *kind, size_t kind_size,
                 double *seconds)
{
    site[0] = '\0';
    long long nn = 0, nf = 0, *parent = NULL, *nframe = NULL;
    frame_t *fr = NULL;
    cand_t *c = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = NULL, *lookup = NULL;
    /* the candidates first: a tree that waited on nothing reads no more */
    if (sqlite3_prepare_v2(db, CANDIDATES_SQL, -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            long long v = sqlite3_column_int64(st, 0);
            double b = sqlite3_column_double(st, 2);
            if (v <= 0 || b <= 1e-9)
                continue;
            if (n == cap) {
                cand_t *grown = realloc(c, (cap = cap ? 2 * cap : 64) * sizeof *c);
                if (!grown)
                    break;
                c = grown;
            }
            const char *k = (const char *)sqlite3_column_text(st, 1);
            c[n] = (cand_t){ .node = v, .v = b };
            snprintf(c[n].kind, sizeof c[n].kind, "%s", k ? k : "");
            n++;
        }
    sqlite3_finalize(st);
    st = NULL;
    if (n == 0)
        goto out;
    nn = max_id(db, "SELECT MAX(id) FROM node") + 1;
    nf = max_id(db, "SELECT MAX(id) FROM frame") + 1;
    if (nn <= 0 || nf <= 0) {
        n = 0;
        goto out;
    }
    parent = calloc((size_t)nn, sizeof *parent);
    nframe = calloc((size_t)nn, sizeof *nframe);
    fr = calloc((size_t)nf, sizeof *fr);
    if (!parent || !nframe || !fr) {
        n = 0;
        goto out;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT id, COALESCE(parent_id, -1), COALESCE(frame_id, 0) FROM node",
                           -1, &st, NULL) == SQLITE_OK)
        while (sqlite3_step(st) == SQLITE_ROW) {
            long long id = sqlite3_column_int64(st, 0);
            if (id >= 0 && id < nn) {
                parent[id] = sqlite3_column_int64(st, 1);
                nframe[id] = sqlite3_column_int64(st, 2);
            }
        }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db,
                           "SELECT f.function, f.file, f.line, m.path, f.offset FROM frame f"
                           " LEFT JOIN module m ON m.id = f.module_id WHERE f.id = ?1",
                           -1, &lookup, NULL) != SQLITE_OK)
        lookup = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        long long v = c[i].node;
        if (v >= nn)
            continue;
        /* the innermost program frame, as the report's site */
        long long s = v;
        for (int depth = 0; s > 0 && depth < 4096; depth++, s = parent[s]) {
            long long f = nframe[s];
            if (f > 0 && f < nf && !frame_of(lookup, fr, f)->runtime)
                break;
        }
        if (s <= 0 || s >= nn)
            s = v;
        long long f = nframe[s] > 0 && nframe[s] < nf ? nframe[s] : 0;
        const frame_t *at = frame_of(lookup, fr, f);
        cand_t *x = &c[kept];
        *x = c[i];
        const char *fn = at->function;
        size_t len = (fn ? strlen(fn) : 0) + (at->file ? strlen(at->file) : 0) + 64;
        if (!(x->key = malloc(len)))
            break;
        if (fn)
            snprintf(x->key, len, "%.*s\t%s\t%lld\t%s", (int)lb_clone_base_len(fn), fn,
                     at->file ? at->file : "", at->line, x->kind);
        else
            snprintf(x->key, len, "#%lld\t%s", f, x->kind);
        x->frame = f;
        kept++;
    }
    sqlite3_finalize(lookup);
    n = kept;
    qsort(c, n, sizeof *c, cmp_key);
    double best = 0;
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double sum = 0;
        for (; j < n && strcmp(c[j].key, c[i].key) == 0; j++)
            sum += c[j].v;
        if (sum > best) {
            best = sum;
            at = i;
        }
        i = j;
    }
    if (best > 0) {
        const frame_t *f = &fr[c[at].frame];
        const char *mod = lb_path_base(f->module);
        char base[512]; /* f.isra.0 is f; C++ names demangled for people */
        const char *fn = NULL;
        if (f->function) {
            snprintf(base, sizeof base, "%.*s", (int)lb_clone_base_len(f->function), f->function);
            fn = lb_demangled(base);
        }
        if (fn && f->file)
            snprintf(site, site_size, "%s (%s:%lld)", fn, lb_path_base(f->file), f->line);
        else if (fn)
            snprintf(site, site_size, "%s", fn);
        else /* stripped: module+offset, as the report shows it */
            snprintf(site, site_size, "%s+0x%llx", mod ? mod : "?", (unsigned long long)f->offset);
        snprintf(kind, kind_size, "%s", c[at].kind);
        *seconds = best;
    }
out:
    for (size_t i = 0; i < n; i++)
        free(c[i].key);
    free(c);
    for (long long i = 0; fr && i < nf; i++) {
        free(fr[i].function);
        free(fr[i].file);
        free(fr[i].module);
    }
    free(fr);
    free(parent);
    free(nframe);
}
