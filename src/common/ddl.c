#include "common/ddl.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/version.h"

const char *const lb_ddl_tables[] = {
    "meta",
    "run",
    "module",
    "frame",
    "node",
    "thread",
    "metric",
    "site",
    "sync_object",
    "object_blame",
    "structural_wait",
    "symbol",
    "module_function",
    "time_window",
    "window_run",
    "window_module",
    "window_frame",
    "window_node",
    "window_thread",
    "window_metric",
    "window_object",
    NULL,
};

/* Column lists, one per entry of lb_ddl_tables. Version 3 only appended
 * columns to version 2 (run.ppid .. run.run_key, thread.run_id,
 * sync_object.run_id) and dropped run's single-row check; version 4
 * appended sync_object.sampled_waits; version 5 thread.runqueue_s,
 * thread.unseen_s and metric.idle_futex_s; version 6 module.build_id;
 * version 8 added the tables symbol and module_function, version 9 the
 * time windows; version 10 appended structural_wait.helper. */
static const char *const columns[] = {
    "(key TEXT PRIMARY KEY, value TEXT)",
    "(id INTEGER PRIMARY KEY, command TEXT, executable TEXT,"
    " pid INTEGER, event TEXT, event_requested TEXT, period INTEGER, period_unit TEXT,"
    " ns_per_sample REAL, start_unix REAL, duration_s REAL, threads INTEGER, samples INTEGER,"
    " samples_dropped INTEGER, exit_reason TEXT, ppid INTEGER, exec_gen INTEGER,"
    " proc_start INTEGER, run_key TEXT)",
    "(id INTEGER PRIMARY KEY, path TEXT, base INTEGER, build_id TEXT)",
    "(id INTEGER PRIMARY KEY, module_id INTEGER, offset INTEGER,"
    " function TEXT, file TEXT, line INTEGER)",
    "(id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER, depth INTEGER)",
    "(id INTEGER PRIMARY KEY, tid INTEGER, start_frame_id INTEGER,"
    " creator_node_id INTEGER, start_s REAL, end_s REAL, cpu_s REAL, samples INTEGER,"
    " samples_dropped INTEGER, run_id INTEGER, runqueue_s REAL, unseen_s REAL)",
    "(node_id INTEGER, thread_id INTEGER, work_s REAL, overhead_s REAL,"
    " wait_s REAL, idle_mutex_s REAL, idle_spin_s REAL, idle_rwlock_s REAL, idle_cond_s REAL,"
    " idle_barrier_s REAL, idle_sem_s REAL, idle_join_s REAL, blamed_count INTEGER,"
    " idle_undirected_s REAL, idle_futex_s REAL, PRIMARY KEY (node_id, thread_id))",
    "(frame_id INTEGER, thread_id INTEGER, object TEXT,"
    " acquisitions INTEGER, contended INTEGER, releases INTEGER,"
    " PRIMARY KEY (frame_id, thread_id, object))",
    "(id INTEGER PRIMARY KEY, object TEXT, address INTEGER,"
    " first_node_id INTEGER, acquisitions INTEGER, contended INTEGER, wait_s REAL,"
    " blame_s REAL, handoff_s REAL, unattributed_s REAL, run_id INTEGER,"
    " sampled_waits INTEGER)",
    "(object_id INTEGER, node_id INTEGER, thread_id INTEGER,"
    " blame_s REAL, count INTEGER, PRIMARY KEY (object_id, node_id, thread_id))",
    "(thread_id INTEGER, object_id INTEGER, object TEXT,"
    " start_s REAL, end_s REAL, open INTEGER, node_id INTEGER, node_thread_id INTEGER,"
    " blame_s REAL, helper INTEGER)",
    "(build_id TEXT, path TEXT, offset INTEGER, depth INTEGER, function TEXT, file TEXT,"
    " line INTEGER, PRIMARY KEY (build_id, path, offset, depth)) WITHOUT ROWID",
    "(build_id TEXT, path TEXT, functions BLOB, PRIMARY KEY (build_id, path))",
    /* version 9: the time windows (docs/SCHEMA.md); window_X holds the
     * columns of X, window_run/thread/metric/object after a window_id,
     * with no key: ids are the process's own in every window */
    "(id INTEGER PRIMARY KEY, process INTEGER, seq INTEGER, run_key TEXT, pid INTEGER,"
    " start_s REAL, end_s REAL, start_unix REAL, end_unix REAL, reason TEXT)",
};

/* The window tables' base tables: window_X is X's columns (see above). */
static const struct {
    const char *name;
    int base;        /* index of X in lb_ddl_tables */
    bool per_window; /* rows per window: a window_id column first */
} window_tables[] = {
    { "window_run", 1, true },    { "window_module", 2, false }, { "window_frame", 3, false },
    { "window_node", 4, false },  { "window_thread", 5, true },  { "window_metric", 6, true },
    { "window_object", 8, true },
};

/* X's column list without its keys: "(window_id INTEGER, " + X's columns. */
static void window_columns(char *out, size_t size, int base, bool per_window)
{
    const char *src = columns[base] + 1; /* past "(" */
    size_t n = snprintf(out, size, "(%s", per_window ? "window_id INTEGER, " : "");
    while (*src && n + 1 < size) {
        if (strncmp(src, " PRIMARY KEY", 12) == 0 && src[12] != ' ') {
            src += 12; /* "id INTEGER PRIMARY KEY" */
        } else if (strncmp(src, ", PRIMARY KEY (", 15) == 0) {
            src = strchr(src, ')') + 1; /* ", PRIMARY KEY (a, b)" */
        } else {
            out[n++] = *src++;
        }
    }
    out[n] = '\0';
}

/* Create lb_ddl_tables[0 .. end) in `schema` (all of them up to NULL). */
static int create_tables(sqlite3 *db, const char *schema, const char *end)
{
    for (int i = 0; lb_ddl_tables[i] && (!end || strcmp(lb_ddl_tables[i], end) != 0); i++) {
        char sql[2048];
        char cols[1024];
        const char *c = NULL;
        for (size_t w = 0; w < sizeof window_tables / sizeof *window_tables; w++) {
            if (strcmp(window_tables[w].name, lb_ddl_tables[i]) == 0) {
                window_columns(cols, sizeof cols, window_tables[w].base,
                               window_tables[w].per_window);
                c = cols;
            }
        }
        snprintf(sql, sizeof sql, "CREATE TABLE \"%s\".%s%s", schema, lb_ddl_tables[i],
                 c ? c : columns[i]);
        int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

int lb_ddl_create(sqlite3 *db, const char *schema)
{
    int rc = create_tables(db, schema, NULL);
    return rc == SQLITE_OK ? lb_ddl_create_index(db, schema) : rc;
}

int lb_ddl_meta(sqlite3 *db, const char *schema, const char *writer)
{
    char *sql = sqlite3_mprintf("INSERT INTO \"%w\".meta VALUES('schema_version','%d'),"
                                "('lockblame_version',%Q),('writer',%Q)",
                                schema, LB_SCHEMA_VERSION, LB_VERSION, writer);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

int lb_ddl_create_profile(sqlite3 *db, const char *schema)
{
    int rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = create_tables(db, schema, LB_DDL_PROFILE_END);
    if (rc == SQLITE_OK)
        return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int lb_ddl_create_index(sqlite3 *db, const char *schema)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "CREATE INDEX IF NOT EXISTS \"%s\".run_process ON run(run_key, pid, proc_start)",
             schema);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}
