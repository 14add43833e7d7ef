/* Copying one lockblame database into another: the shared step of the
 * library's exit write (its own profile, built in memory, goes into the
 * run's database) and of `lockblame merge`.
 *
 * Every id of the source (run, module, frame, node, thread, sync_object)
 * is shifted past the destination's largest, so each source process stays
 * a process of its own; node 0, the root, is shared. A source image whose
 * (pid, proc_start, run_key) the destination already holds becomes its
 * next exec generation. Depends on nothing but SQLite. */
#ifndef LB_COMMON_DB_MERGE_H
#define LB_COMMON_DB_MERGE_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* The tables a merge copies (time windows apart), the shifted ones first. */
enum lb_merge_table {
    LB_MERGE_RUN,
    LB_MERGE_MODULE,
    LB_MERGE_FRAME,
    LB_MERGE_NODE,
    LB_MERGE_THREAD,
    LB_MERGE_OBJECT, /* sync_object */
    LB_MERGE_METRIC,
    LB_MERGE_SITE,
    LB_MERGE_BLAME, /* object_blame */
    LB_MERGE_STRUCTURAL,
    LB_MERGE_SYMBOL,
    LB_MERGE_FUNCTIONS, /* module_function */
    LB_MERGE_TABLES
};
#define LB_MERGE_EMPTY(table) (1u << (table))

/* Copy attached database `src` (schema version 1 to the current one) into
 * `dst` (current version, tables created). Runs inside the caller's
 * transaction and neither begins nor ends one. empty: LB_MERGE_EMPTY bits
 * of tables the caller knows hold no rows in src, whose copy is skipped
 * (each copy is a statement parsed; 0 copies every table). Returns
 * SQLITE_OK, or an SQLite error code with sqlite3_errmsg(db) set; on
 * error the caller rolls back. */
int lb_db_merge(sqlite3 *db, const char *src, const char *dst, unsigned empty);

/* The statements of a series of merges between the same two schemas (a
 * merger of many small profiles), prepared at their first use instead of
 * once a merge: zero-initialized; freed (lb_db_merge_cache_free) before
 * either schema is detached. */
#define LB_DB_MERGE_CACHED 32
#define LB_DB_MERGE_COPIES 16 /* at least the statements that copy a merge's tables */
typedef struct lb_db_merge_cache {
    char *sql[LB_DB_MERGE_CACHED];
    sqlite3_stmt *st[LB_DB_MERGE_CACHED];
    int n;
    /* Of those, the ones the next merge of the same shape runs again,
     * found without their text made and looked up (the texts follow
     * from the two schemas and the shape): dst's next ids; the look for
     * empty tables among those of mask empty_key - 1; the `copies`
     * copies of a source of the version and tables copied that copy_key
     * names (none while copies is 0). */
    sqlite3_stmt *next_ids;
    unsigned empty_key;
    sqlite3_stmt *empty;
    unsigned long copy_key;
    int copies;
    sqlite3_stmt *copy[LB_DB_MERGE_COPIES];
} lb_db_merge_cache_t;
/* lb_db_merge through cache (NULL: none). */
int lb_db_merge_with(sqlite3 *db, const char *src, const char *dst, unsigned empty,
                     lb_db_merge_cache_t *cache);
void lb_db_merge_cache_free(lb_db_merge_cache_t *cache);

/* The id shifts of one source: each of its ids plus its table's shift,
 * node 0 (the root) and frame 0 (none) kept. A merge shifts a source by
 * the destination's next ids (its largest + 1). */
typedef struct lb_db_shifts {
    sqlite3_int64 run, module, frame, node, thread, object;
} lb_db_shifts_t;
/* dst's next ids, the shifts lb_db_merge_with gives the source it copies
 * next (through cache: NULL none). SQLITE_OK or the statement's error. */
int lb_db_merge_shifts(sqlite3 *db, const char *dst, lb_db_shifts_t *out,
                       lb_db_merge_cache_t *cache);
/* The statement that adds one meta row (?1 key, ?2 value) to dst's as
 * a merge adds a source's: counters summed, the version keys dst's own
 * (a source holds each key once; a second row of one key would add to
 * the first).
 * sqlite3_mprintf'd; NULL when out of memory. */
char *lb_db_merge_meta_row_sql(const char *dst);

/* Whether `schema` holds rows of a run other than run_key: 1 yes, 0 no,
 * -1 when it cannot be read. The rows of table run, and with windows
 * those of time_window too. An index search of run (common/ddl.h). */
int lb_db_other_run(sqlite3 *db, const char *schema, const char *run_key, int windows);

/* Whether the n bytes a file starts with are an SQLite database's header. */
bool lb_db_sqlite_header(const void *bytes, size_t n);
/* sql (sqlite3_mprintf'd; NULL when that ran out of memory) prepared on
 * db, and freed: the statement, or NULL. */
sqlite3_stmt *lb_db_prepare_sql(sqlite3 *db, char *sql);
/* The statement of fixed text kept in *st (prepared there at its first
 * use, where sqlite3_exec would prepare it at every one: a transaction's
 * or a savepoint's start or end) run and reset: SQLITE_OK or its error. */
int lb_db_run_kept(sqlite3 *db, sqlite3_stmt **st, const char *text);

/* The schema_version in `schema`.meta: the version, 0 when the database
 * has no tables at all, -1 when it is not a lockblame database. */
int lb_db_version(sqlite3 *db, const char *schema);
#endif
