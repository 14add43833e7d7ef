/*
 * db.h - opening and validating a lockblame database.
 */
#ifndef LB_CLI_DB_H
#define LB_CLI_DB_H

#include <sqlite3.h>

/* The flags every connection of the CLI is opened with besides its mode:
 * a connection is used by the one thread that opened it (`run`'s merge
 * thread opens its own), so SQLite need not take the connection's mutex
 * around every call, each column read included (in a report of 300
 * records a fifth of the instructions its reads ran). */
#define LB_DB_OPEN_OWN SQLITE_OPEN_NOMUTEX

/* Open `path` read-only after checking that it is a non-empty, untruncated
 * SQLite file whose meta.schema_version this CLI reads and that has every
 * table of schema version 1. On any problem: one "lockblame:" line and
 * exit 2 (exit 1 only for out-of-memory). Never returns NULL. */
sqlite3 *lb_db_open(const char *path);

/* Report an SQLite error met while reading `path` and exit 2: an error in
 * the middle of a read means the file is corrupt or truncated. */
_Noreturn void lb_db_fail(sqlite3 *db, const char *path, const char *what);

#endif
