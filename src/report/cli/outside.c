/*
 * outside.c - the header's "outside:" line (outside.h).
 */
#include "report/cli/outside.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>

/* The meta value of key in the database at path, 0 if none. */
static int64_t meta_integer(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

void lb_print_outside(const struct lb_profile *p, FILE *out)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(p->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    int64_t us = meta_integer(db, "shared_outside_us");
    int64_t waits = meta_integer(db, "shared_outside_waits");
    sqlite3_close(db);
    if (waits <= 0)
        return;
    fprintf(out,
            "outside:  %.3f s of waiting on process-shared objects (%" PRId64
            " waits) was ended by processes outside the profiled tree: their releases, posts"
            " and signals are not seen, so it is unattributed%s\n",
            (double)us / 1e6, waits,
            p->nselected != p->nprocs ? " (the whole database's figure)" : "");
}
