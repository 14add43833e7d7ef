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

/* Create every table in the attached database `schema` ("main", "out").
 * Returns SQLITE_OK or the first error (the caller's transaction, if any,
 * decides what is kept). */
int lb_ddl_create(sqlite3 *db, const char *schema);
#endif
