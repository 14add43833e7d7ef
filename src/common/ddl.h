/* The tables of docs/SCHEMA.md (schema version LB_SCHEMA_VERSION of
 * common/schema.h), shared by
 * the library's writer and the CLI's merge, so that both create the same
 * database. Change this, docs/SCHEMA.md and the CLI's loader together.
 * Depends on nothing but SQLite. */
#ifndef LB_COMMON_DDL_H
#define LB_COMMON_DDL_H
#include <sqlite3.h>

#include "common/schema.h"

/* The table names, in creation order; NULL-terminated. */
extern const char *const lb_ddl_tables[];

/* Create every table in the attached database `schema` ("main", "out"),
 * and the index below. Returns SQLITE_OK or the first error (the caller's
 * transaction, if any, decides what is kept). */
int lb_ddl_create(sqlite3 *db, const char *schema);
/* The meta rows of a database just created in `schema`: its schema
 * version, lockblame's version, and who wrote it (writer). */
int lb_ddl_meta(sqlite3 *db, const char *schema, const char *writer);
/* The tables a process's profile holds rows in, in schema (a process's
 * in-memory "main", or the schema a pending profile is replayed into:
 * common/spool.h): the tables before time_window (a window's rows go
 * straight to the run's database, window_write.c), in one transaction,
 * without the index (its run table has one row). A merge of such a
 * database skips the tables it lacks (common/db_merge.h). */
int lb_ddl_create_profile(sqlite3 *db, const char *schema);
/* The name of the first table after the profile's (lb_ddl_tables). */
#define LB_DDL_PROFILE_END "time_window"
/* The index run_process on run(run_key, pid, proc_start), if `schema` has
 * none (a database an older build created): what a commit asks of the
 * run table (another run's rows? earlier images of this process?) is an
 * index search, not a scan of every process the run wrote. Not part of the
 * tables' interface: a database without it reads and merges the same. */
int lb_ddl_create_index(sqlite3 *db, const char *schema);
#endif
