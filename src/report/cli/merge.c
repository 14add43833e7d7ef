/*
 * merge.c - `lockblame merge -o ALL.db A.db B.db ...`: combine databases
 * (runs, hosts, ranks) into one. Each input's processes stay processes of
 * their own (common/db_merge.c shifts every id), so report, --by-process
 * and every export work on the whole set.
 *
 * The output is built in a temporary file next to ALL.db and renamed into
 * place only when every input is in: ALL.db is never half-written. An
 * existing ALL.db that is not a lockblame database is never replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "common/ddl.h"
#include "report/cli/commands.h"
#include "report/cli/db.h"
#include "report/cli/run_checks.h"
#include "report/cli/util.h"

static const char merge_usage[] =
    "usage: lockblame merge -o ALL.db A.db B.db ...\n"
    "\n"
    "Combine lockblame databases (several runs, hosts or MPI ranks) into ALL.db.\n"
    "Each input's processes stay processes of their own: 'report' aggregates\n"
    "them, 'report --by-process' lists them, --pid/--comm select them.\n"
    "\n"
    "options:\n"
    "  -o FILE      the merged database (replaced if it is a lockblame database)\n"
    "  -h, --help   this help\n";

static void check_input(const char *path)
{
    sqlite3 *db = lb_db_open(path); /* exits 2 with one line on bad input */
    int version = lb_db_version(db, "main");

    sqlite3_close(db);
    if (version < 1)
        cli_die(LB_EXIT_USAGE, "merge: %s: not a lockblame database", path);
}

static void fail(sqlite3 *db, const char *tmp, const char *what)
{
    char msg[256];

    snprintf(msg, sizeof msg, "%s", db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    unlink(tmp);
    cli_die(LB_EXIT_FAIL, "merge: %s: %s", what, msg);
}

static int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

int lb_cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { "output", required_argument, NULL, 'o' },
        { NULL, 0, NULL, 0 },
    };
    const char *out = NULL;
    int c;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(merge_usage, stdout);
            return LB_EXIT_OK;
        case 'o':
            out = optarg;
            break;
        default:
            lb_bad_option("merge", c == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (!out || !*out)
        cli_die(LB_EXIT_USAGE,
                "merge: -o ALL.db is required (usage: lockblame merge -o ALL.db A.db B.db ...)");
    if (optind >= argc)
        cli_die(LB_EXIT_USAGE,
                "merge: no input databases (usage: lockblame merge -o ALL.db A.db B.db ...)");
    for (int i = optind; i < argc; i++)
        check_input(argv[i]);
    if (lb_run_output_state(out) == LB_OUT_FOREIGN)
        cli_die(LB_EXIT_USAGE,
                "merge: %s exists and is not a lockblame database; not overwriting it", out);
    struct lb_buf tmp = { 0 };

    lb_buf_printf(&tmp, "%s.tmp.%d", out, (int)getpid());
    int fd = open(lb_buf_str(&tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

    if (fd < 0)
        cli_die(LB_EXIT_FAIL, "merge: cannot create %s: %s", lb_buf_str(&tmp), strerror(errno));
    close(fd);
    sqlite3 *db = NULL;
    const char *t = lb_buf_str(&tmp);

    if (sqlite3_open_v2(t, &db, SQLITE_OPEN_READWRITE | LB_DB_OPEN_OWN, NULL) != SQLITE_OK)
        fail(db, t, out);
    if (exec(db, "PRAGMA journal_mode=OFF") || exec(db, "BEGIN") ||
        lb_ddl_create(db, "main") != SQLITE_OK ||
        lb_ddl_meta(db, "main", "lockblame merge") != SQLITE_OK || exec(db, "COMMIT"))
        fail(db, t, out);
    for (int i = optind; i < argc; i++) {
        sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(db, "ATTACH ?1 AS src", -1, &st, NULL) != SQLITE_OK)
            fail(db, t, argv[i]);
        sqlite3_bind_text(st, 1, argv[i], -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);

        sqlite3_finalize(st);
        if (rc != SQLITE_DONE || exec(db, "BEGIN") ||
            lb_db_merge(db, "src", "main", 0) != SQLITE_OK || exec(db, "COMMIT") ||
            exec(db, "DETACH src"))
            fail(db, t, argv[i]);
    }
    if (sqlite3_close(db) != SQLITE_OK || rename(t, out) != 0) {
        int err = errno;

        unlink(t);
        cli_die(LB_EXIT_FAIL, "merge: cannot write %s: %s", out, strerror(err));
    }
    lb_buf_free(&tmp);
    return LB_EXIT_OK;
}
