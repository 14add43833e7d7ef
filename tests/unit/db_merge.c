/* Unit tests for src/common/db_merge.h with common/ddl.h's two table sets:
 * a process's profile (lb_ddl_create_profile: the tables a process writes
 * rows into, no window tables) merges into a run's database (all the
 * tables) with every id shifted past the destination's largest, the rows
 * of the tables it fills copied, those it left empty or lacks untouched,
 * whether or not the caller's empty bits name them. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/ddl.h"
#include "memory_db.h"

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    ASSERT_EQ(rc, SQLITE_OK);
}

static long long count_of(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* lb_ddl_create_profile's tables, made in "p" of db: it creates them in
 * a database's main, so they are read from one and made again here. */
static void create_profile_tables_in_p(sqlite3 *db)
{
    sqlite3 *own = open_memory_db();
    ASSERT_EQ(lb_ddl_create_profile(own, "main"), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(own, "SELECT name, sql FROM sqlite_master WHERE type = 'table'",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *cols = strchr((const char *)sqlite3_column_text(st, 1), '(');
        ASSERT_NOT_NULL(cols);
        char *create = sqlite3_mprintf("CREATE TABLE p.%s%s", sqlite3_column_text(st, 0), cols);
        exec_ok(db, create);
        sqlite3_free(create);
    }
    sqlite3_finalize(st);
    sqlite3_close(own);
}

/* A run's database (main, all the tables, its meta rows) with a source
 * attached as "p", as the writer's commit sees them: a process's profile,
 * or with full all the tables (another run's database, as the CLI's merge
 * reads). */
static sqlite3 *run_db_with_source(bool full)
{
    sqlite3 *db = open_memory_db();
    ASSERT_EQ(lb_ddl_create(db, "main"), SQLITE_OK);
    exec_ok(db, "INSERT INTO meta VALUES('schema_version','9'),('lockblame_version','t'),"
                "('writer','t')");
    exec_ok(db, "ATTACH ':memory:' AS p");
    if (full)
        ASSERT_EQ(lb_ddl_create(db, "p"), SQLITE_OK);
    else
        create_profile_tables_in_p(db);
    return db;
}

/* One process's rows: a run, two frames in a module, a node chain, a
 * thread and its metrics, and a site when with_site. */
static void fill_profile(sqlite3 *db, int pid, bool with_site)
{
    char sql[1024];
    exec_ok(db, "DELETE FROM p.run; DELETE FROM p.module; DELETE FROM p.frame;"
                " DELETE FROM p.node; DELETE FROM p.thread; DELETE FROM p.metric;"
                " DELETE FROM p.site; DELETE FROM p.meta");
    snprintf(sql, sizeof sql,
             "INSERT INTO p.meta VALUES('schema_version','9');"
             "INSERT INTO p.run(id, command, pid, run_key) VALUES(1, 'cmd', %d, 'k');"
             "INSERT INTO p.module VALUES(1, '/bin/x', 4096, 'b');"
             "INSERT INTO p.frame VALUES(1, 1, 16, 'f', NULL, 0), (2, 1, 32, 'g', NULL, 0);"
             "INSERT INTO p.node VALUES(0, NULL, NULL, 0), (1, 0, 1, 1), (2, 1, 2, 2);"
             "INSERT INTO p.thread(id, tid, start_frame_id, creator_node_id, run_id)"
             " VALUES(1, %d, 1, 0, 1);"
             "INSERT INTO p.metric(node_id, thread_id, work_s) VALUES(2, 1, 0.5)",
             pid, pid);
    exec_ok(db, sql);
    if (with_site)
        exec_ok(db, "INSERT INTO p.site VALUES(2, 1, 'm', 3, 1, 3)");
}

static void test_a_profile_holds_the_row_tables_only(void)
{
    sqlite3 *db = open_memory_db();
    ASSERT_EQ(lb_ddl_create_profile(db, "main"), SQLITE_OK);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"), 13);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'time_window'"
                           " OR name LIKE 'window_%' OR (type = 'index' AND sql IS NOT NULL)"),
              0);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('run', 'site',"
                           " 'structural_wait', 'symbol', 'module_function')"),
              5);
    ASSERT_EQ(sqlite3_get_autocommit(db), 1); /* its transaction ended */
    sqlite3_close(db);
}

/* Two processes' profiles merged one after the other: the second's ids
 * follow the first's, node 0 stays the one root, and the empty and
 * absent tables add nothing. */
static void test_profiles_merge_with_ids_shifted(void)
{
    sqlite3 *db = run_db_with_source(false);
    fill_profile(db, 100, false);
    ASSERT_EQ(lb_db_merge(db, "p", "main", 0), SQLITE_OK);
    /* the second's ids: its own + the destination's largest + 1 */
    long long run = count_of(db, "SELECT MAX(id) + 1 FROM main.run"),
              module = count_of(db, "SELECT MAX(id) + 1 FROM main.module"),
              frame = count_of(db, "SELECT MAX(id) + 1 FROM main.frame"),
              node = count_of(db, "SELECT MAX(id) + 1 FROM main.node"),
              thread = count_of(db, "SELECT MAX(id) + 1 FROM main.thread");
    ASSERT_GT(run, 1);
    ASSERT_GT(node, 2);
    fill_profile(db, 200, true);
    ASSERT_EQ(lb_db_merge(db, "p", "main", 0), SQLITE_OK);

    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.run"), 2);
    ASSERT_EQ(count_of(db, "SELECT id FROM main.run WHERE pid = 200"), 1 + run);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.frame"), 4);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.node WHERE id = 0"), 1);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.node"), 5);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM main.node n JOIN main.frame f ON f.id = n.frame_id"
             " WHERE n.id = %lld AND n.parent_id = %lld AND f.id = %lld AND f.module_id = %lld"
             " AND f.function = 'g'",
             2 + node, 1 + node, 2 + frame, 1 + module);
    ASSERT_EQ(count_of(db, sql), 1);
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM main.thread t JOIN main.metric m ON m.thread_id = t.id"
             " WHERE t.tid = 200 AND t.id = %lld AND t.run_id = %lld AND m.node_id = %lld",
             1 + thread, 1 + run, 2 + node);
    ASSERT_EQ(count_of(db, sql), 1);
    /* only the second process had a site: its frame and thread shifted */
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.site"), 1);
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM main.site WHERE frame_id = %lld AND thread_id = %lld"
             " AND acquisitions = 3",
             2 + frame, 1 + thread);
    ASSERT_EQ(count_of(db, sql), 1);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.sync_object"), 0);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.time_window"), 0);
    sqlite3_close(db);
}

/* An empty bit the caller sets skips that table even when it has rows
 * (the writer sets them for the names it knows it added none of). */
static void test_an_empty_bit_skips_its_table(void)
{
    sqlite3 *db = run_db_with_source(true);
    fill_profile(db, 300, true);
    ASSERT_EQ(lb_db_merge(db, "p", "main", LB_MERGE_EMPTY(LB_MERGE_SITE)), SQLITE_OK);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.run"), 1);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.site"), 0);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.metric"), 1);
    sqlite3_close(db);
}

/* structural_wait.helper (version 10) is copied; a source of an older
 * version, which has no such column, gives 0 (its idle helpers' rows
 * count as parked waits). */
static void test_idle_helper_rows_keep_their_mark(void)
{
    sqlite3 *db = run_db_with_source(false);
    fill_profile(db, 400, false);
    exec_ok(db, "UPDATE p.meta SET value = '10' WHERE key = 'schema_version';"
                "INSERT INTO p.sync_object(id, object) VALUES(1, 'cond');"
                "INSERT INTO p.structural_wait VALUES(1, 1, 'cond', 0, 1, 0, 2, 1, 0.25, 1),"
                " (1, 1, 'cond', 0, 1, 0, 2, 1, 0.5, 0)");
    ASSERT_EQ(lb_db_merge(db, "p", "main", 0), SQLITE_OK);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.structural_wait WHERE helper = 1"
                           " AND blame_s = 0.25"),
              1);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.structural_wait WHERE helper = 0"
                           " AND blame_s = 0.5"),
              1);
    /* an older source: no column to read */
    fill_profile(db, 401, false);
    exec_ok(db, "UPDATE p.meta SET value = '9' WHERE key = 'schema_version';"
                "DROP TABLE p.structural_wait;"
                "CREATE TABLE p.structural_wait(thread_id INTEGER, object_id INTEGER,"
                " object TEXT, start_s REAL, end_s REAL, open INTEGER, node_id INTEGER,"
                " node_thread_id INTEGER, blame_s REAL);"
                "INSERT INTO p.structural_wait VALUES(1, 1, 'cond', 0, 1, 0, 2, 1, 0.125)");
    ASSERT_EQ(lb_db_merge(db, "p", "main", 0), SQLITE_OK);
    ASSERT_EQ(count_of(db, "SELECT COUNT(*) FROM main.structural_wait WHERE helper = 0"
                           " AND blame_s = 0.125"),
              1);
    sqlite3_close(db);
}

CHECK_MAIN(test_a_profile_holds_the_row_tables_only, test_profiles_merge_with_ids_shifted,
           test_an_empty_bit_skips_its_table, test_idle_helper_rows_keep_their_mark)
