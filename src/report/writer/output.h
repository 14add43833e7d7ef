/* Where a process tree's profiles go: one database per run.
 *
 * The first profiled process of a tree (no LOCKBLAME_RUN in its
 * environment) starts a run: it makes up the run key and, without
 * LOCKBLAME_OUTPUT, the name lockblame.<prog>.<pid>.db in its working
 * directory (absolute), and puts both into the environment, so children
 * and exec'd images of the tree write into the same file.
 *
 * A process adds its profile in one SQLite transaction (BEGIN
 * IMMEDIATE, busy timeout), so concurrent exits serialize and the file is
 * never half-written: a writer that dies mid-way leaves a hot journal
 * that the next opener rolls back. Rows of another run (another run key)
 * are deleted in the same transaction: a new run replaces an old one.
 * A file that is not a lockblame database is never written.
 *
 * A small profile may instead wait in the run's spool (common/spool.h,
 * lb_output_spool); every commit here adds the pending profiles first. */
#ifndef LB_WRITER_OUTPUT_H
#define LB_WRITER_OUTPUT_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At start, in a constructor before core's: choose the path and the run key and check
 * what is at the path. Returns 0; or -1 after one lockblame: line when the
 * path holds something that is not a lockblame database (the caller runs
 * the program unprofiled; LOCKBLAME_DISABLE=1 is exported so that the
 * tree's other processes stay quiet). Inside a run, the run's own
 * database without an SQLite header yet, or torn, is not such a file
 * (common/ledger.h, lb_ledger_of_run). */
int lb_output_setup(void);
const char *lb_output_path(void);
/* This process started the tree (it made the run key; an exec'd image of
 * it still did): LOCKBLAME_TREE_ROOT, which it exports, is its pid. */
bool lb_output_tree_root(void);
const char *lb_output_run_key(void);
/* This image made the run key: the first image of the tree's root. */
bool lb_output_started_run(void);

/* SQLite busy handler for a connection to the run's database: retries
 * after 0.1, then 0.5, then 2 ms until the monotonic deadline (ns, a
 * uint64_t at `deadline`); SQLite's own sleeps reach 100 ms a try. */
int lb_output_busy(void *deadline, int tries);

/* Attach the run's database to db as "out", outside any transaction of
 * db: before the profile's build begins, so that the name cache reads it
 * and the commit adds to it on one connection, with one parse of its
 * schema. true when attached; false, silently, otherwise (the commit
 * attaches it then, and says why it cannot). */
bool lb_output_attach(sqlite3 *db);
/* A write's failure, an SQLite result code and its text: one line
 * "cannot write profile PATH: why", or, in a process's final write, left
 * to the tree's summary (ledger.h, lb_ledger_failure_left). */
void lb_output_cannot_write(int code, const char *why);
/* Copy the profile in db's main schema into the run's database, attached
 * already when attached says so; empty: the tables known to hold no rows
 * there (lb_db_merge). Returns 0, or -1 after one lockblame: line; the
 * file is then as it was, and db has it detached. */
int lb_output_commit(sqlite3 *db, bool attached, unsigned empty);
/* The same transaction with add(db, arg) in place of the profile's copy
 * (the time windows, window_write.c); add returns an SQLite code. */
int lb_output_commit_with(sqlite3 *db, int (*add)(sqlite3 *db, void *arg), void *arg);
/* The run's pending profiles (common/spool.h), all of them, added in a
 * transaction of their own: 0 (none, or added), or -1 after one
 * lockblame: line. */
int lb_output_merge_pending(void);
/* The run's sealed pending files (common/spool.h, LB_SPOOL_TAKE_SEALED),
 * the oldest up to `most` records a transaction, again while a
 * transaction was full (a tail of a file or two waits for a later
 * commit, not a transaction of its own): 0 (none sealed, or added), or -1
 * after one lockblame: line. A merger beside the running tree
 * (report/writer/merger.h). */
int lb_output_merge_sealed(unsigned most);
/* A profile's row log (common/rowlog.h, with its header) as a pending
 * record of the run: 0, or -1 (nothing written; the caller commits it). */
int lb_output_spool(const void *rows, size_t n);
/* The run's open log of pending records sealed (common/spool.h). */
void lb_output_seal_spool(void);
/* Whether processes may leave their profiles pending (LOCKBLAME_SPOOL,
 * read at setup: 1, the default, or 0). */
bool lb_spool_enabled(void);
/* The spool directory, if empty. */
void lb_output_remove_spool(void);
#endif
