/* The run's pending profiles (common/spool.h), added by the CLI: by
 * `run` when its tree has ended, and before any command reads a
 * database, so that a report of a tree that is still running, or whose
 * root was killed, shows every process that ended. */
#ifndef LB_CLI_PENDING_H
#define LB_CLI_PENDING_H
#include <sqlite3.h>
#include <stdbool.h>

#include "common/ledger.h"

/* Adds the pending profiles of run_key (NULL: of the run the database
 * holds) to the database at path in one transaction. Silent when there
 * are none; one line when they cannot be added (the database is
 * read-only to this user, or busy past the timeout), which leaves them
 * pending. */
void lb_cli_add_pending(const char *path, const char *run_key);

/* The tree's ledger (common/ledger.h) at ledger_path mapped shared,
 * writable or not (munmap it with sizeof(lb_ledger_t)); NULL when it
 * cannot be (*present: whether there is a file at all). */
lb_ledger_t *lb_cli_ledger_map(const char *ledger_path, bool writable, bool *present);

/* Beside a running tree (`run`'s merger, run_merge.h): the oldest of
 * run_key's pending files, up to about `most` records, added to the
 * database at path in one transaction; the open log is left to its
 * writers. *db is the caller's connection, opened here at first (the
 * database made if no process of the tree made it). Whether more
 * pending files wait; *failed when nothing could be added (the database
 * cannot be made, opened or written, or is not ours), which is left
 * unsaid: the final merge (lb_cli_add_pending) says why, once. */
bool lb_cli_merge_sealed(sqlite3 **db, const char *path, const char *run_key, unsigned most,
                         bool *failed);
#endif
