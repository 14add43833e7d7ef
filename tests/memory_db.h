/* An empty in-memory SQLite database for the unit tests that build
 * lockblame's tables in one (SQLite loaded through util/lazy_deps.h, as
 * the library loads it). Include after check.h. */
#ifndef LB_TESTS_MEMORY_DB_H
#define LB_TESTS_MEMORY_DB_H
#include <sqlite3.h>
#include <string.h>

#include "util/lazy_deps.h"

static inline sqlite3 *open_memory_db(void)
{
    char why[256];
    ASSERT_TRUE(lb_sqlite_open(why, sizeof why));
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
              SQLITE_OK);
    return db;
}

/* The text of a query's first column in its first row, "" for NULL
 * (malloc'd). */
static inline char *memory_db_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    const char *t = (const char *)sqlite3_column_text(st, 0);
    char *copy = strdup(t ? t : "");
    sqlite3_finalize(st);
    return copy;
}
#endif
