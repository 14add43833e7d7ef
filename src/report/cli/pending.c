/* See pending.h. */
#include "report/cli/pending.h"

#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "common/ddl.h"
#include "common/ledger.h"
#include "common/schema.h"
#include "common/spool.h"
#include "report/cli/db.h"
#include "report/cli/util.h"

#define PENDING_BUSY_MS 30000

/* The run key the database's processes carry, in key[size]; false when
 * it holds none. */
static bool run_key_of(sqlite3 *db, char *key, size_t size)
{
    sqlite3_stmt *st = NULL;
    bool found = false;
    if (sqlite3_prepare_v2(db, "SELECT run_key FROM run WHERE run_key IS NOT NULL LIMIT 1", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        found = k && snprintf(key, size, "%s", k) < (int)size;
    }
    sqlite3_finalize(st);
    return found;
}

/* A merge's connection: waits for commits under way (a tree's process
 * may be committing), and does not fsync. As in the library's write
 * (report/writer/output.c), the journal still undoes a transaction that a
 * crash of this process cuts short; a crash of the machine itself (or a
 * power loss) may leave the database corrupt, as SQLite says, where it
 * ends the run anyway, and each commit's three fsyncs were a merge's
 * largest system-call cost. */
static void merge_connection(sqlite3 *db)
{
    sqlite3_busy_timeout(db, PENDING_BUSY_MS);
    sqlite3_exec(db, "PRAGMA main.synchronous=OFF", NULL, NULL, NULL);
}

/* The run's database, created when none is there yet: under `lockblame
 * run` every process of the tree may have left its profile pending. *db
 * stays NULL when a file is there. */
static int create_missing(const char *path, sqlite3 **db)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0)
        return SQLITE_OK;
    int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | LB_DB_OPEN_OWN,
                             NULL);
    if (rc == SQLITE_OK) {
        merge_connection(*db);
        rc = sqlite3_exec(*db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    }
    /* another process may have made it meanwhile: then it is left as is */
    if (rc == SQLITE_OK && lb_db_version(*db, "main") == 0 &&
        (rc = lb_ddl_create(*db, "main")) == SQLITE_OK)
        rc = lb_ddl_meta(*db, "main", "lockblame");
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(*db, "COMMIT", NULL, NULL, NULL);
    else if (*db)
        sqlite3_exec(*db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

lb_ledger_t *lb_cli_ledger_map(const char *ledger_path, bool writable, bool *present)
{
    int fd = open(ledger_path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    *present = fd >= 0;
    if (fd < 0)
        return NULL;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(lb_ledger_t))
        p = mmap(NULL, sizeof(lb_ledger_t), PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd,
                 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* The database at path for a merge: opened read-write, made first when
 * the run run_key's and none is there (NULL: any run's, not made),
 * waiting for commits under way, and of this schema version; NULL with
 * *why otherwise. A file there that is the run's own torn by a write
 * that failed (common/ledger.h, lb_ledger_torn_own) says SQLite's why. */
static sqlite3 *open_for_merge(const char *path, const char *run_key, const char **why)
{
    sqlite3 *db = NULL;
    if ((run_key && create_missing(path, &db) != SQLITE_OK) ||
        (!db &&
         sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | LB_DB_OPEN_OWN, NULL) != SQLITE_OK)) {
        *why = "not writable";
    } else {
        merge_connection(db); /* before the first read */
        if (lb_db_version(db, "main") == LB_SCHEMA_VERSION)
            return db;
        *why = lb_ledger_torn_own(sqlite3_errcode(db), path, run_key)
                   ? sqlite3_errstr(sqlite3_errcode(db) & 0xff)
                   : "not a lockblame database of this version, or not writable";
    }
    sqlite3_close(db);
    return NULL;
}

/* One batch of the run's pending records into db (the database at
 * path) in one transaction, as `take` and `most` say (lb_spool_stage),
 * the spool's counters in the tree's ledger told what it took. true, or
 * false with why nothing was added in why[] (copied: SQLite's message
 * goes with the next statement, the rollback's); one line for records
 * that could not be read. */
static bool add_batch(sqlite3 *db, const char *path, const char *run_key, enum lb_spool_take take,
                      unsigned most, lb_spool_batch_t *pending, char *why, size_t why_size)
{
    char ledger_path[PATH_MAX];
    bool present;
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    lb_ledger_t *ledger = lb_cli_ledger_map(ledger_path, true, &present);
    uint32_t mark = ledger ? lb_ledger_spool_mark(ledger) : 0;
    int rc = lb_spool_stage(db, path, run_key, "main", take, most, pending);
    if (rc != SQLITE_OK)
        snprintf(why, why_size, "%s", lb_spool_error(db, rc));
    if (rc == SQLITE_OK && pending->staged) {
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = lb_spool_merge(pending);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            snprintf(why, why_size, "%s", lb_spool_error(db, rc));
            /* (a full disk may have ended the transaction already) */
            if (!sqlite3_get_autocommit(db))
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        }
        lb_spool_finish(pending, rc == SQLITE_OK);
    }
    if (ledger) {
        if (rc == SQLITE_OK)
            lb_ledger_spool_took(ledger, mark, pending->records + pending->bad, !pending->left);
        munmap(ledger, sizeof *ledger);
    }
    if (pending->bad)
        cli_warn("%u pending profile(s) of %s could not be read; kept as *.bad in %s", pending->bad,
                 path, pending->dir);
    return rc == SQLITE_OK;
}

void lb_cli_add_pending(const char *path, const char *run_key)
{
    if (!lb_spool_has_records(path, run_key)) {
        /* an empty spool whose root was killed before it removed it
         * (an rmdir fails while anything is left there) */
        lb_spool_remove_dir(path);
        return;
    }
    sqlite3 *db = NULL;
    char key[128], failed[256];
    lb_spool_batch_t pending = { 0 };
    const char *why = NULL;
    if (!(db = open_for_merge(path, run_key, &why)))
        goto out;
    if (!run_key) {
        if (!run_key_of(db, key, sizeof key))
            goto out; /* no process of a run here yet: nothing to add them to */
        run_key = key;
    }
    if (!add_batch(db, path, run_key, LB_SPOOL_TAKE_ALL, 0, &pending, failed, sizeof failed))
        why = failed;
    lb_spool_remove_dir(path); /* if that left it empty */
out:
    if (why)
        cli_warn("%s: the pending profiles of processes that ended are not in it yet: %s", path,
                 why);
    sqlite3_close(db);
}

bool lb_cli_merge_sealed(sqlite3 **db, const char *path, const char *run_key, unsigned most,
                         bool *failed)
{
    *failed = true;
    if (!*db) {
        /* Made now if no process of the tree made it (under `run` none
         * reads names from it while the tree runs: writer.c), unless the
         * tree runs as another user (its spool is that user's): a
         * database of run's user would refuse the tree's own commits
         * (time windows, a full spool); its end's merge makes it then. */
        char spool[PATH_MAX];
        struct stat st;
        lb_spool_dir(spool, sizeof spool, path);
        const char *why;
        if ((access(path, F_OK) != 0 && (stat(spool, &st) != 0 || st.st_uid != geteuid())) ||
            !(*db = open_for_merge(path, run_key, &why)))
            return false; /* the final merge says why */
    }
    lb_spool_batch_t pending = { 0 };
    char why[256];
    *failed = !add_batch(*db, path, run_key, LB_SPOOL_TAKE_SEALED, most, &pending, why, sizeof why);
    return !*failed && pending.left > 0 && pending.records + pending.bad > 0;
}
