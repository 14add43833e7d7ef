#include "common/db_merge.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ddl.h"

sqlite3_stmt *lb_db_prepare_sql(sqlite3 *db, char *sql)
{
    sqlite3_stmt *st = NULL;
    if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        st = NULL;
    sqlite3_free(sql);
    return st;
}

int lb_db_run_kept(sqlite3 *db, sqlite3_stmt **st, const char *text)
{
    if (!*st && sqlite3_prepare_v2(db, text, -1, st, NULL) != SQLITE_OK)
        return sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
    int rc = sqlite3_step(*st);
    sqlite3_reset(*st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

bool lb_db_sqlite_header(const void *bytes, size_t n)
{
    return n >= 16 && memcmp(bytes, "SQLite format 3", 16) == 0;
}

/* sql's statement: from the cache (which then owns sql), else prepared
 * now (*owned set: the caller finalizes it). NULL on failure. */
static sqlite3_stmt *statement_for(sqlite3 *db, char *sql, lb_db_merge_cache_t *cache, bool *owned)
{
    *owned = false;
    if (!sql)
        return NULL;
    for (int i = 0; cache && i < cache->n; i++) {
        if (strcmp(cache->sql[i], sql) == 0) {
            sqlite3_free(sql);
            return cache->st[i];
        }
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_free(sql);
        return NULL;
    }
    if (cache && cache->n < LB_DB_MERGE_CACHED) {
        cache->sql[cache->n] = sql;
        cache->st[cache->n++] = st;
        return st;
    }
    sqlite3_free(sql);
    *owned = true;
    return st;
}

/* The statement's first column of its first row as an integer, or
 * `none` when it has no row; the statement reset, and finalized when
 * owned. */
static int first_int(sqlite3_stmt *st, bool owned, int none)
{
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : none;
    sqlite3_reset(st);
    if (owned)
        sqlite3_finalize(st);
    return v;
}

/* lb_db_version through cache (NULL: none). */
static int version_with(sqlite3 *db, const char *schema, lb_db_merge_cache_t *cache)
{
    bool owned;
    sqlite3_stmt *st = statement_for(
        db, sqlite3_mprintf("SELECT COUNT(*) FROM \"%w\".sqlite_master", schema), cache, &owned);
    if (!st)
        return -1;
    int tables = first_int(st, owned, -1);
    if (tables <= 0)
        return tables; /* 0: empty, -1: unreadable (not SQLite) */
    st = statement_for(
        db, sqlite3_mprintf("SELECT value FROM \"%w\".meta WHERE key = 'schema_version'", schema),
        cache, &owned);
    int version = st ? first_int(st, owned, -1) : -1;
    return version > 0 ? version : -1;
}

int lb_db_version(sqlite3 *db, const char *schema)
{
    return version_with(db, schema, NULL);
}

int lb_db_other_run(sqlite3 *db, const char *schema, const char *run_key, int windows)
{
    /* run_key IS NOT ?1, spelt so that the index answers it */
    char *sql =
        sqlite3_mprintf("SELECT 1 FROM \"%w\".run"
                        " WHERE run_key < ?1 OR run_key > ?1 OR run_key IS NULL%s%w%s LIMIT 1",
                        schema, windows ? " UNION ALL SELECT 1 FROM \"" : "", windows ? schema : "",
                        windows ? "\".time_window WHERE run_key IS NOT ?1" : "");
    sqlite3_stmt *st = NULL;
    int found = -1;
    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, run_key, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        found = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
    return found;
}

static int next_id(sqlite3 *db, const char *dst, const char *table, sqlite3_int64 *out)
{
    char sql[256];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(id), 0) + 1 FROM \"%s\".%s", dst, table);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static bool has_table(sqlite3 *db, const char *schema, const char *table,
                      lb_db_merge_cache_t *cache)
{
    bool owned;
    sqlite3_stmt *st = statement_for(
        db,
        sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type = 'table' AND name = ?1",
                        schema),
        cache, &owned);
    if (!st)
        return false;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    bool found = first_int(st, owned, 0) == 1;
    if (!owned)
        sqlite3_clear_bindings(st);
    return found;
}

/* The copies name a source's shifts :run, :module, :frame, :node,
 * :thread and :object. */
typedef lb_db_shifts_t shift_t;

void lb_db_merge_cache_free(lb_db_merge_cache_t *cache)
{
    for (int i = 0; i < cache->n; i++) {
        sqlite3_finalize(cache->st[i]);
        sqlite3_free(cache->sql[i]);
    }
    memset(cache, 0, sizeof *cache);
}

static void bind_shift(sqlite3_stmt *st, const char *name, sqlite3_int64 by)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_int64(st, i, by);
}

/* Run st with the shifts it names bound (s NULL: none), and reset it. */
static int run_statement(sqlite3_stmt *st, const shift_t *s)
{
    if (s) {
        bind_shift(st, ":run", s->run);
        bind_shift(st, ":module", s->module);
        bind_shift(st, ":frame", s->frame);
        bind_shift(st, ":node", s->node);
        bind_shift(st, ":thread", s->thread);
        bind_shift(st, ":object", s->object);
    }
    int rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : sqlite3_reset(st);
    sqlite3_reset(st);
    return rc;
}

/* Run one statement (sql freed here; NULL: out of memory) with the
 * shifts it names bound; *kept (when kept is not NULL): the statement
 * when the cache keeps it, else NULL. */
static int run_sql(sqlite3 *db, char *sql, const shift_t *s, lb_db_merge_cache_t *cache,
                   sqlite3_stmt **kept)
{
    if (kept)
        *kept = NULL;
    if (!sql)
        return SQLITE_NOMEM;
    bool owned;
    sqlite3_stmt *st = statement_for(db, sql, cache, &owned);
    if (!st)
        return sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
    int rc = run_statement(st, s);
    if (owned)
        sqlite3_finalize(st);
    else if (kept)
        *kept = st;
    return rc;
}

#define NREF(x) "CASE WHEN " x " = 0 THEN 0 ELSE " x " + :node END"
#define FREF(x) "CASE WHEN " x " = 0 THEN 0 ELSE " x " + :frame END"

/* The time windows (version 9): a source's processes get numbers after
 * the destination's, so their ids (process << 32 + own) stay apart. */
static int merge_windows(sqlite3 *db, const char *src, const char *dst)
{
    sqlite3_int64 window, process = 0;
    char sql[256];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "SELECT 1 FROM \"%s\".time_window LIMIT 1", src);
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    bool any = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!any)
        return rc; /* none: nothing to add (a process's exit write) */
    rc = next_id(db, dst, "time_window", &window);
    if (rc != SQLITE_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(process), 0) FROM \"%s\".time_window", dst);
    if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW)
        process = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    long long w = window - 1, b = (long long)process << 32;
    char *sql_text[] = {
        sqlite3_mprintf("INSERT INTO \"%w\".time_window SELECT id + %lld, process + %lld, seq,"
                        " run_key, pid, start_s, end_s, start_unix, end_unix, reason"
                        " FROM \"%w\".time_window",
                        dst, w, process, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_module SELECT id + %lld, path, base, build_id"
                        " FROM \"%w\".window_module",
                        dst, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_frame SELECT id + %lld,"
                        " CASE WHEN module_id > 0 THEN module_id + %lld END, offset, function,"
                        " file, line FROM \"%w\".window_frame",
                        dst, b, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_node SELECT 0, NULL, NULL, 0"
                        " WHERE NOT EXISTS (SELECT 1 FROM \"%w\".window_node WHERE id = 0)",
                        dst, dst),
        sqlite3_mprintf("INSERT INTO \"%w\".window_node SELECT id + %lld,"
                        " CASE WHEN parent_id > 0 THEN parent_id + %lld ELSE parent_id END,"
                        " frame_id + %lld, depth FROM \"%w\".window_node WHERE id <> 0",
                        dst, b, b, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_run SELECT window_id + %lld, id + %lld,"
                        " command, executable, pid, event, event_requested, period, period_unit,"
                        " ns_per_sample, start_unix, duration_s, threads, samples,"
                        " samples_dropped, exit_reason, ppid, exec_gen, proc_start, run_key"
                        " FROM \"%w\".window_run",
                        dst, w, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_thread SELECT window_id + %lld, id + %lld, tid,"
                        " start_frame_id + %lld, NULL, start_s, end_s, cpu_s, samples,"
                        " samples_dropped, run_id + %lld, runqueue_s, unseen_s"
                        " FROM \"%w\".window_thread",
                        dst, w, b, b, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_metric SELECT window_id + %lld,"
                        " CASE WHEN node_id > 0 THEN node_id + %lld ELSE node_id END,"
                        " thread_id + %lld, work_s, overhead_s, wait_s, idle_mutex_s,"
                        " idle_spin_s, idle_rwlock_s, idle_cond_s, idle_barrier_s, idle_sem_s,"
                        " idle_join_s, blamed_count, idle_undirected_s, idle_futex_s"
                        " FROM \"%w\".window_metric",
                        dst, w, b, b, src),
        sqlite3_mprintf("INSERT INTO \"%w\".window_object SELECT window_id + %lld, id + %lld,"
                        " object, address, NULL, acquisitions, contended, wait_s, blame_s,"
                        " handoff_s, unattributed_s, run_id + %lld, sampled_waits"
                        " FROM \"%w\".window_object",
                        dst, w, b, b, src),
    };
    rc = SQLITE_OK;
    for (size_t i = 0; i < sizeof sql_text / sizeof *sql_text; i++) {
        if (rc == SQLITE_OK)
            rc = run_sql(db, sql_text[i], NULL, NULL, NULL);
        else
            sqlite3_free(sql_text[i]);
    }
    return rc;
}

/* The tables of enum lb_merge_table, by name (the shifted ones first). */
static const char *const merge_table[LB_MERGE_TABLES] = {
    "run",  "module",       "frame",           "node",   "thread",          "sync_object", "metric",
    "site", "object_blame", "structural_wait", "symbol", "module_function",
};

/* Which of src's tables exist: SQLITE_OK and bit t of *found for
 * merge_table[t], bit LB_MERGE_TABLES for time_window. One statement
 * for what would otherwise be a look per optional table. */
static int tables_present(sqlite3 *db, const char *src, unsigned *found, lb_db_merge_cache_t *cache)
{
    bool owned;
    *found = 0;
    sqlite3_stmt *st = statement_for(
        db, sqlite3_mprintf("SELECT name FROM \"%w\".sqlite_master WHERE type = 'table'", src),
        cache, &owned);
    int rc = st ? SQLITE_OK : sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        const char *name = (const char *)sqlite3_column_text(st, 0);
        for (int t = 0; name && t < LB_MERGE_TABLES; t++)
            if (strcmp(name, merge_table[t]) == 0)
                *found |= 1u << t;
        if (name && strcmp(name, "time_window") == 0)
            *found |= 1u << LB_MERGE_TABLES;
    }
    if (st)
        sqlite3_reset(st);
    if (owned)
        sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Run a query of one row, and read its first n columns as integers:
 * *memo when memo holds one (sql is NULL then), else sql (freed here;
 * NULL: out of memory), kept in *memo when the cache keeps it. */
static int one_row(sqlite3 *db, char *sql, sqlite3_int64 *out, int n, lb_db_merge_cache_t *cache,
                   sqlite3_stmt **memo)
{
    bool owned = false;
    sqlite3_stmt *st = memo ? *memo : NULL;
    if (!st && !sql)
        return SQLITE_NOMEM;
    if (!st && !(st = statement_for(db, sql, cache, &owned)))
        return sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
    if (memo && !owned)
        *memo = st;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        for (int i = 0; i < n; i++)
            out[i] = sqlite3_column_int64(st, i);
        rc = SQLITE_OK;
    }
    sqlite3_reset(st);
    if (owned)
        sqlite3_finalize(st);
    return rc;
}

/* Of the tables rows[] still copies, keep those src holds rows in: one
 * statement, where each copy of an empty table would be a statement
 * parsed for nothing (a small process's profile leaves several empty). */
static int drop_empty(sqlite3 *db, const char *src, bool rows[LB_MERGE_TABLES],
                      lb_db_merge_cache_t *cache)
{
    unsigned key = 1; /* the mask of rows[], + 1 */
    for (int t = 0; t < LB_MERGE_TABLES; t++)
        key += (unsigned)rows[t] << t;
    sqlite3_stmt **memo = NULL;
    if (cache) {
        if (cache->empty_key != key)
            cache->empty = NULL;
        cache->empty_key = key;
        memo = &cache->empty;
    }
    char *sql = memo && *memo ? NULL : sqlite3_mprintf("SELECT");
    for (int t = 0; sql && t < LB_MERGE_TABLES; t++) {
        char *more = rows[t] ? sqlite3_mprintf("%s%s EXISTS (SELECT 1 FROM \"%w\".%s)", sql,
                                               t ? "," : "", src, merge_table[t])
                             : sqlite3_mprintf("%s%s 0", sql, t ? "," : "");
        sqlite3_free(sql);
        sql = more;
    }
    sqlite3_int64 has[LB_MERGE_TABLES];
    int rc = one_row(db, sql, has, LB_MERGE_TABLES, cache, memo);
    for (int t = 0; rc == SQLITE_OK && t < LB_MERGE_TABLES; t++)
        rows[t] = has[t] != 0;
    return rc;
}

/* In one statement: the destination's next id of each shifted table,
 * its largest + 1. */
static int next_ids(sqlite3 *db, const char *dst, sqlite3_int64 next[LB_MERGE_OBJECT + 1],
                    lb_db_merge_cache_t *cache)
{
    sqlite3_stmt **memo = cache ? &cache->next_ids : NULL;
    char *sql = memo && *memo ? NULL : sqlite3_mprintf("SELECT");
    for (int t = LB_MERGE_RUN; sql && t <= LB_MERGE_OBJECT; t++) {
        char *more = sqlite3_mprintf("%s%s (SELECT COALESCE(MAX(id), 0) + 1 FROM \"%w\".%s)", sql,
                                     t ? "," : "", dst, merge_table[t]);
        sqlite3_free(sql);
        sql = more;
    }
    return one_row(db, sql, next, LB_MERGE_OBJECT + 1, cache, memo);
}

int lb_db_merge_shifts(sqlite3 *db, const char *dst, lb_db_shifts_t *out,
                       lb_db_merge_cache_t *cache)
{
    sqlite3_int64 next[LB_MERGE_OBJECT + 1];
    int rc = next_ids(db, dst, next, cache);
    if (rc == SQLITE_OK)
        *out =
            (lb_db_shifts_t){ next[LB_MERGE_RUN],  next[LB_MERGE_MODULE], next[LB_MERGE_FRAME],
                              next[LB_MERGE_NODE], next[LB_MERGE_THREAD], next[LB_MERGE_OBJECT] };
    return rc;
}

/* The copy of src's meta rows into dst's: integer counters add up, and
 * so do the CPU seconds credited unsampled; other values (the sampling
 * mechanism, its rate) stay the first process's; the version keys are
 * the destination's own. */
static char *meta_upsert(const char *dst, const char *rows)
{
    return rows ? sqlite3_mprintf(
                      "INSERT INTO \"%w\".meta SELECT %s WHERE key <> 'schema_version'"
                      " AND key <> 'lockblame_version' AND key <> 'writer' ON CONFLICT(key) DO"
                      " UPDATE SET value = CASE WHEN key = 'unsampled_cpu_s'"
                      " OR key = 'unsampled_blocked_cpu_s'"
                      " THEN printf('%%.6f', CAST(value AS REAL) + CAST(excluded.value AS REAL))"
                      " WHEN value <> '' AND excluded.value <> ''"
                      " AND value NOT GLOB '*[^0-9]*' AND excluded.value NOT GLOB '*[^0-9]*'"
                      " THEN CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)"
                      " ELSE value END",
                      dst, rows)
                : NULL;
}

static char *meta_sql(const char *src, const char *dst)
{
    char *rows = sqlite3_mprintf("key, value FROM \"%w\".meta", src);
    char *sql = meta_upsert(dst, rows);
    sqlite3_free(rows);
    return sql;
}

char *lb_db_merge_meta_row_sql(const char *dst)
{
    return meta_upsert(dst, "?1 AS key, ?2 AS value");
}

/* The copy of src's names in `table` (symbol, module_function): the
 * rows dst lacks, the same for every process. */
static char *names_sql(const char *table, const char *src, const char *dst)
{
    return sqlite3_mprintf("INSERT OR IGNORE INTO \"%w\".%s SELECT * FROM \"%w\".%s", dst, table,
                           src, table);
}

/* What follows the copies of a merge: its time windows. */
static int merge_rest(sqlite3 *db, const char *src, const char *dst, unsigned present,
                      lb_db_merge_cache_t *cache)
{
    if ((present & (1u << LB_MERGE_TABLES)) && has_table(db, dst, "time_window", cache))
        return merge_windows(db, src, dst);
    return SQLITE_OK;
}

int lb_db_merge(sqlite3 *db, const char *src, const char *dst, unsigned empty)
{
    return lb_db_merge_with(db, src, dst, empty, NULL);
}

int lb_db_merge_with(sqlite3 *db, const char *src, const char *dst, unsigned empty,
                     lb_db_merge_cache_t *cache)
{
    int version = version_with(db, src, cache);
    if (version < 1 || version > LB_SCHEMA_VERSION)
        return SQLITE_MISMATCH;
    shift_t s;
    int rc = lb_db_merge_shifts(db, dst, &s, cache);
    if (rc != SQLITE_OK)
        return rc;
    unsigned present;
    if ((rc = tables_present(db, src, &present, cache)) != SQLITE_OK)
        return rc;
    /* structural_wait is optional in a source (older version-2 files), and
     * so are the names and a process's profile's window tables
     * (common/ddl.h); the names resolved once per module are the same for
     * every process */
    bool rows[LB_MERGE_TABLES];
    for (int t = 0; t < LB_MERGE_TABLES; t++)
        rows[t] = !(empty & LB_MERGE_EMPTY(t)) && (present & (1u << t));
    if ((rc = drop_empty(db, src, rows, cache)) != SQLITE_OK)
        return rc;
    bool names = (rows[LB_MERGE_SYMBOL] || rows[LB_MERGE_FUNCTIONS]) && version >= 8 &&
                 has_table(db, dst, "symbol", cache);
    rows[LB_MERGE_SYMBOL] = rows[LB_MERGE_SYMBOL] && names;
    rows[LB_MERGE_FUNCTIONS] = rows[LB_MERGE_FUNCTIONS] && names;
    /* The copies' texts follow from src, dst, the version and rows[]:
     * a cache's merge of the same ones runs the statements kept. */
    unsigned long key = 1 + ((unsigned long)version << LB_MERGE_TABLES);
    for (int t = 0; t < LB_MERGE_TABLES; t++)
        key += (unsigned long)rows[t] << t;
    if (cache && cache->copies && cache->copy_key == key) {
        rc = SQLITE_OK;
        for (int i = 0; rc == SQLITE_OK && i < cache->copies; i++)
            rc = run_statement(cache->copy[i], &s);
        return rc == SQLITE_OK ? merge_rest(db, src, dst, present, cache) : rc;
    }
    bool v3 = version >= 3;
    /* A version-2 source is one process: its single run row. */
    const char *run_of = v3 ? "run_id" : "(SELECT MIN(id) FROM \"%w\".run)";
    char *run_ref = sqlite3_mprintf(run_of, src);
    if (!run_ref)
        return SQLITE_NOMEM;
    char *sql[LB_DB_MERGE_COPIES];
    int n = 0;
    sql[n++] = sqlite3_mprintf("INSERT OR IGNORE INTO \"%w\".node VALUES(0, NULL, NULL, 0)", dst);
    if (rows[LB_MERGE_RUN])
        sql[n++] = sqlite3_mprintf(
            "INSERT INTO \"%w\".run SELECT id + :run, rtrim(command), executable, pid, event,"
            " event_requested, period, period_unit, ns_per_sample, start_unix, duration_s, threads,"
            " samples, samples_dropped, exit_reason, %s, %s + (SELECT COUNT(*) FROM \"%w\".run d"
            " WHERE d.pid = r.pid AND d.proc_start IS %s AND d.run_key IS %s), %s, %s"
            " FROM \"%w\".run r",
            dst, v3 ? "ppid" : "NULL", v3 ? "exec_gen" : "0", dst, v3 ? "r.proc_start" : "NULL",
            v3 ? "r.run_key" : "NULL", v3 ? "proc_start" : "NULL", v3 ? "run_key" : "NULL", src);
    if (rows[LB_MERGE_MODULE])
        sql[n++] = sqlite3_mprintf("INSERT INTO \"%w\".module SELECT id + :module, path, base, %s"
                                   " FROM \"%w\".module",
                                   dst, version >= 6 ? "build_id" : "NULL", src);
    if (rows[LB_MERGE_FRAME])
        sql[n++] = sqlite3_mprintf("INSERT INTO \"%w\".frame SELECT id + :frame,"
                                   " module_id + :module, offset, function, file, line"
                                   " FROM \"%w\".frame",
                                   dst, src);
    if (rows[LB_MERGE_NODE])
        sql[n++] = sqlite3_mprintf("INSERT INTO \"%w\".node SELECT id + :node, " NREF(
                                       "parent_id") ", " FREF("frame_id") ", depth"
                                                                          " FROM \"%w\".node"
                                                                          " WHERE id <> 0",
                                   dst, src);
    if (rows[LB_MERGE_THREAD])
        sql[n++] = sqlite3_mprintf(
            "INSERT INTO \"%w\".thread SELECT id + :thread, tid, " FREF("start_frame_id") ", " NREF(
                "creator_node_id") ", start_s, end_s, cpu_s, samples,"
                                   " samples_dropped, %s + :run, %s"
                                   " FROM \"%w\".thread",
            dst, run_ref, version >= 5 ? "runqueue_s, unseen_s" : "NULL, NULL", src);
    if (rows[LB_MERGE_METRIC])
        sql[n++] = sqlite3_mprintf(
            "INSERT INTO \"%w\".metric SELECT " NREF(
                "node_id") ", thread_id + :thread, work_s, overhead_s, wait_s, idle_mutex_s,"
                           " idle_spin_s, idle_rwlock_s, idle_cond_s, idle_barrier_s,"
                           " idle_sem_s, idle_join_s, blamed_count, %s, %s"
                           " FROM \"%w\".metric",
            dst, version >= 2 ? "idle_undirected_s" : "0", version >= 5 ? "idle_futex_s" : "0",
            src);
    if (rows[LB_MERGE_SITE])
        sql[n++] = sqlite3_mprintf(
            "INSERT INTO \"%w\".site SELECT " FREF(
                "frame_id") ", thread_id + :thread, object, acquisitions, contended, releases"
                            " FROM \"%w\".site",
            dst, src);
    if (rows[LB_MERGE_OBJECT])
        sql[n++] = sqlite3_mprintf(
            "INSERT INTO \"%w\".sync_object SELECT id + :object, object, address, " NREF(
                "first_node_id") ", acquisitions, contended,"
                                 " wait_s, blame_s, handoff_s, unattributed_s, %s + :run, %s"
                                 " FROM \"%w\".sync_object",
            dst, run_ref, version >= 4 ? "sampled_waits" : "0", src);
    if (rows[LB_MERGE_BLAME])
        sql[n++] =
            sqlite3_mprintf("INSERT INTO \"%w\".object_blame SELECT object_id + :object, " NREF(
                                "node_id") ", thread_id + :thread, blame_s, count"
                                           " FROM \"%w\".object_blame",
                            dst, src);
    if (rows[LB_MERGE_STRUCTURAL])
        sql[n++] = sqlite3_mprintf("INSERT INTO \"%w\".structural_wait SELECT thread_id + :thread,"
                                   " object_id + :object, object, start_s, end_s, open, " NREF(
                                       "node_id") ", node_thread_id + :thread, blame_s, %s"
                                                  " FROM \"%w\".structural_wait",
                                   dst, version >= 10 ? "helper" : "0", src);
    if (rows[LB_MERGE_SYMBOL])
        sql[n++] = names_sql("symbol", src, dst);
    if (rows[LB_MERGE_FUNCTIONS])
        sql[n++] = names_sql("module_function", src, dst);
    sql[n++] = meta_sql(src, dst);
    sqlite3_free(run_ref);
    rc = SQLITE_OK;
    bool keep = cache != NULL;
    if (cache)
        cache->copies = 0;
    for (int i = 0; i < n; i++) {
        if (rc != SQLITE_OK) {
            sqlite3_free(sql[i]);
            continue;
        }
        rc = run_sql(db, sql[i], &s, cache, keep ? &cache->copy[i] : NULL);
        keep = keep && cache->copy[i];
    }
    if (keep && rc == SQLITE_OK) {
        cache->copy_key = key;
        cache->copies = n;
    }
    return rc == SQLITE_OK ? merge_rest(db, src, dst, present, cache) : rc;
}
