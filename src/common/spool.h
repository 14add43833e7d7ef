/* A run's pending profiles. Adding a profile to the run's database costs
 * a process the database's schema, its file lock, its journal and its
 * pages, whatever little it recorded. A process whose profile needs
 * nothing from the database (it resolved no name the run lacked, and it
 * is the last image of its process) instead appends the profile, its
 * row log (common/rowlog.h), as one record to the run's log in the spool
 * directory, <database>-spool; the next process that adds to the database
 * (the tree's root at its end, any process that commits, a time window, or
 * the CLI before it reads) adds the pending records in the same
 * transaction, oldest first (records an earlier build wrote whole before
 * the others).
 *
 * The log is <run key>.lblog: frames of a 24-byte header ("LBFRAME1", the
 * record's length and a checksum of it, host byte order) and the record,
 * each appended with one writev(2) (O_APPEND) under the file's flock,
 * which its writers take one at a time. No file is created per record:
 * creating and removing one costs an inode, which ext4 without a journal
 * allocates slowly after removals. A log is sealed by renaming it to
 * <run key>.<CLOCK_MONOTONIC ns, 20 digits>.<pid>.lbframes, a pending
 * file: by a writer after every LB_SPOOL_LOG_RECORDS records the tree put,
 * by the writer whose record took it past LB_SPOOL_LOG_BYTES or would take
 * it past the process's file size limit (then into a new log), and by a
 * merger that takes all, or finds no pending file, before it lists. A
 * writer that finds, once it holds the lock, that the log it opened is no
 * longer the one at its name (sealed meanwhile) opens the new one; a
 * merger reads a pending file only under the same lock, so a write under
 * way to a log just sealed ends first. Nobody blocks on the lock (a
 * process that forks while it holds it hands it to its child): a writer
 * that cannot take it within ~100 ms adds its profile itself, and a
 * merger leaves the file for a later one. A writer whose write stops
 * short (the disk full) cuts the part off again under the lock and adds
 * its profile itself; a frame left unfinished all the same (the writer
 * killed inside the write, the cut refused) fails its checksum and is
 * skipped up to the next frame's magic.
 *
 * A merger claims a pending file by renaming it to
 * <file>.<merger pid>.claim before it reads it: one rename wins, so no
 * record is merged twice. After its commit the merger removes what it
 * claimed; after a failure it renames the claims back. A claim whose
 * merger is gone is given back by the next merger; a merger that ended
 * after its commit, before removing its claims, added them already, and
 * the next merger, finding their process images in the database, drops
 * them. Files of another run key are stale (a run that replaced this one
 * in the database) and are removed, and so are the temporary files of
 * writers of an earlier build that are gone. A file with a damaged record
 * is renamed to <file>.bad (after the commit that added its whole
 * records) and said in one line; one that a merger could not read for
 * want of memory or descriptors stays pending. A pending file may also be
 * <run key>.<ns>.<pid>.lbrec, one record whole, as an earlier build wrote
 * them; an earlier build's merger leaves .lbframes and .lblog files to a
 * merger of this one.
 *
 * Depends on SQLite and common/spool_records.h; used by the
 * library's writer
 * and the CLI, on one thread each. */
#ifndef LB_COMMON_SPOOL_H
#define LB_COMMON_SPOOL_H
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The spool directory of the database at db_path. */
void lb_spool_dir(char *buf, size_t size, const char *db_path);

/* Whether run_key can name records (letters, digits, '.', '_', '-'). */
bool lb_spool_key_ok(const char *run_key);

/* Append bytes as a record of run_key to the run's log: 0, or -1 (the
 * caller adds its profile itself; a part of its frame written is cut off
 * again). */
int lb_spool_put(const char *db_path, const char *run_key, const void *bytes, size_t n);

/* About how many records, and bytes, a run's log holds before a writer
 * seals it: a commit that adds a batch of pending records takes whole
 * files, and a merger reads a file whole. */
#define LB_SPOOL_LOG_RECORDS 16u
#define LB_SPOOL_LOG_BYTES   (4u << 20)

/* Seal run_key's log (a rename; nothing if there is none). */
void lb_spool_seal(const char *db_path, const char *run_key);

/* Whether the spool directory holds any record of run_key (NULL: of any
 * run): its log, a pending file, or a claim of one whose merger is gone:
 * a directory read, no SQLite. */
bool lb_spool_has_records(const char *db_path, const char *run_key);
/* How many pending files of run_key the spool holds (sealed logs, the
 * claims of mergers that are gone), and in *oldest_age_ns how long ago
 * the oldest of them was sealed (0 for none). */
unsigned lb_spool_sealed(const char *db_path, const char *run_key, uint64_t *oldest_age_ns);

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
    char **claimed;        /* the claimed files' names in dir */
    unsigned char **bytes; /* claimed[i]'s bytes, which its held records are */
    bool *damaged;         /* claimed[i] also held damaged frames: kept as .bad after the commit */
    unsigned n, cap;
    unsigned records;              /* records held, or found in dst already */
    unsigned bad;                  /* records that could not be read */
    unsigned left;                 /* files left for a later commit (lb_spool_stage) */
    bool staged;                   /* `held` holds records to add */
    struct lb_spool_records *held; /* common/spool_records.h */
} lb_spool_batch_t;

/* How a merger takes the run's records (lb_spool_stage). */
enum lb_spool_take {
    LB_SPOOL_TAKE_ALL,    /* the open log sealed first */
    LB_SPOOL_TAKE_OLDEST, /* the open log sealed when no pending file is there */
    LB_SPOOL_TAKE_SEALED, /* pending files only: a merger beside a running tree */
};

/* Outside any transaction of db: claim run_key's pending files, the
 * oldest of them up to `most` records (0: no limit; whole files, so up to
 * LB_SPOOL_LOG_RECORDS - 1 more), as `take` says, read them, and hold
 * their records for lb_spool_merge into the attached schema dst (the
 * run's database) (b->left counts what was left: the files beyond
 * `most`, those a writer still held, an open log not sealed); the names
 * the records leave to the merge are read now, from dst's cached chains
 * or the module files (common/spool_records.h). Returns
 * SQLITE_OK (b->staged says whether there was anything: else nothing
 * stays claimed, and b is finished), or an SQLite error after which
 * nothing stays claimed (a record fails the stage when this process
 * lacks memory or descriptors: it stays pending). */
int lb_spool_stage(sqlite3 *db, const char *db_path, const char *run_key, const char *dst,
                   enum lb_spool_take take, unsigned most, lb_spool_batch_t *b);

/* What made lb_spool_stage fail with rc: db's message, or rc's where
 * the failure was the spool's (a read, memory). */
const char *lb_spool_error(sqlite3 *db, int rc);

/* Inside the caller's transaction on db: the staged records into the
 * stage's schema dst (both lb_spool_stage's). A record whose rows SQLite refuses for their values is
 * left out and counted in b->bad (its file kept as .bad). SQLITE_OK, or
 * this process's failure (the caller rolls back). */
int lb_spool_merge(lb_spool_batch_t *b);

/* After the caller's transaction: committed, the claimed records are
 * removed; otherwise they are given back. What the batch held is
 * released (common/spool_records.h lb_spool_records_free). */
void lb_spool_finish(lb_spool_batch_t *b, bool committed);

/* Remove the spool directory if nothing is left in it. */
void lb_spool_remove_dir(const char *db_path);
#endif
