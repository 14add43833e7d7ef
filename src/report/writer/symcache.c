/* See symcache.h. Each module's cached chains are read in one query at
 * the module's first lookup, into a map from (offset << 4 | depth) to an
 * entry; (offset << 4 | 15) holds the chain's length. Depth 0 is the
 * real function, depth d >= 1 the d-th inlined call from the outside in,
 * the order in which the writer inserts a chain's frames.
 *
 * A module's function table is one blob (module_function.functions):
 * a uint64_t count n, then n entries {uint64_t lo, size, name}, lo
 * relative to the module's start and name the offset of its NUL-ended
 * text after the entries, in the index's order (symindex.h). It is
 * searched in place, through SQLite's incremental blob reads: a binary
 * search over the entries, then the few entries that start where the
 * address's symbol does, searched as the index is (lb_symentries_find),
 * then the one name. A table is hundreds of KB to MBs (libc's ~270 KB,
 * cc1's ~1.9 MB), and each compiler of a make tree names a hundred or so
 * cc1 addresses no earlier process held: reading the table whole was most
 * of such a process's write. The blob is opened for one lookup at a time,
 * so that the run's database is locked only while it is searched, and
 * the connection maps the file (mmap_size) so that the search touches the
 * pages it needs instead of copying them. An address named from the table
 * is also kept as a chain of its own (depth 0, no file), so that a later
 * process reads one row. */
#include "report/writer/symcache.h"

#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/marker_frames.h"
#include "common/rowlog.h"
#include "common/schema.h"
#include "common/u64map.h"
#include "core/retired_modules.h"
#include "report/writer/exe_alias.h"
#include "report/writer/modmap.h"
#include "report/writer/output.h"
#include "report/writer/profile_db.h"
#include "common/symindex.h"
#include "report/writer/writer_int.h"
#include "util/clock.h"

#define LB_CHAIN_LENGTH_SLOT 15
#define LB_CACHE_WAIT_NS     (200 * 1000000ull) /* the longest wait for the run's database */
#define LB_CACHE_MMAP_BYTES  (1ll << 30)        /* how much of it the read connection maps */

typedef struct cached_name {
    char *function, *file;
    int line;
} cached_name_t;

typedef struct cached_module {
    bool loaded;
    lb_u64map_t names;           /* (offset << 4 | depth) -> index in names */
    bool functions_read;         /* its function table was looked for in the run's database */
    sqlite3_int64 functions_row; /* that table's rowid in module_function; 0 if none */
    uint64_t n_functions;        /* its entries */
    size_t functions_size;       /* its bytes */
    bool exported;               /* this process put its function table in its profile */
    bool warm;                   /* loaded by a forking parent: a missing address is looked for */
    unsigned char *functions;    /* the table itself, as a forking parent read it (or NULL) */
} cached_module_t;

struct lb_symcache {
    lb_modmap_t map;
    cached_module_t *modules; /* one per map entry */
    cached_name_t *names;
    uint32_t n_names, cap_names;
    sqlite3 *profile;        /* the profile's connection */
    bool attached;           /* the run's database is attached to it as "out" */
    const char *schema;      /* the run's database's schema name in run_db */
    sqlite3 *run_db;         /* profile, or its own read-only connection; NULL before the first
                              * lookup */
    sqlite3_stmt *query;     /* one module's chains in run_db */
    sqlite3_stmt *query_one; /* one address's chain in run_db */
    sqlite3_stmt *functions; /* where one module's function table is in run_db */
    bool run_db_tried;       /* no second try after a failed open */
    uint64_t deadline;       /* for run_db's busy handler */
    struct lb_wstmt *insert; /* into the profile's symbol table */
    struct lb_wstmt *insert_functions; /* into the profile's module_function table */
    bool added_names, added_functions; /* a row tried in either table */
    bool resolved; /* a name resolved in this process, or a function table exported */
    unsigned long long objects[2]; /* the loader's adds and removals when map was read */
};

/* A cache with this process's modules and nothing read. */
static lb_symcache_t *new_cache(void)
{
    lb_symcache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->schema = "main"; /* the run's database on a read connection of the cache's own */
    lb_modmap_loader_counts(c->objects);
    if (lb_modmap_read(&c->map) && c->map.count)
        c->modules = calloc(c->map.count, sizeof *c->modules);
    return c;
}

lb_symcache_t *lb_symcache_open(sqlite3 *profile, bool attached, lb_symcache_t *warm,
                                struct lb_wstmt *insert, struct lb_wstmt *insert_functions)
{
    lb_symcache_t *c = NULL;
    if (warm) {
        /* the parent's modules are this process's while the loader has
         * loaded and unloaded nothing since it read them */
        unsigned long long now[2];
        lb_modmap_loader_counts(now);
        if (!attached && now[0] == warm->objects[0] && now[1] == warm->objects[1])
            c = warm;
        else
            lb_symcache_close(warm);
    }
    if (!c && !(c = new_cache()))
        return NULL;
    c->profile = profile;
    c->attached = attached;
    c->schema = attached ? "out" : "main";
    c->insert = insert;
    c->insert_functions = insert_functions;
    return c;
}

/* The run's database, when it already holds this run's profiles in this
 * schema (attached to the profile's connection, else opened read only);
 * false otherwise (nothing to read). */
static bool open_run_db(lb_symcache_t *c)
{
    if (c->run_db_tried)
        return c->query != NULL;
    c->run_db_tried = true;
    if (c->attached)
        c->run_db = c->profile;
    else if (sqlite3_open_v2(lb_output_path(), &c->run_db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return false;
    /* a process committing holds the file for milliseconds: wait for it
     * in short steps, and not long (a name not read is resolved here) */
    c->deadline = lb_monotonic_ns() + LB_CACHE_WAIT_NS;
    sqlite3_busy_handler(c->run_db, lb_output_busy, &c->deadline);
    if (lb_db_version(c->run_db, c->schema) != LB_SCHEMA_VERSION)
        return false;
    char *mmap_size =
        sqlite3_mprintf("PRAGMA \"%w\".mmap_size=%lld", c->schema, LB_CACHE_MMAP_BYTES);
    if (mmap_size) /* failing, it copies pages */
        sqlite3_exec(c->run_db, mmap_size, NULL, NULL, NULL);
    sqlite3_free(mmap_size);
    /* another run's rows: this write empties the file (output.c), and a
     * chain is only known to be right for the run that wrote it */
    bool other_run = lb_db_other_run(c->run_db, c->schema, lb_output_run_key(), 0) != 0;
    if (other_run)
        return false;
    char *functions = sqlite3_mprintf("SELECT rowid, length(functions) FROM \"%w\".module_function"
                                      " WHERE build_id = ?1 AND path = ?2"
                                      " AND typeof(functions) = 'blob'",
                                      c->schema);
    char *chains = sqlite3_mprintf("SELECT offset, depth, function, file, line FROM \"%w\".symbol"
                                   " WHERE build_id = ?1 AND path = ?2",
                                   c->schema);
    char *chain = chains ? sqlite3_mprintf("%s AND offset = ?3", chains) : NULL;
    if (!functions || !chain ||
        sqlite3_prepare_v2(c->run_db, functions, -1, &c->functions, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->run_db, chain, -1, &c->query_one, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->run_db, chains, -1, &c->query, NULL) != SQLITE_OK) {
        sqlite3_finalize(c->functions);
        sqlite3_finalize(c->query_one);
        c->functions = c->query_one = NULL;
        c->query = NULL;
    }
    sqlite3_free(functions);
    sqlite3_free(chains);
    sqlite3_free(chain);
    return c->query != NULL;
}

static void bind_module(sqlite3_stmt *st, const lb_modmap_entry_t *mod)
{
    sqlite3_bind_text(st, 1, mod->build_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, mod->path, -1, SQLITE_STATIC);
}

static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static char *copy_column(sqlite3_stmt *st, int col)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    return text ? strdup(text) : NULL;
}

/* A new entry of c->names, which live until lb_symcache_close; NULL
 * without memory. */
static cached_name_t *push_name(lb_symcache_t *c)
{
    if (c->n_names == c->cap_names) {
        uint32_t n = c->cap_names ? c->cap_names * 2 : 256;
        cached_name_t *names = realloc(c->names, n * sizeof *names);
        if (!names)
            return NULL;
        c->names = names;
        c->cap_names = n;
    }
    return &c->names[c->n_names];
}

/* The chains a query of the run's database returns, into the module's
 * map. */
static void read_chains(lb_symcache_t *c, sqlite3_stmt *st, cached_module_t *cm)
{
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t offset = (uint64_t)sqlite3_column_int64(st, 0);
        int depth = sqlite3_column_int(st, 1);
        if (depth < 0 || depth > LB_MAX_INLINE || offset >> 59)
            continue;
        cached_name_t *name = push_name(c);
        if (!name)
            break;
        *name =
            (cached_name_t){ copy_column(st, 2), copy_column(st, 3), sqlite3_column_int(st, 4) };
        uint64_t key = offset << 4;
        uint32_t length = 0;
        lb_u64map_get(&cm->names, key | LB_CHAIN_LENGTH_SLOT, &length);
        if (lb_u64map_put(&cm->names, key | (uint64_t)depth, c->n_names) != 0 ||
            lb_u64map_put(&cm->names, key | LB_CHAIN_LENGTH_SLOT,
                          length > (uint32_t)depth ? length : (uint32_t)depth + 1) != 0) {
            free(name->function);
            free(name->file);
            break;
        }
        c->n_names++;
    }
    done(st);
}

/* Reads one module's chains from the run's database (once). */
static void load_module(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm)
{
    cm->loaded = true;
    if (!open_run_db(c))
        return;
    bind_module(c->query, mod);
    read_chains(c, c->query, cm);
}

/* Reads the chain of one address of a module whose chains a forking
 * parent read: the run may have named it since. */
static void load_offset(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm,
                        uint64_t offset)
{
    if (!open_run_db(c))
        return;
    bind_module(c->query_one, mod);
    sqlite3_bind_int64(c->query_one, 3, (sqlite3_int64)offset);
    read_chains(c, c->query_one, cm);
}

/* Where one module's function table is in the run's database (looked
 * for once); false when it is not there or is damaged. */
static bool find_functions(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm)
{
    if (cm->functions_read)
        return cm->functions_row != 0;
    cm->functions_read = true;
    if (!open_run_db(c))
        return false;
    bind_module(c->functions, mod);
    sqlite3_int64 row = 0, size = 0;
    if (sqlite3_step(c->functions) == SQLITE_ROW) {
        row = sqlite3_column_int64(c->functions, 0);
        size = sqlite3_column_int64(c->functions, 1);
    }
    done(c->functions);
    sqlite3_blob *blob = NULL;
    uint64_t n = 0;
    char last = 1;
    if (row == 0 || size < (sqlite3_int64)sizeof n || size > INT32_MAX ||
        sqlite3_blob_open(c->run_db, c->schema, "module_function", "functions", row, 0, &blob) !=
            SQLITE_OK ||
        !blob || sqlite3_blob_read(blob, &n, sizeof n, 0) != SQLITE_OK ||
        sqlite3_blob_read(blob, &last, 1, (int)size - 1) != SQLITE_OK)
        n = 0;
    sqlite3_blob_close(blob);
    size_t names_at = sizeof n + (size_t)n * 3 * sizeof(uint64_t);
    if (n > 0 && n < ((size_t)1 << 32) && names_at < (size_t)size && last == '\0') {
        cm->functions_row = row;
        cm->n_functions = n;
        cm->functions_size = (size_t)size;
    }
    return cm->functions_row != 0;
}

/* The module's function table in the run's database, when it still has
 * the size it was found with (NULL otherwise). */
static sqlite3_blob *open_functions(lb_symcache_t *c, const cached_module_t *cm)
{
    sqlite3_blob *blob = NULL;
    if (sqlite3_blob_open(c->run_db, c->schema, "module_function", "functions", cm->functions_row,
                          0, &blob) != SQLITE_OK ||
        !blob || sqlite3_blob_bytes(blob) != (int)cm->functions_size) {
        sqlite3_blob_close(blob);
        return NULL;
    }
    return blob;
}

/* A function table being searched: open as a blob of the run's
 * database, or in memory. */
typedef struct table_reader {
    sqlite3_blob *blob;
    const unsigned char *memory;
    size_t size;
} table_reader_t;

static bool read_at(const table_reader_t *r, void *to, size_t n, size_t at)
{
    if (at > r->size || n > r->size - at)
        return false;
    if (r->memory) {
        memcpy(to, r->memory + at, n);
        return true;
    }
    return sqlite3_blob_read(r->blob, to, (int)n, (int)at) == SQLITE_OK;
}

/* Entries i .. i + count - 1 of the table, {lo, size, name offset} each. */
static bool read_entries(const table_reader_t *r, uint64_t i, uint64_t count, uint64_t *e)
{
    return read_at(r, e, count * 3 * sizeof *e, sizeof(uint64_t) + i * 3 * sizeof *e);
}

/* The NUL-ended text at `at` in the table (its last byte is NUL). */
static char *read_name(const table_reader_t *r, size_t at)
{
    char *name = NULL;
    size_t len = 0;
    for (;;) {
        size_t chunk = r->size - at < 256 ? r->size - at : 256;
        char *grown = realloc(name, len + chunk);
        if (!grown || !read_at(r, grown + len, chunk, at)) {
            free(grown ? grown : name);
            return NULL;
        }
        name = grown;
        char *nul = memchr(name + len, '\0', chunk);
        if (nul)
            return name;
        len += chunk;
        at += chunk;
    }
}

/* The function of the table r holding offset pc, pushed to c's names
 * (*function NULL: none holds it); false when the table cannot be read. */
static bool search_table(lb_symcache_t *c, const table_reader_t *r, uint64_t n, uintptr_t pc,
                         const char **function)
{
    /* a: the first entry past pc; the entries from the first at a - 1's
     * start up to a are all lb_symentries_find looks at */
    uint64_t a = 0, b = n, e[3];
    bool ok = true;
    while (ok && a < b) {
        uint64_t mid = a + (b - a) / 2;
        if (!(ok = read_entries(r, mid, 1, e)))
            break;
        if (e[0] <= pc)
            a = mid + 1;
        else
            b = mid;
    }
    uint64_t at = a;
    for (uint64_t lo = 0; ok && at > 0; at--) {
        if (!(ok = read_entries(r, at - 1, 1, e)) || (at < a && e[0] != lo))
            break;
        lo = e[0];
    }
    uint64_t count = (a < n ? a + 1 : n) - at;
    uint64_t *raw = count ? malloc(count * sizeof e) : NULL;
    lb_symentry_t *near = count ? malloc(count * sizeof *near) : NULL;
    char *which = count ? malloc(count) : NULL; /* near[i].name is which + i */
    *function = NULL;
    if (ok && count && raw && near && which && read_entries(r, at, count, raw)) {
        for (uint64_t i = 0; i < count; i++)
            near[i] =
                (lb_symentry_t){ (uintptr_t)raw[3 * i], (uintptr_t)raw[3 * i + 1], which + i, 0 };
        const char *hit;
        uintptr_t lo, hi;
        size_t names_at = sizeof n + (size_t)n * 3 * sizeof(uint64_t);
        cached_name_t *name = push_name(c);
        if (lb_symentries_find(near, count, pc, &hit, &lo, &hi) == LB_SYMINDEX_HIT && name) {
            uint64_t offset = raw[3 * (size_t)(hit - which) + 2];
            if (offset >= r->size - names_at)
                offset = r->size - names_at - 1; /* damaged: the empty last name */
            *name = (cached_name_t){ read_name(r, names_at + offset), NULL, 0 };
            ok = name->function != NULL;
            if (ok)
                c->n_names++;
            *function = name->function;
        }
    } else if (count) {
        ok = false;
    }
    free(raw);
    free(near);
    free(which);
    return ok;
}

/* The function of the module's table holding offset pc: in the copy a
 * forking parent read, or in the run's database. */
static bool search_functions(lb_symcache_t *c, cached_module_t *cm, uintptr_t pc,
                             const char **function)
{
    if (cm->functions) {
        table_reader_t r = { .memory = cm->functions, .size = cm->functions_size };
        return search_table(c, &r, cm->n_functions, pc, function);
    }
    /* Each search is a transaction of its own: between two, another run's
     * commit may have emptied the file (output.c) and given the rowid to
     * another module's table, which its size and count tell apart; a table
     * that is not the one found is not searched (the caller resolves). */
    uint64_t n = 0;
    sqlite3_blob *blob = c->run_db ? open_functions(c, cm) : NULL;
    bool ok = blob && sqlite3_blob_read(blob, &n, sizeof n, 0) == SQLITE_OK && n == cm->n_functions;
    if (ok) {
        table_reader_t r = { .blob = blob, .size = cm->functions_size };
        ok = search_table(c, &r, n, pc, function);
    }
    sqlite3_blob_close(blob);
    return ok;
}

/* A row of the module's key (symbol, module_function): its build id and
 * path. */
static void key_module(lb_wstmt_t *st, const lb_modmap_entry_t *mod)
{
    lb_wbind_text(st, 1, mod->build_id);
    lb_wbind_text(st, 2, mod->path);
}

static void insert_name(lb_symcache_t *c, const lb_modmap_entry_t *mod, uintptr_t pc, int depth,
                        const char *function, const char *file, int line)
{
    lb_wstmt_t *st = c->insert;
    key_module(st, mod);
    lb_wbind_int(st, 3, (int64_t)(pc - mod->low));
    lb_wbind_int(st, 4, depth);
    lb_wbind_text(st, 5, function);
    lb_wbind_text(st, 6, file);
    lb_wbind_int(st, 7, line);
    c->added_names = true;
    lb_wstep(st);
}

/* The module of pc that may be cached, or NULL. */
static const lb_modmap_entry_t *cacheable_module(lb_symcache_t *c, uintptr_t pc)
{
    if (!c || !c->modules || lb_marker_frame_pc(pc) || lb_retired_contains(pc))
        return NULL;
    const lb_modmap_entry_t *mod = lb_modmap_find(&c->map, pc);
    return mod && mod->build_id[0] ? mod : NULL;
}

/* pc's chain among the module's names read so far; false when there is
 * none there. */
static bool find_chain(const lb_symcache_t *c, const lb_modmap_entry_t *mod,
                       const cached_module_t *cm, uintptr_t pc, lb_symbol_t *out)
{
    uint64_t key = (uint64_t)(pc - mod->low) << 4;
    uint32_t length, at[LB_MAX_INLINE + 1];
    if (!lb_u64map_get(&cm->names, key | LB_CHAIN_LENGTH_SLOT, &length) || length == 0 ||
        length > LB_MAX_INLINE + 1)
        return false;
    for (uint32_t d = 0; d < length; d++)
        if (!lb_u64map_get(&cm->names, key | d, &at[d]))
            return false; /* a chain cut short: resolve it again */
    *out = (lb_symbol_t){ .module = lb_exe_alias(mod->path),
                          .base = mod->low,
                          .function = c->names[at[0]].function,
                          .file = c->names[at[0]].file,
                          .line = c->names[at[0]].line,
                          .n_inline = (int)length - 1 };
    for (uint32_t d = 1; d < length; d++) {
        const cached_name_t *n = &c->names[at[d]];
        out->inline_frames[length - 1 - d] = (lb_source_frame_t){ n->function, n->file, n->line };
    }
    return true;
}

bool lb_symcache_find(lb_symcache_t *c, uintptr_t pc, lb_symbol_t *out)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    if (!mod)
        return false;
    cached_module_t *cm = &c->modules[mod - c->map.modules];
    if (!cm->loaded)
        load_module(c, mod, cm);
    if (find_chain(c, mod, cm, pc, out))
        return true;
    if (cm->warm) { /* read by the parent: the run may have named it since */
        load_offset(c, mod, cm, pc - mod->low);
        if (find_chain(c, mod, cm, pc, out))
            return true;
    }
    /* a module named by its function symbols alone (lb_symbol_functions) */
    const char *function;
    if (!find_functions(c, mod, cm) || !search_functions(c, cm, pc - mod->low, &function))
        return false;
    /* kept as a chain of its own, so that the next process naming this
     * address reads one row, not the module's whole table */
    if (c->insert)
        insert_name(c, mod, pc, 0, function, NULL, 0);
    *out =
        (lb_symbol_t){ .module = lb_exe_alias(mod->path), .base = mod->low, .function = function };
    return true;
}

const lb_modmap_t *lb_symcache_modules(const lb_symcache_t *c)
{
    return c ? &c->map : NULL;
}

void lb_symcache_offline(lb_symcache_t *c)
{
    if (c)
        c->run_db_tried = true; /* open_run_db: nothing to read */
}

bool lb_symcache_unnamed(lb_symcache_t *c, uintptr_t pc, lb_symbol_t *out)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    if (!mod || mod->path[0] != '/') /* the vDSO: no file to read later */
        return false;
    *out = (lb_symbol_t){ .module = lb_exe_alias(mod->path),
                          .base = mod->low,
                          .line = LB_ROWLOG_UNNAMED_LINE };
    return true;
}

/* Limits what a forking parent copies of one module's function table. */
#define LB_WARM_TABLE_MAX (16u << 20)

/* The module's function table copied into memory, if the run's database
 * holds one; else looked for again by the write that needs it. */
static void copy_functions(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm)
{
    if (!find_functions(c, mod, cm)) {
        cm->functions_read = false; /* a later process may add it */
        return;
    }
    unsigned char *copy =
        cm->functions_size <= LB_WARM_TABLE_MAX ? malloc(cm->functions_size) : NULL;
    sqlite3_blob *blob = copy ? open_functions(c, cm) : NULL;
    if (blob && sqlite3_blob_read(blob, copy, (int)cm->functions_size, 0) == SQLITE_OK) {
        cm->functions = copy;
        copy = NULL;
    }
    sqlite3_blob_close(blob);
    free(copy);
}

lb_symcache_t *lb_symcache_modules_only(void)
{
    lb_symcache_t *c = new_cache();
    if (c && !c->modules) {
        lb_symcache_close(c);
        return NULL;
    }
    return c;
}

lb_symcache_t *lb_symcache_preload(void)
{
    lb_symcache_t *c = new_cache();
    if (!c || !c->modules) {
        lb_symcache_close(c);
        return NULL;
    }
    for (uint32_t i = 0; i < c->map.count; i++) {
        if (!c->map.modules[i].build_id[0])
            continue;
        load_module(c, &c->map.modules[i], &c->modules[i]);
        copy_functions(c, &c->map.modules[i], &c->modules[i]);
        c->modules[i].warm = true;
    }
    /* no connection is handed on: a child opens its own at a miss */
    sqlite3_finalize(c->query);
    sqlite3_finalize(c->query_one);
    sqlite3_finalize(c->functions);
    sqlite3_close(c->run_db);
    c->query = c->query_one = c->functions = NULL;
    c->run_db = NULL;
    c->run_db_tried = false;
    bool any = c->n_names > 0;
    for (uint32_t i = 0; i < c->map.count; i++)
        any = any || c->modules[i].functions;
    if (!any) {
        lb_symcache_close(c);
        return NULL;
    }
    return c;
}

/* A function table being packed: entries, then names. */
typedef struct packer {
    uint64_t *entries; /* 3 a function */
    char *names;
    size_t n, cap, names_len, names_cap;
    bool failed;
} packer_t;

static bool grow(void **p, size_t *cap, size_t need, size_t unit)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * unit);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static void pack_function(void *ctx, uintptr_t offset, uintptr_t size, const char *name)
{
    packer_t *p = ctx;
    size_t len = strlen(name) + 1;
    if (p->failed || !grow((void **)&p->entries, &p->cap, 3 * (p->n + 1), sizeof *p->entries) ||
        !grow((void **)&p->names, &p->names_cap, p->names_len + len, 1)) {
        p->failed = true;
        return;
    }
    p->entries[3 * p->n] = offset;
    p->entries[3 * p->n + 1] = size;
    p->entries[3 * p->n + 2] = p->names_len;
    memcpy(p->names + p->names_len, name, len);
    p->names_len += len;
    p->n++;
}

/* mod's function table into the profile, when its names come from its
 * function symbols alone. */
static void export_functions(lb_symcache_t *c, lb_symbolizer_t *s, const lb_modmap_entry_t *mod,
                             uintptr_t pc)
{
    packer_t p = { 0 };
    /* (false also when a symbol lay below the module: the table would be
     * incomplete) */
    if (lb_symbol_functions(s, pc, pack_function, &p) && !p.failed && p.n) {
        uint64_t n = p.n;
        size_t entries = 3 * p.n * sizeof *p.entries;
        size_t size = sizeof n + entries + p.names_len;
        unsigned char *blob = malloc(size);
        if (blob) {
            memcpy(blob, &n, sizeof n);
            memcpy(blob + sizeof n, p.entries, entries);
            memcpy(blob + sizeof n + entries, p.names, p.names_len);
            key_module(c->insert_functions, mod);
            lb_wbind_blob(c->insert_functions, 3, blob, size);
            c->added_functions = c->resolved = true;
            lb_wstep(c->insert_functions);
            free(blob);
        }
    }
    free(p.entries);
    free(p.names);
}

void lb_symcache_add(lb_symcache_t *c, lb_symbolizer_t *s, uintptr_t pc, const lb_symbol_t *sym)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    if (!mod || !c->insert || !sym->module || sym->base != mod->low ||
        strcmp(sym->module, lb_exe_alias(mod->path)) != 0 || sym->n_inline < 0 ||
        sym->n_inline > LB_MAX_INLINE)
        return;
    c->resolved = true;
    insert_name(c, mod, pc, 0, sym->function, sym->file, sym->line);
    for (int d = 1; d <= sym->n_inline; d++) {
        const lb_source_frame_t *f = &sym->inline_frames[sym->n_inline - d];
        insert_name(c, mod, pc, d, f->function, f->file, f->line);
    }
    /* a module named by its function symbols alone: its whole table, once
     * per run, so that later processes name any address in it */
    cached_module_t *cm = &c->modules[mod - c->map.modules];
    if (c->insert_functions && !cm->exported && !cm->functions_row) {
        cm->exported = true;
        export_functions(c, s, mod, pc);
    }
}

bool lb_symcache_added_names(const lb_symcache_t *c)
{
    return c && c->added_names;
}

bool lb_symcache_resolved(const lb_symcache_t *c)
{
    return c && c->resolved;
}

bool lb_symcache_added_functions(const lb_symcache_t *c)
{
    return c && c->added_functions;
}

bool lb_symcache_build_id(lb_symcache_t *c, uintptr_t pc, uintptr_t base, char *hex, size_t size)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    hex[0] = '\0';
    if (!mod || mod->low != base || strlen(mod->build_id) + 1 > size)
        return false;
    memcpy(hex, mod->build_id, strlen(mod->build_id) + 1);
    return true;
}

void lb_symcache_close(lb_symcache_t *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->query);
    sqlite3_finalize(c->query_one);
    sqlite3_finalize(c->functions);
    if (c->run_db && !c->attached)
        sqlite3_close(c->run_db);
    for (uint32_t i = 0; c->modules && i < c->map.count; i++) {
        lb_u64map_free(&c->modules[i].names);
        free(c->modules[i].functions);
    }
    for (uint32_t i = 0; i < c->n_names; i++) {
        free(c->names[i].function);
        free(c->names[i].file);
    }
    free(c->names);
    free(c->modules);
    lb_modmap_free(&c->map);
    free(c);
}
