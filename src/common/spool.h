/* A run's pending profiles. Adding a profile to the run's database costs
 * a process the database's schema, its file lock, its journal and its
 * pages, whatever little it recorded. A process whose profile needs
 * nothing from the database (it resolved no name the run lacked, and it
 * is the last image of its process) instead writes the profile, its
 * row log (common/rowlog.h), as one record file in the run's spool
 * directory, <database>-spool; the next process that adds to the database
 * (the tree's root at its end, any process that commits, a time window, or
 * the CLI before it reads) adds the pending records in the same
 * transaction, oldest first.
 *
 * A record is <run key>.<CLOCK_MONOTONIC ns, 20 digits>.<pid>.lbrec,
 * written under a temporary name and renamed into place, so a record is
 * whole or absent. A merger claims a record by renaming it to
 * <record>.<merger pid>.claim before it reads it: one rename wins, so no
 * record is merged twice. After its commit the merger removes what it
 * claimed; after a failure it renames the claims back. A claim whose
 * merger is gone is given back by the next merger; a merger that ended
 * after its commit, before removing its claims, added them already, and
 * the next merger, finding their process images in the database, drops
 * them. Records of another run key are stale (a run that replaced this
 * one in the database) and are removed, and so are the temporary files
 * of writers that are gone. A damaged record is renamed to <record>.bad
 * and said in one line; one that a merger could not read for want of
 * memory, descriptors or disk stays pending.
 *
 * Depends on SQLite, common/rowlog.h and common/db_merge.h; used by the
 * library's writer
 * and the CLI, on one thread each. */
#ifndef LB_COMMON_SPOOL_H
#define LB_COMMON_SPOOL_H
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* The spool directory of the database at db_path. */
void lb_spool_dir(char *buf, size_t size, const char *db_path);

/* Whether run_key can name records (letters, digits, '.', '_', '-'). */
bool lb_spool_key_ok(const char *run_key);

/* Write bytes as a record of run_key: 0, or -1 and nothing left behind
 * (the caller adds its profile itself). */
int lb_spool_put(const char *db_path, const char *run_key, const void *bytes, size_t n);

/* Whether the spool directory holds any record of run_key (NULL: of any
 * run), or a claim of one whose merger is gone: a directory read, no
 * SQLite. */
bool lb_spool_has_records(const char *db_path, const char *run_key);

/* About how many records may wait (LOCKBLAME_SPOOL_MAX) before a
 * process that would add one commits instead, adding the oldest with its
 * own profile (report/writer/spool_bound.h). */
#define LB_SPOOL_MAX_DEFAULT 256u

/* The bound that LOCKBLAME_SPOOL_MAX's value v sets: a number of records
 * (0: no bound; NULL or empty: the default). Any other value gives the
 * default, and why[] the line that says so (else why[0] is '\0'). */
unsigned lb_spool_max_setting(const char *v, char *why, size_t size);

typedef struct lb_spool_batch {
    char dir[PATH_MAX];
    char **claimed; /* the claimed files' names in dir */
    unsigned n, cap;
    unsigned bad;  /* records that could not be read */
    unsigned left; /* records listed beyond `most`, left for a later commit */
    bool staged;   /* schema "pending" is attached and holds the claimed records */
} lb_spool_batch_t;

/* Outside any transaction of db: claim run_key's records, the oldest
 * `most` of them (0: all), and copy them into the in-memory schema
 * "pending", attached here, except those whose process image the
 * attached schema dst (the run's database) holds already (b->left counts
 * the records beyond `most`). Each record's
 * unnamed frames are named (common/frame_names.h) from dst's cached
 * chains or the module files. Returns
 * SQLITE_OK (b->staged says whether there was anything), or an SQLite
 * error after which nothing stays claimed (a record fails the stage when
 * this process lacks memory, descriptors or disk: it stays pending). */
int lb_spool_stage(sqlite3 *db, const char *db_path, const char *run_key, const char *dst,
                   unsigned most, lb_spool_batch_t *b);

/* Inside the caller's transaction: the staged records into schema dst. */
int lb_spool_merge(sqlite3 *db, const char *dst, const lb_spool_batch_t *b);

/* After the caller's transaction: committed, the claimed records are
 * removed; otherwise they are given back. "pending" is detached. */
void lb_spool_finish(sqlite3 *db, lb_spool_batch_t *b, bool committed);

/* Remove the spool directory if nothing is left in it. */
void lb_spool_remove_dir(const char *db_path);
#endif
