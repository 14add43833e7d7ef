/* The in-memory database a process's profile is built in (schema
 * common/ddl.h), and the copy of it, tables created and nothing written,
 * that a process which forks repeatedly hands to its fork children.
 *
 * Loading SQLite and creating the profile's 13 tables is about a third
 * of what a small process's exit write costs. A fork child inherits its
 * parent's memory: SQLite already loaded and relocated, and a database
 * whose tables exist. So at its second fork a process builds such a
 * database (the template) in the forking thread, before the fork, and
 * every later fork child starts its exit write from its own copy of it.
 * An exec'd process starts from nothing and creates its own. With the
 * template the builder also reads the names the run's database holds for
 * its modules (symcache.h), so that a fork child names its frames
 * without opening the database, and its profile can wait in the run's
 * spool (common/spool.h) instead of being added there by the child.
 * Where the children's profiles wait in the spool (under `lockblame
 * run`, whose database no process of the tree reads: `run` makes it and
 * adds the tree's profiles, report/cli/run_merge.h; and under plain
 * LD_PRELOAD with the spool on) the template holds the modules and no
 * database: every child's profile waits in the spool with what the
 * modules cannot name left to the merge, and a process that loaded
 * SQLite for its children would make each child run SQLite's and libm's
 * destructors at exit (pages of their data and code, 6 faults a child).
 *
 * Invariants:
 *  - The template is built only in fork_prepare, in the forking thread,
 *    after the window lock is taken (window_thread.c): no thread of
 *    lockblame is inside SQLite when the fork copies the process, so no
 *    child inherits a held SQLite mutex.
 *  - It is used at most once per process copy: lb_profile_db_take claims
 *    it with one atomic exchange before touching it. A fork child whose
 *    copy was claimed by its parent (possibly half-used) drops its pointer
 *    without touching the database; an unclaimed copy is the child's.
 *  - Building it never changes what the program sees: errno is kept, the
 *    calls into SQLite run as lockblame's own (lb_enter), on a stack of
 *    lockblame's own, and a failure is silent (the exit write then creates
 *    its database and says what failed). */
#ifndef LB_PROFILE_DB_H
#define LB_PROFILE_DB_H
#include <sqlite3.h>
#include <stdbool.h>

#include "common/rowlog.h"

#include "report/writer/symcache.h"

/* A new in-memory database with the profile's tables; SQLite's code, or
 * SQLITE_OK with *db set. On failure *db may still be set (for
 * sqlite3_errmsg; the caller closes it). SQLite must be loaded. */
int lb_profile_db_create(sqlite3 **db);
/* The exit write's database: the template when this process holds an
 * unclaimed one, else a new one; its journal is off (the profile is
 * built once and copied, never rolled back). SQLite's code as above.
 * *names: with the template, the run's names its builder read
 * (lb_symcache_preload), else NULL. With lazy and no template or a
 * template without a database, *db is NULL and SQLITE_OK: a write whose
 * profile may wait in the spool logs its rows without a database, and
 * creates one (lb_profile_db_new) only if it commits after all; without
 * lazy, a template without a database gets a new one. */
int lb_profile_db_take(sqlite3 **db, lb_symcache_t **names, bool lazy);
/* A new database for the exit write, as lb_profile_db_take creates. */
int lb_profile_db_new(sqlite3 **db);
/* kind's statement (common/rowlog.h) on db's main schema: when db is
 * this process's template, the one the template prepared ahead, handed
 * out once; else prepared now. NULL on failure. */
sqlite3_stmt *lb_profile_db_statement(sqlite3 *db, enum lb_row_kind kind);
/* Fork hooks of the writer (core/hooks.h): count the forks, build the
 * template at the second; in the child, drop a claimed copy and start
 * counting anew. */
void lb_profile_db_fork_prepare(void);
void lb_profile_db_fork_child(void);
#endif
