/*
 * tree_notes.c - the header's "outside:" and "unwritten:" lines
 * (tree_notes.h).
 */
#include "report/cli/tree_notes.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "common/ledger.h"
#include "report/cli/db.h"

/* The meta value of key, 0 if none. */
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

void lb_print_tree_notes(const struct lb_profile *p, FILE *out)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(p->path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    int64_t outside_us = meta_integer(db, "shared_outside_us");
    int64_t outside_waits = meta_integer(db, "shared_outside_waits");
    int64_t unwritten = meta_integer(db, "processes_unwritten");
    int64_t while_writing = meta_integer(db, "processes_unwritten_writing");
    int64_t killed_waits = meta_integer(db, "shared_killed_waits");
    int64_t failed = meta_integer(db, "processes_unwritten_failed");
    int64_t failure = meta_integer(db, "processes_unwritten_failure");
    sqlite3_close(db);
    const char *whole = p->nselected != p->nprocs ? " (the whole database's figure)" : "";
    if (outside_waits > 0)
        fprintf(out,
                "outside:  %.3f s of waiting on process-shared objects (%" PRId64
                " waits) was ended by processes outside the profiled tree: their releases, posts"
                " and signals are not seen, so it is unattributed%s\n",
                (double)outside_us / 1e6, outside_waits, whole);
    if (unwritten > 0 || killed_waits > 0) {
        char text[512] = "";
        lb_ledger_tally_t t = { .before_writing = (int)(unwritten - while_writing - failed),
                                .while_writing = (int)while_writing,
                                .failed = (int)failed,
                                .failure = (int)failure };
        lb_ledger_text(&t, text, sizeof text);
        fprintf(out, "unwritten: %s", text);
        if (killed_waits > 0)
            fprintf(out,
                    "%s%" PRId64 " wait(s) on process-shared objects were in progress in processes"
                    " killed outright: the tree dropped them from the objects' accounting when it"
                    " found those processes gone, so no row counts them and the other processes'"
                    " releases are not blamed for them",
                    text[0] ? "; " : "", killed_waits);
        fputc('\n', out);
    }
}
