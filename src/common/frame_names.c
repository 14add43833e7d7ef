/* See frame_names.h. A fill runs in three steps: the unnamed frames are
 * listed; their chains are read (kept from earlier fills or read ahead,
 * else the cache in the run's database, then module files); then, in one
 * savepoint that writes only the filled schema's rows, the chains read
 * from files are cached there, and the frames are renamed or replaced
 * and the nodes on them expanded, all in one pass over the filled
 * nodes. A merger reads its batch's chains ahead, with no transaction
 * open, so that the run's database is not held while libdw reads a
 * module. */
#include "common/frame_names.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/hash.h"
#include "common/module_names.h"
#include "common/room_for.h"
#include "common/rowlog.h"
#include "common/u64map.h"

/* The module files read since the last lb_frame_names_release. */
static lb_module_files_t *files;
/* Releases keep the module files and the chains (lb_frame_names_keep). */
static bool keep_all;

/* One unnamed frame: where it is, then the source frames at its address,
 * outermost first (depth 0 is the real function, depth d the d-th inlined
 * call from the outside in), copied; n 0: it stays unnamed. */
typedef struct unnamed {
    sqlite3_int64 id, module_id, offset;
    char *path, *build_id;
    int n;
    bool from_file; /* its chain read from its module's file, not cached yet */
    char *function[LB_MAX_INLINE + 1], *file[LB_MAX_INLINE + 1];
    int line[LB_MAX_INLINE + 1];
    sqlite3_int64 ids[LB_MAX_INLINE + 1]; /* its new frame rows when n > 1 */
} unnamed_t;

/* A fill's statements, by their slot in lb_frame_names_cache_t. */
enum fill_statement {
    FILL_LIST,        /* the schema's unnamed frames */
    FILL_CACHED,      /* a chain in names.symbol */
    FILL_CACHE,       /* a chain's row into schema.symbol */
    FILL_RENAME,      /* a frame row's names */
    FILL_ADD_FRAME,   /* the frame rows of an address's chain */
    FILL_DROP_FRAME,  /* the row they replace */
    FILL_ADD_NODE,    /* a node over an outer frame of a chain */
    FILL_MOVE_NODE,   /* a node on a replaced frame onto the innermost */
    FILL_SITE_FRAME,  /* what named a replaced frame names another: sites */
    FILL_START_FRAME, /* and threads' start routines */
    FILL_NEXT_FRAME,  /* the ids past the schema's */
    FILL_NEXT_NODE,
    FILL_SCAN_NODES,  /* the filled nodes, for those on replaced frames */
    FILL_SCAN_DEPTHS, /* the filled nodes' and the root's parents and depths */
    FILL_SET_DEPTH,   /* a node's depth counted again */
    FILL_BEGIN,       /* the read transaction on names, and its end */
    FILL_COMMIT,
    FILL_SAVEPOINT, /* the savepoint the writes are made in */
    FILL_ROLLBACK,
    FILL_RELEASE,
    FILL_STATEMENTS
};
_Static_assert(FILL_STATEMENTS <= LB_FRAME_NAMES_STATEMENTS, "lb_frame_names_cache_t holds them");

/* A fill's statements, on schema (and names): in the caller's cache, or
 * in the fill's own, finalized at its end. */
typedef struct fill {
    sqlite3 *db;
    const char *schema;
    unnamed_t *list;
    size_t n;
    sqlite3_stmt **st;                   /* [FILL_STATEMENTS], prepared at first use */
    sqlite3_int64 next_frame, next_node; /* ids past the schema's */
    lb_db_shifts_t above;                /* the rows filled: frames, nodes, threads from these on */
    bool ahead;                          /* reading chains for later fills (no schema) */
} fill_t;

/* f's statement `which`, prepared at its first use from fmt and its
 * arguments (sqlite3_mprintf's); NULL when it cannot be. */
static sqlite3_stmt *statement(fill_t *f, enum fill_statement which, const char *fmt, ...)
{
    if (!f->st[which]) {
        va_list ap;
        va_start(ap, fmt);
        f->st[which] = lb_db_prepare_sql(f->db, sqlite3_vmprintf(fmt, ap));
        va_end(ap);
    }
    return f->st[which];
}

/* A copy of text into *to; false when there is no memory for it. */
static bool copy(char **to, const char *text)
{
    *to = text ? strdup(text) : NULL;
    return !text || *to;
}

static void unnamed_free(unnamed_t *u)
{
    for (int d = 0; d < u->n; d++) {
        free(u->function[d]);
        free(u->file[d]);
    }
    u->n = 0;
}

/* The chains found since the last lb_frame_names_release, by where they
 * are: a merge's records are a tree's processes, which leave the same
 * addresses unnamed. A key whose hash another key holds is not kept (it
 * is read as before). */
static struct {
    lb_u64map_t where; /* key_of -> index in chains */
    unnamed_t *chains;
    size_t n, cap;
} known;

static uint64_t key_of(const unnamed_t *u)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over build id, path and offset */
    const char *parts[] = { u->build_id ? u->build_id : "", "\n", u->path ? u->path : "" };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *c = parts[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return (h ^ (uint64_t)u->offset) * LB_HASH_MUL;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_place(const unnamed_t *a, const unnamed_t *b)
{
    return a->offset == b->offset && same_text(a->path, b->path) &&
           same_text(a->build_id, b->build_id);
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

/* One source frame of u's chain, copied; false without memory. */
static bool push_frame(unnamed_t *u, const char *function, const char *file, int line)
{
    bool ok = copy(&u->function[u->n], function);
    if (ok && !copy(&u->file[u->n], file)) {
        free(u->function[u->n]);
        ok = false;
    }
    if (ok)
        u->line[u->n++] = line;
    return ok;
}

/* The chain found before for u's place, or NULL. */
static const unnamed_t *known_chain(const unnamed_t *u)
{
    uint32_t i;
    if (!lb_u64map_get(&known.where, key_of(u), &i) || i >= known.n ||
        !same_place(&known.chains[i], u))
        return NULL;
    return &known.chains[i];
}

/* u's chain from the chains found before, copied; false when none is
 * known (or there is no memory for the copy). */
static bool recall(unnamed_t *u)
{
    const unnamed_t *c = known_chain(u);
    if (!c)
        return false;
    bool ok = true;
    for (int d = 0; ok && d < c->n; d++)
        ok = push_frame(u, c->function[d], c->file[d], c->line[d]);
    if (!ok)
        unnamed_free(u);
    return ok;
}

/* u's chain kept for later fills, marked from_file when `uncached` (read
 * from a file ahead of them: lb_frame_names_cache_ahead caches it);
 * nothing when it cannot be. */
static void remember(const unnamed_t *u, bool uncached)
{
    bool is_new;
    int32_t *slot = lb_u64map_slot(&known.where, key_of(u), &is_new);
    if (!slot || !is_new)
        return;
    if (known.n == known.cap) {
        size_t cap = known.cap ? 2 * known.cap : 64;
        unnamed_t *grown = realloc(known.chains, cap * sizeof *grown);
        if (!grown) {
            *slot = INT32_MAX; /* past known.n: a key recall finds and skips */
            return;
        }
        known.chains = grown;
        known.cap = cap;
    }
    unnamed_t *c = &known.chains[known.n];
    *c = (unnamed_t){ .offset = u->offset, .from_file = uncached };
    bool ok = copy(&c->path, u->path) && copy(&c->build_id, u->build_id);
    for (int d = 0; ok && d < u->n; d++)
        ok = push_frame(c, u->function[d], u->file[d], u->line[d]);
    if (!ok) {
        unnamed_free(c);
        free(c->path);
        free(c->build_id);
        *slot = INT32_MAX;
        return;
    }
    *slot = (int32_t)known.n++;
}

static void forget_known(void)
{
    for (size_t i = 0; i < known.n; i++) {
        unnamed_free(&known.chains[i]);
        free(known.chains[i].path);
        free(known.chains[i].build_id);
    }
    free(known.chains);
    lb_u64map_free(&known.where);
    memset(&known, 0, sizeof known);
}

/* The chain the run's database holds for u, whole (depths 0 to n - 1);
 * u->n stays 0 when it has none. */
static void read_cached(fill_t *f, unnamed_t *u)
{
    sqlite3_stmt *st = f->st[FILL_CACHED];
    if (!st)
        return;
    bind_text(st, 1, u->build_id);
    bind_text(st, 2, u->path);
    sqlite3_bind_int64(st, 3, u->offset);
    bool whole = true;
    while (whole && sqlite3_step(st) == SQLITE_ROW)
        whole = u->n <= LB_MAX_INLINE && sqlite3_column_int(st, 0) == u->n &&
                push_frame(u, (const char *)sqlite3_column_text(st, 1),
                           (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3));
    done(st, SQLITE_DONE);
    if (!whole)
        unnamed_free(u);
}

/* u's chain from its module's file; false when the file cannot be read,
 * is another build, or there is no memory. */
static bool read_file(unnamed_t *u)
{
    lb_symbol_t sym;
    if (!files)
        files = lb_module_files_open();
    if (!lb_module_files_name(files, u->path, u->build_id, (uintptr_t)u->offset, &sym))
        return false;
    bool ok = push_frame(u, sym.function, sym.file, sym.line);
    for (int d = 1; ok && d <= sym.n_inline; d++) {
        const lb_source_frame_t *s = &sym.inline_frames[sym.n_inline - d];
        ok = push_frame(u, s->function, s->file, s->line);
    }
    if (!ok)
        unnamed_free(u);
    return ok;
}

/* u's chain into a schema's symbol table through st (its LB_ROW_SYMBOL
 * statement), for later merges and later processes. */
static int cache_chain(sqlite3_stmt *st, const unnamed_t *u)
{
    int rc = SQLITE_OK;
    for (int d = 0; rc == SQLITE_OK && d < u->n; d++) {
        bind_text(st, 1, u->build_id);
        bind_text(st, 2, u->path);
        sqlite3_bind_int64(st, 3, u->offset);
        sqlite3_bind_int(st, 4, d);
        bind_text(st, 5, u->function[d]);
        bind_text(st, 6, u->file[d]);
        sqlite3_bind_int(st, 7, u->line[d]);
        rc = done(st, sqlite3_step(st));
    }
    return rc;
}

static int rename_frame(fill_t *f, sqlite3_int64 id, const char *function, const char *file,
                        int line)
{
    sqlite3_stmt *st = f->st[FILL_RENAME];
    bind_text(st, 1, function);
    bind_text(st, 2, file);
    sqlite3_bind_int(st, 3, line);
    sqlite3_bind_int64(st, 4, id);
    return done(st, sqlite3_step(st));
}

/* One statement that takes the id that replaces a frame's, then its id. */
static int replace_frame(sqlite3_stmt *st, sqlite3_int64 from, sqlite3_int64 to)
{
    sqlite3_bind_int64(st, 1, to);
    sqlite3_bind_int64(st, 2, from);
    return done(st, sqlite3_step(st));
}

/* u named. Without inlined calls its row takes the names. With them,
 * the address's frames are new rows with consecutive ids, outermost
 * first, as the exit write numbers them (the CLI finds an inlined call's
 * caller at the id before it); what named the old row (sites, threads'
 * start routines) names the innermost, and the row goes (its nodes move
 * in expand_nodes). */
static int apply(fill_t *f, unnamed_t *u)
{
    sqlite3_stmt *add = f->st[FILL_ADD_FRAME];
    if (u->n == 0)
        return rename_frame(f, u->id, NULL, NULL, 0);
    if (u->n == 1)
        return rename_frame(f, u->id, u->function[0], u->file[0], u->line[0]);
    int rc = SQLITE_OK;
    for (int d = 0; rc == SQLITE_OK && d < u->n; d++) {
        u->ids[d] = f->next_frame++;
        sqlite3_bind_int64(add, 1, u->ids[d]);
        sqlite3_bind_int64(add, 2, u->module_id);
        sqlite3_bind_int64(add, 3, u->offset);
        bind_text(add, 4, u->function[d]);
        bind_text(add, 5, u->file[d]);
        sqlite3_bind_int(add, 6, u->line[d]);
        rc = done(add, sqlite3_step(add));
    }
    sqlite3_int64 inner = u->ids[u->n - 1];
    if (rc == SQLITE_OK)
        rc = replace_frame(f->st[FILL_SITE_FRAME], u->id, inner);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(f->st[FILL_START_FRAME], 3, f->above.thread);
        rc = replace_frame(f->st[FILL_START_FRAME], u->id, inner);
    }
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(f->st[FILL_DROP_FRAME], 1, u->id);
        rc = done(f->st[FILL_DROP_FRAME], sqlite3_step(f->st[FILL_DROP_FRAME]));
    }
    return rc;
}

/* A node on a replaced frame, as the node scan found it. */
typedef struct moved {
    sqlite3_int64 node, parent;
    uint32_t which; /* its frame's index in the list */
} moved_t;

/* The nodes on the replaced frames, in one pass over the node table:
 * each becomes a chain of nodes over its address's frames, outermost
 * first, new ones over the outer frames and itself on the innermost. */
static int expand_nodes(fill_t *f, const lb_u64map_t *replaced)
{
    sqlite3_stmt *scan =
        statement(f, FILL_SCAN_NODES,
                  "SELECT id, parent_id, frame_id FROM \"%w\".node WHERE id >= ?1", f->schema);
    moved_t *moved = NULL;
    size_t n = 0, cap = 0;
    int rc = scan ? SQLITE_OK : SQLITE_NOMEM;
    if (scan)
        sqlite3_bind_int64(scan, 1, f->above.node);
    uint32_t which;
    while (rc == SQLITE_OK && sqlite3_step(scan) == SQLITE_ROW) {
        if (!lb_u64map_get(replaced, (uint64_t)sqlite3_column_int64(scan, 2), &which))
            continue;
        if (!lb_room_for((void **)&moved, &cap, n, sizeof *moved, 16)) {
            rc = SQLITE_NOMEM;
            break;
        }
        moved[n++] =
            (moved_t){ sqlite3_column_int64(scan, 0), sqlite3_column_int64(scan, 1), which };
    }
    if (scan)
        sqlite3_reset(scan);
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
        const unnamed_t *u = &f->list[moved[i].which];
        sqlite3_int64 parent = moved[i].parent;
        for (int d = 0; rc == SQLITE_OK && d < u->n - 1; d++) {
            sqlite3_int64 id = f->next_node++;
            sqlite3_bind_int64(f->st[FILL_ADD_NODE], 1, id);
            sqlite3_bind_int64(f->st[FILL_ADD_NODE], 2, parent);
            sqlite3_bind_int64(f->st[FILL_ADD_NODE], 3, u->ids[d]);
            rc = done(f->st[FILL_ADD_NODE], sqlite3_step(f->st[FILL_ADD_NODE]));
            parent = id;
        }
        sqlite3_bind_int64(f->st[FILL_MOVE_NODE], 1, parent);
        sqlite3_bind_int64(f->st[FILL_MOVE_NODE], 2, u->ids[u->n - 1]);
        sqlite3_bind_int64(f->st[FILL_MOVE_NODE], 3, moved[i].node);
        if (rc == SQLITE_OK)
            rc = done(f->st[FILL_MOVE_NODE], sqlite3_step(f->st[FILL_MOVE_NODE]));
    }
    free(moved);
    return rc;
}

/* A node as the depth count reads it. */
typedef struct depth_row {
    sqlite3_int64 id, parent, depth; /* depth -1: NULL */
    bool root;                       /* parent_id NULL */
} depth_row_t;

/* The depths of rows[0..n) from their roots' (0), into depth[]: -1 for a
 * row whose parents lead to no root (a parent missing, or a loop), as a
 * walk down from the roots would leave it. `path` has room for n. */
static void count_depths(const depth_row_t *rows, size_t n, const lb_u64map_t *index,
                         sqlite3_int64 *depth, uint32_t *path)
{
    for (size_t i = 0; i < n; i++)
        depth[i] = -2; /* not counted yet; -3: on the path being walked */
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        uint32_t at = (uint32_t)i, up;
        sqlite3_int64 base;
        for (;;) {                 /* up to a counted row or a root; path holds the rows below it */
            if (depth[at] == -3) { /* met again: a loop, each row once */
                base = -1;
                break;
            }
            if (depth[at] != -2) {
                base = depth[at];
                break;
            }
            path[len++] = at;
            depth[at] = -3;
            if (rows[at].root || !lb_u64map_get(index, (uint64_t)rows[at].parent, &up)) {
                base = depth[at] = rows[at].root ? 0 : -1; /* counted: off the path */
                len--;
                break;
            }
            at = up;
        }
        while (len > 0) { /* down again, each one below its parent */
            at = path[--len];
            depth[at] = base < 0 ? -1 : ++base;
        }
    }
}

/* Each filled node's depth from the root's, after chains were added: one scan of
 * the node table, and an update of each node whose depth changed (every
 * node's, by a recursive query, was most of a staged record's naming). */
static int recount_depths(fill_t *f)
{
    sqlite3_stmt *scan = statement(
        f, FILL_SCAN_DEPTHS,
        "SELECT id, parent_id, depth FROM \"%w\".node WHERE id >= ?1 OR id = 0", f->schema);
    sqlite3_stmt *set =
        statement(f, FILL_SET_DEPTH, "UPDATE \"%w\".node SET depth = ?1 WHERE id = ?2", f->schema);
    if (!scan || !set)
        return sqlite3_errcode(f->db) != SQLITE_OK ? sqlite3_errcode(f->db) : SQLITE_NOMEM;
    sqlite3_bind_int64(scan, 1, f->above.node);
    depth_row_t *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = SQLITE_OK, step;
    while ((step = sqlite3_step(scan)) == SQLITE_ROW) {
        if (!lb_room_for((void **)&rows, &cap, n, sizeof *rows, 256)) {
            rc = SQLITE_NOMEM;
            break;
        }
        /* (each column's type read before its value, which may convert it) */
        bool root = sqlite3_column_type(scan, 1) == SQLITE_NULL;
        bool no_depth = sqlite3_column_type(scan, 2) == SQLITE_NULL;
        rows[n++] = (depth_row_t){
            .id = sqlite3_column_int64(scan, 0),
            .parent = root ? 0 : sqlite3_column_int64(scan, 1),
            .root = root,
            .depth = no_depth ? -1 : sqlite3_column_int64(scan, 2),
        };
    }
    if (rc == SQLITE_OK && step != SQLITE_DONE)
        rc = step;
    sqlite3_reset(scan);
    lb_u64map_t index = { 0 };
    sqlite3_int64 *depth = rc == SQLITE_OK ? malloc((n ? n : 1) * sizeof *depth) : NULL;
    uint32_t *path = depth ? malloc((n ? n : 1) * sizeof *path) : NULL;
    if (rc == SQLITE_OK && (!path || lb_u64map_init(&index, n) != 0))
        rc = SQLITE_NOMEM;
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++)
        if (lb_u64map_put(&index, (uint64_t)rows[i].id, (uint32_t)i) != 0)
            rc = SQLITE_NOMEM;
    if (rc == SQLITE_OK)
        count_depths(rows, n, &index, depth, path);
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
        if (depth[i] == rows[i].depth)
            continue;
        if (depth[i] < 0)
            sqlite3_bind_null(set, 1);
        else
            sqlite3_bind_int64(set, 1, depth[i]);
        sqlite3_bind_int64(set, 2, rows[i].id);
        rc = done(set, sqlite3_step(set));
    }
    lb_u64map_free(&index);
    free(path);
    free(depth);
    free(rows);
    return rc;
}

/* The id past the largest of the schema's table (frame or node), by f's
 * statement `which`; 0 when it cannot be read. */
static sqlite3_int64 next_id(fill_t *f, enum fill_statement which, const char *table)
{
    sqlite3_stmt *st =
        statement(f, which, "SELECT coalesce(max(id), 0) + 1 FROM \"%w\".%s", f->schema, table);
    sqlite3_int64 id = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (st)
        sqlite3_reset(st);
    return id;
}

/* The schema's unnamed frames, with their modules, into f->list. */
static int list_unnamed(fill_t *f)
{
    sqlite3_stmt *st = statement(f, FILL_LIST,
                                 "SELECT f.id, f.module_id, f.offset, m.path, m.build_id"
                                 " FROM \"%w\".frame f JOIN \"%w\".module m"
                                 " ON m.id = f.module_id WHERE f.line = %d AND f.id >= ?1"
                                 " ORDER BY f.id",
                                 f->schema, f->schema, LB_ROWLOG_UNNAMED_LINE);
    size_t cap = 0;
    int rc = st ? SQLITE_OK : SQLITE_NOMEM;
    if (st)
        sqlite3_bind_int64(st, 1, f->above.frame);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        if (!lb_room_for((void **)&f->list, &cap, f->n, sizeof *f->list, 64)) {
            rc = SQLITE_NOMEM;
            break;
        }
        unnamed_t *u = &f->list[f->n];
        *u = (unnamed_t){ .id = sqlite3_column_int64(st, 0),
                          .module_id = sqlite3_column_int64(st, 1),
                          .offset = sqlite3_column_int64(st, 2) };
        f->n++;
        if (!copy(&u->path, (const char *)sqlite3_column_text(st, 3)) ||
            !copy(&u->build_id, (const char *)sqlite3_column_text(st, 4)))
            rc = SQLITE_NOMEM;
    }
    if (st)
        sqlite3_reset(st);
    return rc;
}

/* The chains of the listed frames: from the run's cache, else from their
 * files (cached by write_names, or by lb_frame_names_cache_ahead for
 * those read ahead). */
static void read_chains(fill_t *f, const char *names)
{
    if (names)
        statement(f, FILL_CACHED,
                  "SELECT depth, function, file, line FROM \"%w\".symbol"
                  " WHERE build_id = ?1 AND path = ?2 AND offset = ?3 ORDER BY depth",
                  names);
    /* The run's cache in one read transaction: a statement of its own
     * each would lock and unlock the file and read its first page again
     * (four fcntl calls, a stat for a hot journal and a pread a frame:
     * most of what `lockblame run` spent adding a make tree's records).
     * The files are read after it, with no lock held while libdw reads
     * a module. */
    bool own_read = f->st[FILL_CACHED] && sqlite3_get_autocommit(f->db);
    if (own_read && lb_db_run_kept(f->db, &f->st[FILL_BEGIN], "BEGIN") != SQLITE_OK)
        own_read = false; /* each read its own transaction, as without it */
    for (size_t i = 0; i < f->n; i++)
        if (!recall(&f->list[i])) {
            read_cached(f, &f->list[i]);
            if (f->list[i].n)
                remember(&f->list[i], false);
        }
    if (own_read)
        lb_db_run_kept(f->db, &f->st[FILL_COMMIT], "COMMIT");
    for (size_t i = 0; i < f->n; i++) {
        unnamed_t *u = &f->list[i];
        if (u->n == 0 && read_file(u)) {
            u->from_file = true;
            remember(u, f->ahead);
        }
    }
}

/* The chains read from files cached, and the listed frames named and
 * their nodes expanded, in the schema. */
static int write_names(fill_t *f)
{
    sqlite3 *db = f->db;
    const char *s = f->schema;
    if (!f->st[FILL_CACHE] && !(f->st[FILL_CACHE] = lb_row_prepare(db, LB_ROW_SYMBOL, s)))
        return SQLITE_NOMEM;
    for (size_t i = 0; i < f->n; i++) {
        int rc = f->list[i].from_file ? cache_chain(f->st[FILL_CACHE], &f->list[i]) : SQLITE_OK;
        if (rc != SQLITE_OK)
            return rc;
    }
    static const struct {
        enum fill_statement which;
        const char *sql; /* on schema s */
    } updates[] = {
        { FILL_RENAME,
          "UPDATE \"%w\".frame SET function = ?1, file = ?2, line = ?3 WHERE id = ?4" },
        { FILL_DROP_FRAME, "DELETE FROM \"%w\".frame WHERE id = ?1" },
        { FILL_ADD_NODE, "INSERT INTO \"%w\".node VALUES(?1, ?2, ?3, 0)" },
        { FILL_MOVE_NODE, "UPDATE \"%w\".node SET parent_id = ?1, frame_id = ?2 WHERE id = ?3" },
        { FILL_SITE_FRAME, "UPDATE \"%w\".site SET frame_id = ?1 WHERE frame_id = ?2" },
        { FILL_START_FRAME,
          "UPDATE \"%w\".thread SET start_frame_id = ?1 WHERE start_frame_id = ?2 AND id >= ?3" },
    };
    bool ready = true;
    for (size_t i = 0; i < sizeof updates / sizeof *updates; i++)
        ready = statement(f, updates[i].which, updates[i].sql, s) != NULL && ready;
    if (!f->st[FILL_ADD_FRAME])
        f->st[FILL_ADD_FRAME] = lb_row_prepare(db, LB_ROW_FRAME, s);
    f->next_frame = next_id(f, FILL_NEXT_FRAME, "frame");
    f->next_node = next_id(f, FILL_NEXT_NODE, "node");
    if (!ready || !f->st[FILL_ADD_FRAME] || !f->next_frame || !f->next_node)
        return SQLITE_NOMEM;
    lb_u64map_t replaced = { 0 };
    int rc = lb_u64map_init(&replaced, 16) == 0 ? SQLITE_OK : SQLITE_NOMEM;
    for (size_t i = 0; rc == SQLITE_OK && i < f->n; i++) {
        rc = apply(f, &f->list[i]);
        if (rc == SQLITE_OK && f->list[i].n > 1 &&
            lb_u64map_put(&replaced, (uint64_t)f->list[i].id, (uint32_t)i) != 0)
            rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK && replaced.used > 0) {
        rc = expand_nodes(f, &replaced);
        if (rc == SQLITE_OK)
            rc = recount_depths(f);
    }
    lb_u64map_free(&replaced);
    return rc;
}

/* A fill's list freed, and its own statements (those of no cache). */
static void fill_end(fill_t *f, lb_frame_names_cache_t *own)
{
    for (size_t i = 0; i < f->n; i++) {
        unnamed_free(&f->list[i]);
        free(f->list[i].path);
        free(f->list[i].build_id);
    }
    free(f->list);
    lb_frame_names_cache_free(own);
}

int lb_frame_names_fill(sqlite3 *db, const char *schema, const char *names)
{
    return lb_frame_names_fill_with(db, schema, names, NULL, NULL);
}

int lb_frame_names_fill_with(sqlite3 *db, const char *schema, const char *names,
                             lb_frame_names_cache_t *cache, const lb_db_shifts_t *above)
{
    lb_frame_names_cache_t own = { 0 };
    fill_t f = { .db = db, .schema = schema, .st = (cache ? cache : &own)->st };
    if (above)
        f.above = *above;
    int rc = list_unnamed(&f);
    if (rc == SQLITE_OK && f.n)
        read_chains(&f, names);
    if (rc == SQLITE_OK && f.n) {
        /* Inside the caller's transaction a failure (a full disk, memory)
         * is left as it is, its error the connection's: the caller rolls
         * back (a savepoint's end would clear the error). */
        bool inside = !sqlite3_get_autocommit(db);
        rc = lb_db_run_kept(db, &f.st[FILL_SAVEPOINT], "SAVEPOINT frame_names");
        if (rc == SQLITE_OK) {
            rc = write_names(&f);
            if (rc != SQLITE_OK && !inside && !sqlite3_get_autocommit(db))
                lb_db_run_kept(db, &f.st[FILL_ROLLBACK], "ROLLBACK TO frame_names");
            if ((rc == SQLITE_OK || !inside) && !sqlite3_get_autocommit(db))
                lb_db_run_kept(db, &f.st[FILL_RELEASE], "RELEASE frame_names");
        }
    }
    fill_end(&f, &own);
    return rc;
}

void lb_frame_names_ahead(sqlite3 *db, const char *names, const lb_frame_names_address_t *at,
                          size_t n, lb_frame_names_cache_t *cache)
{
    lb_frame_names_cache_t own = { 0 };
    fill_t f = { .db = db, .st = (cache ? cache : &own)->st, .ahead = true };
    f.list = calloc(n ? n : 1, sizeof *f.list);
    for (size_t i = 0; f.list && i < n; i++) {
        unnamed_t *u = &f.list[f.n];
        *u = (unnamed_t){ .offset = at[i].offset };
        if (copy(&u->path, at[i].path) && copy(&u->build_id, at[i].build_id))
            f.n++;
        else
            free(u->path);
    }
    if (f.n)
        read_chains(&f, names);
    fill_end(&f, &own);
}

bool lb_frame_names_single(const char *path, const char *build_id, sqlite3_int64 offset,
                           const char **function, const char **file, int *line)
{
    const unnamed_t probe = { .offset = offset,
                              .path = (char *)path,
                              .build_id = (char *)build_id };
    const unnamed_t *c = known_chain(&probe);
    if (!c || c->n != 1)
        return false;
    *function = c->function[0];
    *file = c->file[0];
    *line = c->line[0];
    return true;
}

int lb_frame_names_cache_ahead(sqlite3 *db, const char *schema)
{
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < known.n; i++) {
        unnamed_t *c = &known.chains[i];
        if (!c->from_file)
            continue;
        if (!st && !(st = lb_row_prepare(db, LB_ROW_SYMBOL, schema)))
            rc = sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
        if (rc == SQLITE_OK && (rc = cache_chain(st, c)) == SQLITE_OK)
            c->from_file = false;
    }
    sqlite3_finalize(st);
    return rc;
}

void lb_frame_names_cache_free(lb_frame_names_cache_t *cache)
{
    for (int i = 0; i < LB_FRAME_NAMES_STATEMENTS; i++)
        sqlite3_finalize(cache->st[i]);
    memset(cache, 0, sizeof *cache);
}

void lb_frame_names_keep(bool keep)
{
    keep_all = false;
    if (!keep)
        lb_frame_names_release();
    keep_all = keep;
}

void lb_frame_names_release(void)
{
    if (keep_all)
        return;
    lb_module_files_close(files);
    files = NULL;
    forget_known();
}
