/* The run's database: its name, its run key, the check of what is already
 * at the path, and the one transaction that adds a process's profile.
 * See output.h for the invariants. lb_output_setup runs once per image,
 * in the constructor; lb_output_commit once, on the finishing thread. */
#include "report/writer/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "common/db_name.h"
#include "common/ddl.h"
#include "common/ledger.h"
#include "common/spool.h"
#include "common/switches.h"
#include "common/version.h"
#include "report/writer/ledger.h"
#include "report/writer/spool_bound.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/lazy_deps.h"
#include "util/log.h"
#include "util/proc_numbers.h"
#include "util/std_fds.h"

/* Concurrent exits wait for each other this long (ms): a make -j of a big
 * tree may queue many writers, each holding the lock for milliseconds. */
#define LB_BUSY_TIMEOUT_MS 120000

static char output_path[PATH_MAX];
static char run_key[64];
static bool spool_off;   /* LOCKBLAME_SPOOL=0 */
static bool started_run; /* this image made the run key */

bool lb_output_started_run(void)
{
    return started_run;
}

bool lb_spool_enabled(void)
{
    return !spool_off;
}

const char *lb_output_path(void)
{
    return output_path;
}

bool lb_output_tree_root(void)
{
    return lb_getenv_pid("LOCKBLAME_TREE_ROOT") == (long)lb_own_pid();
}

const char *lb_output_run_key(void)
{
    return run_key;
}

static void say_switch(const char *line)
{
    lb_warn("%s", line);
}

/* Export a variable to the tree. setenv only in the constructor, before
 * the program's main can read or copy the environment. */
static void export_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0)
        lb_warn("cannot pass %s to child processes: %s", name, strerror(errno));
}

/* Inside the run run_key, whether the file at path, which is not (yet) an
 * SQLite database, is the run's own: made by a process of the run that
 * is still writing its first page, or torn by a write that failed (a
 * full disk). It is when the run's ledger beside it was made for this
 * run (common/ledger.h, lb_ledger_of_run): its maker made it after the
 * path passed the run's check, which a file that is not a lockblame
 * database fails. Outside a run, never. */
static bool runs_own(const char *path, const char *run)
{
    return run && *run && lb_ledger_of_run(path, run);
}

/* What is at path: 0 nothing or a lockblame database we may add to, else
 * -1 after one line. */
static int check_existing(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode)) { /* a link planted there is not followed */
        lb_warn("output %s is not a regular file; not profiling", path);
        return -1;
    }
    if (st.st_size == 0)
        return 0; /* being created by another process of the run, or empty */
    char magic[16] = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, magic, sizeof magic) : -1;
    if (fd >= 0)
        close(fd);
    const char *run = lb_getenv("LOCKBLAME_RUN");
    /* (SQLite writes a database's first page whole: a file shorter than
     * its header is no database, unless it is the run's own, whose first
     * page a process of the run has not written yet or could not write:
     * that one goes on, and its commit fails or not as the others') */
    if (n >= 0 && (n < (ssize_t)sizeof magic || !lb_db_sqlite_header(magic, sizeof magic)) &&
        !runs_own(path, run)) {
        lb_warn("output %s exists and is not a lockblame database; not overwriting it,"
                " not profiling",
                path);
        return -1;
    }
    /* A process started inside a run leaves the rest to the commit, which
     * checks again under the lock (not SQLite, or not lockblame's: no
     * write), and so loads no SQLite at start-up (util/lazy_lib.h). Its
     * output may not be its root's (a LOCKBLAME_OUTPUT set inside the
     * tree): the header above is read all the same. */
    if (run && *run)
        return 0;
    /* An SQLite file: a lockblame database unless its tables say otherwise.
     * Another process of the run may be writing it (busy): the commit
     * checks again under the lock. */
    char why[256];
    if (!lb_sqlite_open(why, sizeof why)) {
        lb_warn("cannot check output %s (%s); not profiling", path, why);
        return -1;
    }
    sqlite3 *db = NULL;
    int version = 0;
    /* before the program's main: its standard descriptors stay as it got
     * them (util/std_fds.h) */
    unsigned held = lb_std_fds_hold();
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        version = lb_db_version(db, "main");
        if (version < 0 && (sqlite3_errcode(db) & 0xff) == SQLITE_BUSY)
            version = 0;
    }
    sqlite3_close(db);
    lb_std_fds_release(held);
    if (version < 0) {
        lb_warn("output %s exists and is not a lockblame database; not overwriting it,"
                " not profiling",
                path);
        return -1;
    }
    if (version > LB_SCHEMA_VERSION) {
        lb_warn("output %s was written by a newer lockblame (schema %d); not profiling", path,
                version);
        return -1;
    }
    return 0;
}

int lb_output_setup(void)
{
    if (lb_getenv("LOCKBLAME_DISABLE"))
        return -1; /* quiet: lockblame will not start */
    const char *given = lb_getenv("LOCKBLAME_OUTPUT");
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, ".");
    char name[PATH_MAX];
    if (given && *given) {
        snprintf(name, sizeof name, "%s", given);
    } else {
        extern char *program_invocation_short_name;
        lb_default_db_name(name, sizeof name, program_invocation_short_name, (int)getpid());
    }
    /* Absolute now: the program may chdir, and children run elsewhere. */
    int n = name[0] == '/' ? snprintf(output_path, sizeof output_path, "%s", name)
                           : snprintf(output_path, sizeof output_path, "%s/%s", cwd, name);
    if (n >= (int)sizeof output_path)
        lb_warn("output path too long; writing %s", output_path);
    if (check_existing(output_path) != 0) {
        export_env("LOCKBLAME_DISABLE", "1");
        return -1;
    }
    const char *key = lb_getenv("LOCKBLAME_RUN");
    char why[256];
    if (!(key && *key) && (!lb_db_writable(output_path, why, sizeof why) ||
                           !lb_ledger_room(output_path, why, sizeof why))) {
        /* said once, by the tree's root: no process of the tree could
         * write its profile (under `lockblame run`, run says it), and
         * without room for the ledger each would say its own */
        lb_warn("cannot write profile %s: %s; not profiling", output_path, why);
        export_env("LOCKBLAME_DISABLE", "1");
        return -1;
    }
    if (key && *key) {
        snprintf(run_key, sizeof run_key, "%s", key);
    } else {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        snprintf(run_key, sizeof run_key, "%d.%lld.%06ld", (int)getpid(), (long long)tv.tv_sec,
                 (long)tv.tv_usec);
        export_env("LOCKBLAME_RUN", run_key);
        lb_unsetenv("LOCKBLAME_SAID"); /* a tree around this run said its own (util/log.h) */
        started_run = true;
        char pid[24];
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        export_env("LOCKBLAME_TREE_ROOT", pid);
        lb_switches_check(lb_getenv, say_switch); /* once for the tree (common/switches.h) */
        pid_t proc_pid = lb_proc_self_pid();      /* util/proc_numbers.h */
        if (proc_pid && proc_pid != getpid())
            lb_warn("%s", LB_PROC_NUMBERS_OTHER_LINE);
    }
    if (!given || strcmp(given, output_path) != 0)
        export_env("LOCKBLAME_OUTPUT", output_path);
    spool_off = lb_switch_off(lb_getenv("LOCKBLAME_SPOOL"));
    return 0;
}

static int sql(sqlite3 *db, const char *text)
{
    return sqlite3_exec(db, text, NULL, NULL, NULL);
}

/* Make "out" a fresh version-3 database holding no run: create the tables
 * (dropping an older lockblame version's), or empty another run's. */
static int make_fresh(sqlite3 *db, int version)
{
    int rc = SQLITE_OK;
    for (int i = 0; lb_ddl_tables[i] && rc == SQLITE_OK; i++) {
        char *q = sqlite3_mprintf(version == LB_SCHEMA_VERSION ? "DELETE FROM out.%s"
                                                               : "DROP TABLE IF EXISTS out.%s",
                                  lb_ddl_tables[i]);
        rc = q ? sql(db, q) : SQLITE_NOMEM;
        sqlite3_free(q);
    }
    if (rc == SQLITE_OK)
        rc = version != LB_SCHEMA_VERSION ? lb_ddl_create(db, "out")
                                          : lb_ddl_create_index(db, "out");
    return rc == SQLITE_OK ? lb_ddl_meta(db, "out", "liblockblame") : rc;
}

void lb_output_cannot_write(int code, const char *why)
{
    if (!lb_ledger_failure_left(code))
        lb_warn("cannot write profile %s: %s", output_path, why);
}

/* A commit's failure (lb_output_cannot_write). A commit of the pending
 * profiles alone (lb_output_merge_pending) says so. */
static void say_cannot_write(sqlite3 *db, bool pending_only)
{
    if (pending_only)
        lb_warn("cannot add the run's pending profiles to %s: %s", output_path, sqlite3_errmsg(db));
    else
        lb_output_cannot_write(sqlite3_errcode(db), sqlite3_errmsg(db));
}

/* "out" is the run's own, torn by a write that failed (lb_db_version
 * failed: common/ledger.h, lb_ledger_torn_own). Its line is a failed
 * write's, left to the tree's summary. */
static bool torn_own(sqlite3 *db)
{
    return lb_ledger_torn_own(sqlite3_errcode(db), output_path, run_key);
}

/* Inside the transaction: is "out" ready for our rows? 0 yes, else -1
 * after one line (a foreign file, or the run's own torn). */
static int prepare_out(sqlite3 *db, bool pending_only)
{
    int version = lb_db_version(db, "out");
    if (version < 0 && torn_own(db)) {
        say_cannot_write(db, pending_only);
        return -1;
    }
    if (version < 0 || version > LB_SCHEMA_VERSION) {
        lb_warn("output %s is not a lockblame database (of this version); not overwriting it",
                output_path);
        return -1;
    }
    bool other_run = version == LB_SCHEMA_VERSION && lb_db_other_run(db, "out", run_key, 1) == 1;
    if (version == LB_SCHEMA_VERSION && !other_run)
        return 0;
    int rc = make_fresh(db, version);
    if (rc != SQLITE_OK) {
        say_cannot_write(db, pending_only);
        return -1;
    }
    return 0;
}

/* SQLite busy handler for the commit: processes of one run that exit
 * together queue on the file's write lock, each holding it for a few
 * milliseconds. sqlite3_busy_timeout's backoff sleeps up to 100 ms a try,
 * far longer than such a hold; retry after 0.1 ms, then 0.5 ms, then 2 ms,
 * until the deadline.
 * Returns nonzero to retry, 0 to give up (SQLITE_BUSY). */
int lb_output_busy(void *deadline, int tries)
{
    if (lb_monotonic_ns() >= *(const uint64_t *)deadline)
        return 0;
    long us = tries < 20 ? 100 : tries < 200 ? 500 : 2000;
    struct timespec pause = { 0, us * 1000 };
    nanosleep(&pause, NULL); /* a program's signal cuts it short: just retry */
    return 1;
}

static int merge_main(sqlite3 *db, void *arg)
{
    return lb_db_merge(db, "main", "out", *(const unsigned *)arg);
}

static int attach_out(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "ATTACH ?1 AS out", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, output_path, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(st);
    return rc;
}

bool lb_output_attach(sqlite3 *db)
{
    return attach_out(db) == SQLITE_OK;
}

/* The most pending records a process adds besides its own profile,
 * unless it is the tree's root: a process's exit is not made to wait for
 * a whole tree's. */
#define LB_PENDING_BATCH 16

/* One line for n of the batch's pending records that could not be read
 * (their bytes are no record, or SQLite refused their values). */
static void say_unread(const lb_spool_batch_t *pending, unsigned n)
{
    lb_warn("%u pending profile(s) of this run could not be read; kept as *.bad in %s", n,
            pending->dir);
}

/* Which pending records a commit takes, and how many at most (0: no
 * limit; common/spool.h, lb_spool_stage). */
typedef struct pending_take {
    enum lb_spool_take take;
    unsigned most;
} pending_take_t;

/* The oldest `most` records, or all of them (0). */
static pending_take_t oldest_or_all(unsigned most)
{
    return (pending_take_t){ most ? LB_SPOOL_TAKE_OLDEST : LB_SPOOL_TAKE_ALL, most };
}

/* The run's pending records (common/spool.h) claimed and held for the
 * commit, outside any transaction, as `take` says; one line for records
 * that could not be read. false when they could not be staged (none
 * is). */
static bool stage_pending(sqlite3 *db, pending_take_t take, lb_spool_batch_t *pending)
{
    int rc = lb_spool_stage(db, output_path, run_key, "out", take.take, take.most, pending);
    bool staged = rc == SQLITE_OK;
    if (!staged && !lb_ledger_failure_left(0)) /* (the root adds them, or says why) */
        lb_warn("cannot add the run's pending profiles to %s now: %s", output_path,
                lb_spool_error(db, rc));
    if (pending->bad)
        say_unread(pending, pending->bad);
    return staged;
}

static int add_nothing(sqlite3 *db, void *arg)
{
    (void)db;
    (void)arg;
    return SQLITE_OK;
}

/* One transaction that adds the pending records `take` names, then what
 * add adds; *taken (if not NULL): the records it took out of the spool. */
static int commit(sqlite3 *db, bool attached, pending_take_t take,
                  int (*add)(sqlite3 *db, void *arg), void *arg, unsigned *taken)
{
    uint64_t deadline = lb_monotonic_ns() + (uint64_t)LB_BUSY_TIMEOUT_MS * 1000000u;
    sqlite3_busy_handler(db, lb_output_busy, &deadline);
    bool pending_only = add == add_nothing;
    int rc = attached ? SQLITE_OK : attach_out(db);
    if (rc != SQLITE_OK) {
        say_cannot_write(db, pending_only);
        return -1;
    }
    if (lb_db_version(db, "out") < 0) { /* not SQLite at all: do not even lock it */
        if (torn_own(db))
            say_cannot_write(db, pending_only);
        else
            lb_warn("output %s is not a lockblame database; not overwriting it", output_path);
        sql(db, "DETACH out");
        return -1;
    }
    lb_spool_batch_t pending;
    uint32_t mark = lb_spool_bound_mark();
    bool drained = stage_pending(db, take, &pending) && !pending.left;
    unsigned unread = pending.bad; /* said; the merge may refuse more */
    /* No fsync: the journal still undoes a write that a crash of this
     * process cuts short; a crash of the machine itself (or a power
     * loss) may leave the database corrupt, as SQLite says, where it
     * ends the run anyway, and four fsyncs a process were most of a
     * commit. */
    sql(db, "PRAGMA out.synchronous=OFF");
    rc = sql(db, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) {
        say_cannot_write(db, pending_only);
        lb_spool_finish(&pending, false);
        sql(db, "DETACH out");
        return -1;
    }
    if (prepare_out(db, pending_only) != 0) {
        sql(db, "ROLLBACK");
        lb_spool_finish(&pending, false);
        sql(db, "DETACH out");
        return -1;
    }
    /* the pending records first: they ended before this process did */
    rc = lb_spool_merge(&pending);
    if (rc == SQLITE_OK)
        rc = add(db, arg);
    if (rc == SQLITE_OK)
        rc = sql(db, "COMMIT");
    if (rc != SQLITE_OK) {
        say_cannot_write(db, pending_only);
        sql(db, "ROLLBACK");
    }
    if (rc == SQLITE_OK && pending.bad > unread)
        say_unread(&pending, pending.bad - unread);
    if (rc == SQLITE_OK)
        lb_spool_bound_took(mark, pending.records + pending.bad, drained);
    if (taken)
        *taken = rc == SQLITE_OK ? pending.records + pending.bad : 0;
    lb_spool_finish(&pending, rc == SQLITE_OK);
    sql(db, "DETACH out");
    return rc == SQLITE_OK ? 0 : -1;
}

/* The pending records a commit adds besides its own: all for the tree's
 * root, more for a process on the spool bound's duty (spool_bound.h). */
static unsigned pending_batch(void)
{
    return lb_output_tree_root()      ? 0
           : lb_spool_bound_on_duty() ? lb_spool_bound_batch()
                                      : LB_PENDING_BATCH;
}

int lb_output_commit(sqlite3 *db, bool attached, unsigned empty)
{
    return commit(db, attached, oldest_or_all(pending_batch()), merge_main, &empty, NULL);
}

int lb_output_commit_with(sqlite3 *db, int (*add)(sqlite3 *db, void *arg), void *arg)
{
    return commit(db, false, oldest_or_all(pending_batch()), add, arg, NULL);
}

/* fn(db, arg) on a connection of its own (":memory:"; each commit
 * attaches the run's database), SQLite loaded first: fn's result, or -1
 * after one line when SQLite cannot be loaded or opened. */
static int on_own_connection(int (*fn)(sqlite3 *db, void *arg), void *arg)
{
    char why[256];
    if (!lb_sqlite_open_at_exit(why, sizeof why)) {
        lb_warn("cannot add the run's pending profiles to %s: %s", output_path, why);
        return -1;
    }
    sqlite3 *db = NULL;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) == SQLITE_OK)
        rc = fn(db, arg);
    sqlite3_close(db);
    return rc;
}

static int merge_all(sqlite3 *db, void *arg)
{
    (void)arg;
    return commit(db, false, oldest_or_all(0), add_nothing, NULL, NULL);
}

int lb_output_merge_pending(void)
{
    if (!lb_spool_has_records(output_path, run_key))
        return 0;
    return on_own_connection(merge_all, NULL);
}

/* Batches of the sealed files, of at most *most records, again while a
 * batch was full. */
static int merge_sealed_batches(sqlite3 *db, void *most)
{
    pending_take_t take = { LB_SPOOL_TAKE_SEALED, *(unsigned *)most };
    unsigned taken;
    int rc;
    do
        taken = 0;
    while ((rc = commit(db, false, take, add_nothing, NULL, &taken)) == 0 && taken >= take.most);
    return rc;
}

int lb_output_merge_sealed(unsigned most)
{
    return on_own_connection(merge_sealed_batches, &most);
}

int lb_output_spool(const void *rows, size_t n)
{
    return lb_spool_put(output_path, run_key, rows, n);
}

void lb_output_seal_spool(void)
{
    lb_spool_seal(output_path, run_key);
}

void lb_output_remove_spool(void)
{
    lb_spool_remove_dir(output_path);
}
