/*
 * db.c - open a lockblame database read-only and validate it before any
 * view reads it: file checks (exists, regular, non-empty, SQLite magic,
 * not truncated), PRAGMA quick_check, schema version, required tables.
 * Also finds the default database (newest lockblame.*.db in cwd).
 */
#include "report/cli/db.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "report/cli/pending.h"
#include "report/cli/profile.h"
#include "report/cli/util.h"

/* How long a read waits for a commit under way in the database. */
#define LB_DB_READ_BUSY_MS 30000

static const char *const required_tables[] = {
    "meta",   "run",    "module", "frame",       "node",
    "thread", "metric", "site",   "sync_object", "object_blame",
};

void lb_db_fail(sqlite3 *db, const char *path, const char *what)
{
    int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;

    if (code == SQLITE_NOMEM)
        cli_die(LB_EXIT_FAIL, "%s: out of memory while %s", path, what);
    cli_die(LB_EXIT_USAGE, "%s: corrupt or truncated database (%s: %s)", path, what,
            db ? sqlite3_errmsg(db) : "cannot open");
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Check the file itself. The header's page count is valid when its
 * "version-valid-for" field equals the change counter (SQLite >= 3.7.0);
 * a file shorter than page_count * page_size was cut off. */
static void check_file(const char *path)
{
    struct stat st;
    unsigned char hdr[100];

    if (stat(path, &st) != 0)
        cli_die(LB_EXIT_USAGE, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        cli_die(LB_EXIT_USAGE, "%s: is a directory, not a lockblame database", path);
    if (st.st_size == 0)
        cli_die(LB_EXIT_USAGE, "%s: empty file, not a lockblame database", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        cli_die(LB_EXIT_USAGE, "%s: %s", path, strerror(errno));
    ssize_t n = read(fd, hdr, sizeof hdr);

    close(fd);
    if (n < 0 || !lb_db_sqlite_header(hdr, (size_t)n))
        cli_die(LB_EXIT_USAGE, "%s: not an SQLite database", path);
    if (n < 100)
        cli_die(LB_EXIT_USAGE, "%s: truncated database (%lld bytes)", path, (long long)st.st_size);
    uint32_t page_size = (uint32_t)hdr[16] << 8 | hdr[17];

    if (page_size == 1)
        page_size = 65536;
    uint32_t pages = be32(hdr + 28);

    if (pages && be32(hdr + 24) == be32(hdr + 92) &&
        (uint64_t)st.st_size < (uint64_t)pages * page_size)
        cli_die(LB_EXIT_USAGE, "%s: truncated database (%lld of %llu bytes)", path,
                (long long)st.st_size, (unsigned long long)pages * page_size);
}

static void check_tables(sqlite3 *db, const char *path)
{
    for (size_t i = 0; i < sizeof required_tables / sizeof *required_tables; i++) {
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(
            db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1, &st, NULL);

        if (rc != SQLITE_OK)
            lb_db_fail(db, path, "reading the schema");
        sqlite3_bind_text(st, 1, required_tables[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            cli_die(LB_EXIT_USAGE, "%s: not a lockblame database (missing table '%s')", path,
                    required_tables[i]);
        if (rc != SQLITE_ROW)
            lb_db_fail(db, path, "reading the schema");
    }
}

static void check_version(sqlite3 *db, const char *path)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                           NULL) != SQLITE_OK)
        lb_db_fail(db, path, "reading meta");
    int rc = sqlite3_step(st);

    if (rc == SQLITE_DONE) {
        sqlite3_finalize(st);
        cli_die(LB_EXIT_USAGE, "%s: not a lockblame database (no meta.schema_version)", path);
    }
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        lb_db_fail(db, path, "reading meta");
    }
    const char *v = (const char *)sqlite3_column_text(st, 0);
    char *end = NULL;
    long ver = v ? strtol(v, &end, 10) : 0;
    bool ok = v && end != v && *end == '\0' && ver >= 1;

    sqlite3_finalize(st);
    if (!ok)
        cli_die(LB_EXIT_USAGE, "%s: bad meta.schema_version '%s'", path, v ? v : "");
    if (ver > LB_SCHEMA_VERSION)
        cli_die(
            LB_EXIT_USAGE,
            "%s: written by a newer lockblame (schema version %ld; this lockblame reads up to %d)",
            path, ver, LB_SCHEMA_VERSION);
}

/* quick_check walks every b-tree page once: linear in the file size and
 * about 0.1 s per 100 MB here, well inside the 2 s budget for 1M nodes. */
static void check_integrity(sqlite3 *db, const char *path)
{
    sqlite3_stmt *st;

    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        lb_db_fail(db, path, "checking integrity");
    int rc = sqlite3_step(st);

    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        lb_db_fail(db, path, "checking integrity");
    }
    const char *r = (const char *)sqlite3_column_text(st, 0);

    if (!r || strcmp(r, "ok") != 0) {
        char msg[200];

        snprintf(msg, sizeof msg, "%s", r ? r : "?");
        sqlite3_finalize(st);
        cli_die(LB_EXIT_USAGE, "%s: corrupt database (%s)", path, msg);
    }
    sqlite3_finalize(st);
}

sqlite3 *lb_db_open(const char *path)
{
    sqlite3 *db = NULL;

    check_file(path);
    lb_cli_add_pending(path, NULL);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK)
        lb_db_fail(db, path, "opening");
    /* a profiled tree may be committing to it: its lock is not a
     * corrupt database */
    sqlite3_busy_timeout(db, LB_DB_READ_BUSY_MS);
    sqlite3_extended_result_codes(db, 0);
    check_integrity(db, path);
    check_tables(db, path);
    check_version(db, path);
    return db;
}

static bool is_db_name(const char *name)
{
    size_t n = strlen(name);

    return n > strlen("lockblame..db") - 1 && strncmp(name, "lockblame.", 10) == 0 &&
           strcmp(name + n - 3, ".db") == 0;
}

char *lb_find_default_db(void)
{
    DIR *d = opendir(".");
    char *best = NULL;
    struct timespec best_t = { 0, 0 };
    struct dirent *e;

    if (!d)
        cli_die(LB_EXIT_FAIL, "cannot read the current directory: %s", strerror(errno));
    while ((e = readdir(d)) != NULL) {
        struct stat st;

        if (!is_db_name(e->d_name) || stat(e->d_name, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        bool newer = !best || st.st_mtim.tv_sec > best_t.tv_sec ||
                     (st.st_mtim.tv_sec == best_t.tv_sec &&
                      (st.st_mtim.tv_nsec > best_t.tv_nsec ||
                       (st.st_mtim.tv_nsec == best_t.tv_nsec && strcmp(e->d_name, best) > 0)));

        if (newer) {
            free(best);
            best = lb_xstrdup(e->d_name);
            best_t = st.st_mtim;
        }
    }
    closedir(d);
    if (!best)
        cli_die(LB_EXIT_USAGE, "no lockblame.*.db in the current directory (name a database, or "
                               "record one with 'lockblame run -- PROG')");
    return best;
}
