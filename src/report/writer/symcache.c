/* See symcache.h. Each module's cached chains are read in one query at
 * the module's first lookup, into a map from (offset << 4 | depth) to an
 * entry; (offset << 4 | 15) holds the chain's length. Depth 0 is the
 * real function, depth d >= 1 the d-th inlined call from the outside in,
 * the order in which the writer inserts a chain's frames. */
#include "report/writer/symcache.h"

#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/marker_frames.h"
#include "common/schema.h"
#include "common/u64map.h"
#include "core/retired_modules.h"
#include "report/writer/exe_alias.h"
#include "report/writer/modmap.h"
#include "report/writer/output.h"

#define LB_CHAIN_LENGTH_SLOT 15

typedef struct cached_name {
    char *function, *file;
    int line;
} cached_name_t;

typedef struct cached_module {
    bool loaded;
    lb_u64map_t names; /* (offset << 4 | depth) -> index in names */
    int tabled;        /* its functions are in the run's database: -1 not asked yet, 0, 1 */
    bool exported;     /* this process put its functions in its profile */
} cached_module_t;

struct lb_symcache {
    lb_modmap_t map;
    cached_module_t *modules; /* one per map entry */
    cached_name_t *names;
    uint32_t n_names, cap_names;
    sqlite3 *run_db;     /* the run's database, read only; NULL before the first lookup */
    sqlite3_stmt *query; /* one module's chains in run_db */
    sqlite3_stmt *tabled, *at, *next; /* a module's function table in run_db */
    bool run_db_tried;                /* no second try after a failed open */
    sqlite3_stmt *insert;             /* into the profile's symbol table */
    sqlite3_stmt *insert_function;    /* into the profile's module_function table */
};

lb_symcache_t *lb_symcache_open(sqlite3 *profile)
{
    lb_symcache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (lb_modmap_read(&c->map) && c->map.count)
        c->modules = calloc(c->map.count, sizeof *c->modules);
    if (c->modules)
        for (uint32_t i = 0; i < c->map.count; i++)
            c->modules[i].tabled = -1;
    if (sqlite3_prepare_v2(profile, "INSERT OR IGNORE INTO symbol VALUES(?,?,?,?,?,?,?)", -1,
                           &c->insert, NULL) != SQLITE_OK)
        c->insert = NULL;
    if (sqlite3_prepare_v2(profile, "INSERT OR IGNORE INTO module_function VALUES(?,?,?,?,?,?)", -1,
                           &c->insert_function, NULL) != SQLITE_OK)
        c->insert_function = NULL;
    return c;
}

/* The run's database, opened read only, when it already holds this run's
 * profiles in this schema; false otherwise (nothing to read). */
static bool open_run_db(lb_symcache_t *c)
{
    if (c->run_db_tried)
        return c->query != NULL;
    c->run_db_tried = true;
    if (sqlite3_open_v2(lb_output_path(), &c->run_db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return false;
    sqlite3_busy_timeout(c->run_db, 1000);
    if (lb_db_version(c->run_db, "main") != LB_SCHEMA_VERSION)
        return false;
    /* another run's rows: this write empties the file (output.c), and a
     * chain is only known to be right for the run that wrote it */
    sqlite3_stmt *st = NULL;
    bool other_run = true;
    if (sqlite3_prepare_v2(c->run_db, "SELECT 1 FROM run WHERE run_key IS NOT ?1 LIMIT 1", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, lb_output_run_key(), -1, SQLITE_STATIC);
        other_run = sqlite3_step(st) != SQLITE_DONE;
    }
    sqlite3_finalize(st);
    if (other_run)
        return false;
    static const char *const sql[] = {
        "SELECT offset, depth, function, file, line FROM symbol WHERE build_id = ?1 AND path = ?2",
        "SELECT 1 FROM module_function WHERE build_id = ?1 AND path = ?2 LIMIT 1",
        "SELECT lo, size, name FROM module_function WHERE build_id = ?1 AND path = ?2 AND lo ="
        " (SELECT MAX(lo) FROM module_function WHERE build_id = ?1 AND path = ?2 AND lo <= ?3)"
        " ORDER BY seq",
        "SELECT MIN(lo) FROM module_function WHERE build_id = ?1 AND path = ?2 AND lo > ?3",
    };
    sqlite3_stmt **stmts[] = { &c->query, &c->tabled, &c->at, &c->next };
    for (size_t i = 0; i < sizeof stmts / sizeof *stmts; i++)
        if (sqlite3_prepare_v2(c->run_db, sql[i], -1, stmts[i], NULL) != SQLITE_OK) {
            for (size_t j = 0; j <= i; j++) {
                sqlite3_finalize(*stmts[j]);
                *stmts[j] = NULL;
            }
            return false;
        }
    return true;
}

static char *copy_column(sqlite3_stmt *st, int col)
{
    const char *text = (const char *)sqlite3_column_text(st, col);
    return text ? strdup(text) : NULL;
}

/* Reads one module's chains from the run's database (once). */
static void load_module(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm)
{
    cm->loaded = true;
    if (!open_run_db(c))
        return;
    sqlite3_bind_text(c->query, 1, mod->build_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->query, 2, mod->path, -1, SQLITE_STATIC);
    while (sqlite3_step(c->query) == SQLITE_ROW) {
        uint64_t offset = (uint64_t)sqlite3_column_int64(c->query, 0);
        int depth = sqlite3_column_int(c->query, 1);
        if (depth < 0 || depth > LB_MAX_INLINE || offset >> 59)
            continue;
        if (c->n_names == c->cap_names) {
            uint32_t n = c->cap_names ? c->cap_names * 2 : 256;
            cached_name_t *names = realloc(c->names, n * sizeof *names);
            if (!names)
                break;
            c->names = names;
            c->cap_names = n;
        }
        cached_name_t *name = &c->names[c->n_names];
        *name = (cached_name_t){ copy_column(c->query, 2), copy_column(c->query, 3),
                                 sqlite3_column_int(c->query, 4) };
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
    sqlite3_reset(c->query);
    sqlite3_clear_bindings(c->query);
}

/* The module of pc that may be cached, or NULL. */
static const lb_modmap_entry_t *cacheable_module(lb_symcache_t *c, uintptr_t pc)
{
    if (!c || !c->modules || lb_marker_frame_pc(pc) || lb_retired_contains(pc))
        return NULL;
    const lb_modmap_entry_t *mod = lb_modmap_find(&c->map, pc);
    return mod && mod->build_id[0] ? mod : NULL;
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

/* Keeps a copy of name for the cache's life; NULL stays NULL. False
 * without memory. */
static bool keep_name(lb_symcache_t *c, const char *name, const char **kept)
{
    *kept = NULL;
    if (!name)
        return true;
    if (c->n_names == c->cap_names) {
        uint32_t n = c->cap_names ? c->cap_names * 2 : 256;
        cached_name_t *names = realloc(c->names, n * sizeof *names);
        if (!names)
            return false;
        c->names = names;
        c->cap_names = n;
    }
    char *copy = strdup(name);
    if (!copy)
        return false;
    c->names[c->n_names++] = (cached_name_t){ copy, NULL, 0 };
    *kept = copy;
    return true;
}

/* The function holding offset in a module whose names come from its
 * function symbols alone (lb_symbol_functions), as lb_symindex_find
 * chooses it: among the symbols at the last start at or below offset, the
 * first that covers it (a sizeless one up to the next start). False when
 * the module's table is not in the run's database (or on an error). */
static bool function_of(lb_symcache_t *c, const lb_modmap_entry_t *mod, cached_module_t *cm,
                        uint64_t offset, const char **function)
{
    if (cm->tabled < 0) {
        cm->tabled = 0;
        if (open_run_db(c)) {
            bind_module(c->tabled, mod);
            cm->tabled = sqlite3_step(c->tabled) == SQLITE_ROW;
            done(c->tabled);
        }
    }
    if (cm->tabled != 1)
        return false;
    bind_module(c->next, mod);
    sqlite3_bind_int64(c->next, 3, (sqlite3_int64)offset);
    int rc = sqlite3_step(c->next);
    bool last = rc == SQLITE_ROW && sqlite3_column_type(c->next, 0) == SQLITE_NULL;
    uint64_t next = rc == SQLITE_ROW && !last ? (uint64_t)sqlite3_column_int64(c->next, 0) : 0;
    done(c->next);
    if (rc != SQLITE_ROW)
        return false;
    bind_module(c->at, mod);
    sqlite3_bind_int64(c->at, 3, (sqlite3_int64)offset);
    const char *name = NULL;
    bool ok = true;
    while ((rc = sqlite3_step(c->at)) == SQLITE_ROW) {
        uint64_t lo = (uint64_t)sqlite3_column_int64(c->at, 0);
        uint64_t size = (uint64_t)sqlite3_column_int64(c->at, 1);
        if (size ? offset < lo + size : last || offset < next) {
            ok = keep_name(c, (const char *)sqlite3_column_text(c->at, 2), &name);
            break;
        }
    }
    ok = ok && (rc == SQLITE_ROW || rc == SQLITE_DONE);
    done(c->at);
    *function = name;
    return ok;
}

bool lb_symcache_find(lb_symcache_t *c, uintptr_t pc, lb_symbol_t *out)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    if (!mod)
        return false;
    cached_module_t *cm = &c->modules[mod - c->map.modules];
    if (!cm->loaded)
        load_module(c, mod, cm);
    uint64_t key = (uint64_t)(pc - mod->low) << 4;
    uint32_t length, at[LB_MAX_INLINE + 1];
    if (!lb_u64map_get(&cm->names, key | LB_CHAIN_LENGTH_SLOT, &length) || length == 0 ||
        length > LB_MAX_INLINE + 1) {
        const char *function;
        if (!function_of(c, mod, cm, (uint64_t)(pc - mod->low), &function))
            return false;
        *out = (lb_symbol_t){ .module = lb_exe_alias(mod->path),
                              .base = mod->low,
                              .function = function };
        return true;
    }
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

static void insert_name(lb_symcache_t *c, const lb_modmap_entry_t *mod, uintptr_t pc, int depth,
                        const char *function, const char *file, int line)
{
    sqlite3_stmt *st = c->insert;
    sqlite3_bind_text(st, 1, mod->build_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, mod->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)(pc - mod->low));
    sqlite3_bind_int(st, 4, depth);
    if (function)
        sqlite3_bind_text(st, 5, function, -1, SQLITE_TRANSIENT);
    if (file)
        sqlite3_bind_text(st, 6, file, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 7, line);
    sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

typedef struct function_insert {
    lb_symcache_t *c;
    const lb_modmap_entry_t *mod;
    int64_t seq;
} function_insert_t;

static void insert_function(void *ctx, uintptr_t offset, uintptr_t size, const char *name)
{
    function_insert_t *f = ctx;
    sqlite3_stmt *st = f->c->insert_function;
    bind_module(st, f->mod);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)offset);
    sqlite3_bind_int64(st, 4, f->seq++);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)size);
    sqlite3_bind_text(st, 6, name, -1, SQLITE_TRANSIENT);
    sqlite3_step(st);
    done(st);
}

void lb_symcache_add(lb_symcache_t *c, lb_symbolizer_t *s, uintptr_t pc, const lb_symbol_t *sym)
{
    const lb_modmap_entry_t *mod = cacheable_module(c, pc);
    if (!mod || !c->insert || !sym->module || sym->base != mod->low ||
        strcmp(sym->module, lb_exe_alias(mod->path)) != 0 || sym->n_inline < 0 ||
        sym->n_inline > LB_MAX_INLINE)
        return;
    insert_name(c, mod, pc, 0, sym->function, sym->file, sym->line);
    for (int d = 1; d <= sym->n_inline; d++) {
        const lb_source_frame_t *f = &sym->inline_frames[sym->n_inline - d];
        insert_name(c, mod, pc, d, f->function, f->file, f->line);
    }
    /* a module named by its function symbols alone: its whole table, once
     * per run, so that later processes name any address in it */
    cached_module_t *cm = &c->modules[mod - c->map.modules];
    if (c->insert_function && !cm->exported && cm->tabled != 1) {
        cm->exported = true;
        function_insert_t f = { c, mod, 0 };
        lb_symbol_functions(s, pc, insert_function, &f);
    }
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
    sqlite3_finalize(c->insert);
    sqlite3_finalize(c->insert_function);
    sqlite3_finalize(c->query);
    sqlite3_finalize(c->tabled);
    sqlite3_finalize(c->at);
    sqlite3_finalize(c->next);
    if (c->run_db)
        sqlite3_close(c->run_db);
    for (uint32_t i = 0; c->modules && i < c->map.count; i++)
        lb_u64map_free(&c->modules[i].names);
    for (uint32_t i = 0; i < c->n_names; i++) {
        free(c->names[i].function);
        free(c->names[i].file);
    }
    free(c->names);
    free(c->modules);
    lb_modmap_free(&c->map);
    free(c);
}
