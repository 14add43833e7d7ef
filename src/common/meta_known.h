/* A merge's view of the run's meta rows, so that a record's meta row
 * that would change nothing is left out (common/spool_records.c).
 *
 * A record carries ~19 meta rows, each merged by lb_db_merge_meta_row_sql's
 * upsert (common/db_merge.c): a counter summed, a setting kept as the
 * first process gave it, the version keys left as they are. Most of them
 * change nothing (a counter at 0, a setting already there), yet each ran
 * its statement: a fifth of a record's merge. lb_meta_known_changes
 * answers from dst's meta, read once at the first question and kept as
 * the rows it says yes to leave it; it says yes wherever it cannot tell.
 *
 * Not thread-safe: one merge's, on the thread that merges. */
#ifndef LB_COMMON_META_KNOWN_H
#define LB_COMMON_META_KNOWN_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/rowlog.h"

typedef struct lb_meta_known_entry lb_meta_known_entry_t;

typedef struct lb_meta_known {
    bool loaded; /* dst's rows read (or a failed read: every row changes) */
    bool failed;
    lb_meta_known_entry_t *e;
    size_t n, cap;
} lb_meta_known_t; /* zero: nothing read yet */

/* Whether the meta row (key, value), as the log holds its values, would
 * change dst's meta through the upsert; true where that is not known
 * (a value not text, a sum past 18 digits, dst's rows unreadable). A
 * true answer takes the row as added: call it only for a row that is
 * then added, and lb_meta_known_forget when an added row is undone. */
bool lb_meta_known_changes(lb_meta_known_t *m, sqlite3 *db, const char *dst,
                           const lb_row_value_t *key, const lb_row_value_t *value);
/* Back to nothing read (after a savepoint's undo; and to free it). */
void lb_meta_known_forget(lb_meta_known_t *m);
#endif
