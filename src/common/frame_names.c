/* See frame_names.h. */
#include "common/frame_names.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/module_names.h"
#include "common/rowlog.h"

/* The module files read since the last lb_frame_names_release. */
static lb_module_files_t *files;

/* The source frames at one address, outermost first (depth 0 is the real
 * function, depth d the d-th inlined call from the outside in), copied. */
typedef struct chain {
    int n;
    char *function[LB_MAX_INLINE + 1], *file[LB_MAX_INLINE + 1];
    int line[LB_MAX_INLINE + 1];
} chain_t;

typedef struct unnamed {
    sqlite3_int64 id, module_id, offset;
    char *path, *build_id;
} unnamed_t;

/* The statements of one fill, on schema (and names). */
typedef struct fill {
    sqlite3 *db;
    const char *schema;
    sqlite3_stmt *cached; /* a chain in names.symbol */
    sqlite3_stmt *cache;  /* a chain's row into schema.symbol */
    sqlite3_stmt *rename; /* a frame row's names */
    sqlite3_stmt *add_frame, *drop_frame, *on_frame, *add_node, *move_node;
    sqlite3_stmt *site_frame, *start_frame; /* what named a frame names another */
    sqlite3_int64 next_frame, next_node;    /* ids past the schema's */
    bool expanded;                          /* nodes were added: depths change */
} fill_t;

static char *copy(const char *text)
{
    return text ? strdup(text) : NULL;
}

static void chain_free(chain_t *c)
{
    for (int d = 0; d < c->n; d++) {
        free(c->function[d]);
        free(c->file[d]);
    }
    c->n = 0;
}

static int done(sqlite3_stmt *st, int rc)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static void bind_text(sqlite3_stmt *st, int i, const char *text)
{
    sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
}

/* The chain the run's database holds for the frame, whole (depths 0 to
 * n - 1); false when it has none. */
static bool read_cached(fill_t *f, const unnamed_t *u, chain_t *c)
{
    if (!f->cached)
        return false;
    bind_text(f->cached, 1, u->build_id);
    bind_text(f->cached, 2, u->path);
    sqlite3_bind_int64(f->cached, 3, u->offset);
    bool whole = true;
    while (sqlite3_step(f->cached) == SQLITE_ROW && c->n <= LB_MAX_INLINE) {
        whole = whole && sqlite3_column_int(f->cached, 0) == c->n;
        c->function[c->n] = copy((const char *)sqlite3_column_text(f->cached, 1));
        c->file[c->n] = copy((const char *)sqlite3_column_text(f->cached, 2));
        c->line[c->n] = sqlite3_column_int(f->cached, 3);
        c->n++;
    }
    done(f->cached, SQLITE_DONE);
    if (!whole)
        chain_free(c);
    return c->n > 0;
}

/* The chain from the module's file, cached in schema.symbol; false when
 * the file cannot be read or is another build. */
static bool read_file(fill_t *f, const unnamed_t *u, chain_t *c)
{
    lb_symbol_t sym;
    if (!files)
        files = lb_module_files_open();
    if (!lb_module_files_name(files, u->path, u->build_id, (uintptr_t)u->offset, &sym))
        return false;
    c->n = sym.n_inline + 1;
    c->function[0] = copy(sym.function);
    c->file[0] = copy(sym.file);
    c->line[0] = sym.line;
    for (int d = 1; d < c->n; d++) {
        const lb_source_frame_t *s = &sym.inline_frames[sym.n_inline - d];
        c->function[d] = copy(s->function);
        c->file[d] = copy(s->file);
        c->line[d] = s->line;
    }
    for (int d = 0; f->cache && d < c->n; d++) {
        bind_text(f->cache, 1, u->build_id);
        bind_text(f->cache, 2, u->path);
        sqlite3_bind_int64(f->cache, 3, u->offset);
        sqlite3_bind_int(f->cache, 4, d);
        bind_text(f->cache, 5, c->function[d]);
        bind_text(f->cache, 6, c->file[d]);
        sqlite3_bind_int(f->cache, 7, c->line[d]);
        done(f->cache, sqlite3_step(f->cache));
    }
    return true;
}

static int rename_frame(fill_t *f, sqlite3_int64 id, const char *function, const char *file,
                        int line)
{
    bind_text(f->rename, 1, function);
    bind_text(f->rename, 2, file);
    sqlite3_bind_int(f->rename, 3, line);
    sqlite3_bind_int64(f->rename, 4, id);
    return done(f->rename, sqlite3_step(f->rename));
}

/* Each node on frame u->id becomes a chain of nodes over the frames
 * ids[0 .. n - 1], outermost first: new nodes over ids[0 .. n - 2], and
 * the node itself, on ids[n - 1], below them. */
static int expand_nodes(fill_t *f, const unnamed_t *u, const sqlite3_int64 *ids, int n)
{
    sqlite3_int64 *nodes = NULL, *parents = NULL;
    size_t count = 0, cap = 0;
    int rc = SQLITE_OK;
    sqlite3_bind_int64(f->on_frame, 1, u->id);
    while ((rc = sqlite3_step(f->on_frame)) == SQLITE_ROW) {
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            sqlite3_int64 *a = realloc(nodes, cap * sizeof *a);
            nodes = a ? a : nodes;
            sqlite3_int64 *b = a ? realloc(parents, cap * sizeof *b) : NULL;
            parents = b ? b : parents;
            if (!a || !b) {
                rc = SQLITE_NOMEM;
                break;
            }
        }
        nodes[count] = sqlite3_column_int64(f->on_frame, 0);
        parents[count++] = sqlite3_column_int64(f->on_frame, 1);
    }
    rc = done(f->on_frame, rc);
    for (size_t i = 0; rc == SQLITE_OK && i < count; i++) {
        sqlite3_int64 parent = parents[i];
        for (int j = 0; rc == SQLITE_OK && j < n - 1; j++) {
            sqlite3_int64 id = f->next_node++;
            sqlite3_bind_int64(f->add_node, 1, id);
            sqlite3_bind_int64(f->add_node, 2, parent);
            sqlite3_bind_int64(f->add_node, 3, ids[j]);
            rc = done(f->add_node, sqlite3_step(f->add_node));
            parent = id;
        }
        sqlite3_bind_int64(f->move_node, 1, parent);
        sqlite3_bind_int64(f->move_node, 2, ids[n - 1]);
        sqlite3_bind_int64(f->move_node, 3, nodes[i]);
        if (rc == SQLITE_OK)
            rc = done(f->move_node, sqlite3_step(f->move_node));
        f->expanded = true;
    }
    free(nodes);
    free(parents);
    return rc;
}

/* One statement that takes the frame's id and the id that replaces it. */
static int replace_frame(sqlite3_stmt *st, sqlite3_int64 from, sqlite3_int64 to)
{
    sqlite3_bind_int64(st, 1, to);
    sqlite3_bind_int64(st, 2, from);
    return done(st, sqlite3_step(st));
}

/* The frame named by its chain. Without inlined calls the row takes the
 * names. With them, the address's frames are new rows with consecutive
 * ids, outermost first, as the exit write numbers them (the CLI finds an
 * inlined call's caller at the id before it): the old row goes, and what
 * named it (sites, threads' start routines, nodes) names the innermost. */
static int apply(fill_t *f, const unnamed_t *u, const chain_t *c)
{
    if (c->n == 1)
        return rename_frame(f, u->id, c->function[0], c->file[0], c->line[0]);
    sqlite3_int64 ids[LB_MAX_INLINE + 1] = { 0 };
    int rc = SQLITE_OK;
    for (int d = 0; rc == SQLITE_OK && d < c->n; d++) {
        ids[d] = f->next_frame++;
        sqlite3_bind_int64(f->add_frame, 1, ids[d]);
        sqlite3_bind_int64(f->add_frame, 2, u->module_id);
        sqlite3_bind_int64(f->add_frame, 3, u->offset);
        bind_text(f->add_frame, 4, c->function[d]);
        bind_text(f->add_frame, 5, c->file[d]);
        sqlite3_bind_int(f->add_frame, 6, c->line[d]);
        rc = done(f->add_frame, sqlite3_step(f->add_frame));
    }
    sqlite3_int64 inner = ids[c->n - 1];
    if (rc == SQLITE_OK)
        rc = expand_nodes(f, u, ids, c->n);
    if (rc == SQLITE_OK)
        rc = replace_frame(f->site_frame, u->id, inner);
    if (rc == SQLITE_OK)
        rc = replace_frame(f->start_frame, u->id, inner);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(f->drop_frame, 1, u->id);
        rc = done(f->drop_frame, sqlite3_step(f->drop_frame));
    }
    return rc;
}

static sqlite3_int64 next_id(sqlite3 *db, const char *schema, const char *table)
{
    sqlite3_stmt *st = lb_db_prepare_sql(
        db, sqlite3_mprintf("SELECT coalesce(max(id), 0) + 1 FROM \"%w\".%s", schema, table));
    sqlite3_int64 id = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return id;
}

/* The schema's unnamed frames, with their modules. */
static unnamed_t *list_unnamed(fill_t *f, size_t *count, int *rc)
{
    sqlite3_stmt *st = lb_db_prepare_sql(
        f->db, sqlite3_mprintf("SELECT f.id, f.module_id, f.offset, m.path, m.build_id"
                               " FROM \"%w\".frame f JOIN \"%w\".module m ON m.id = f.module_id"
                               " WHERE f.line = %d ORDER BY f.id",
                               f->schema, f->schema, LB_ROWLOG_UNNAMED_LINE));
    unnamed_t *list = NULL;
    size_t n = 0, cap = 0;
    *rc = st ? SQLITE_OK : SQLITE_NOMEM;
    while (st && (*rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            unnamed_t *grown = realloc(list, cap * sizeof *grown);
            if (!grown) {
                *rc = SQLITE_NOMEM;
                break;
            }
            list = grown;
        }
        list[n++] = (unnamed_t){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                 sqlite3_column_int64(st, 2),
                                 copy((const char *)sqlite3_column_text(st, 3)),
                                 copy((const char *)sqlite3_column_text(st, 4)) };
    }
    if (*rc == SQLITE_DONE)
        *rc = SQLITE_OK;
    sqlite3_finalize(st);
    *count = n;
    return list;
}

/* Every node's depth from the root's, after chains were added. */
static int recount_depths(fill_t *f)
{
    char *sql = sqlite3_mprintf(
        "WITH RECURSIVE d(id, depth) AS (SELECT id, 0 FROM \"%w\".node WHERE parent_id IS NULL"
        " UNION ALL SELECT n.id, d.depth + 1 FROM \"%w\".node n JOIN d ON n.parent_id = d.id)"
        " UPDATE \"%w\".node SET depth = (SELECT depth FROM d WHERE d.id = node.id)",
        f->schema, f->schema, f->schema);
    int rc = sql ? sqlite3_exec(f->db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

int lb_frame_names_fill(sqlite3 *db, const char *schema, const char *names)
{
    fill_t f = { .db = db, .schema = schema };
    size_t n;
    int rc;
    unnamed_t *list = list_unnamed(&f, &n, &rc);
    if (rc == SQLITE_OK && n) {
        if (names)
            f.cached = lb_db_prepare_sql(
                db, sqlite3_mprintf("SELECT depth, function, file, line"
                                    " FROM \"%w\".symbol WHERE build_id = ?1"
                                    " AND path = ?2 AND offset = ?3 ORDER BY depth",
                                    names));
        f.cache = lb_row_prepare(db, LB_ROW_SYMBOL, schema);
        f.rename = lb_db_prepare_sql(
            db, sqlite3_mprintf("UPDATE \"%w\".frame SET function = ?1, file = ?2,"
                                " line = ?3 WHERE id = ?4",
                                schema));
        f.add_frame = lb_row_prepare(db, LB_ROW_FRAME, schema);
        f.on_frame = lb_db_prepare_sql(
            db,
            sqlite3_mprintf("SELECT id, parent_id FROM \"%w\".node WHERE frame_id = ?1", schema));
        f.add_node = lb_db_prepare_sql(
            db, sqlite3_mprintf("INSERT INTO \"%w\".node VALUES(?1, ?2, ?3, 0)", schema));
        f.move_node = lb_db_prepare_sql(db, sqlite3_mprintf("UPDATE \"%w\".node SET parent_id = ?1,"
                                                            " frame_id = ?2 WHERE id = ?3",
                                                            schema));
        f.drop_frame = lb_db_prepare_sql(
            db, sqlite3_mprintf("DELETE FROM \"%w\".frame WHERE id = ?1", schema));
        f.site_frame = lb_db_prepare_sql(
            db,
            sqlite3_mprintf("UPDATE \"%w\".site SET frame_id = ?1 WHERE frame_id = ?2", schema));
        f.start_frame =
            lb_db_prepare_sql(db, sqlite3_mprintf("UPDATE \"%w\".thread SET start_frame_id = ?1"
                                                  " WHERE start_frame_id = ?2",
                                                  schema));
        f.next_frame = next_id(db, schema, "frame");
        f.next_node = next_id(db, schema, "node");
        if (!f.cache || !f.rename || !f.add_frame || !f.drop_frame || !f.on_frame || !f.add_node ||
            !f.move_node || !f.site_frame || !f.start_frame || !f.next_frame || !f.next_node)
            rc = SQLITE_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        chain_t c = { 0 };
        if (rc == SQLITE_OK)
            rc = read_cached(&f, &list[i], &c) || read_file(&f, &list[i], &c)
                     ? apply(&f, &list[i], &c)
                     : rename_frame(&f, list[i].id, NULL, NULL, 0);
        chain_free(&c);
        free(list[i].path);
        free(list[i].build_id);
    }
    if (rc == SQLITE_OK && f.expanded)
        rc = recount_depths(&f);
    free(list);
    sqlite3_stmt *all[] = { f.cached,   f.cache,    f.rename,   f.add_frame,
                            f.on_frame, f.add_node, f.move_node };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sqlite3_finalize(all[i]);
    return rc;
}

int lb_frame_names_leave(sqlite3 *db, const char *schema)
{
    char *sql = sqlite3_mprintf("UPDATE \"%w\".frame SET line = 0 WHERE line = %d", schema,
                                LB_ROWLOG_UNNAMED_LINE);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

void lb_frame_names_release(void)
{
    lb_module_files_close(files);
    files = NULL;
}
