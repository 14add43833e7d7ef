/* An empty in-memory SQLite database for the unit tests that build
 * lockblame's tables in one (SQLite loaded through util/lazy_deps.h, as
 * the library loads it). Include after check.h. */
#ifndef LB_TESTS_MEMORY_DB_H
#define LB_TESTS_MEMORY_DB_H
#include <sqlite3.h>

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
#endif
