/* The run's pending profiles (common/spool.h), added by the CLI: by
 * `run` when its tree has ended, and before any command reads a
 * database, so that a report of a tree that is still running, or whose
 * root was killed, shows every process that ended. */
#ifndef LB_CLI_PENDING_H
#define LB_CLI_PENDING_H

/* Adds the pending profiles of run_key (NULL: of the run the database
 * holds) to the database at path in one transaction. Silent when there
 * are none; one line when they cannot be added (the database is
 * read-only to this user, or busy past the timeout), which leaves them
 * pending. */
void lb_cli_add_pending(const char *path, const char *run_key);
#endif
