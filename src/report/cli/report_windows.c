/*
 * report_windows.c - `report --windows` (the run's time windows, one line
 * each: when, how much waiting, blame and the top release site: where a
 * spike is seen before it is read) and `report --format pprof
 * --per-window DIR` (one profile per window, as a continuous profiler
 * ingests them; each carries its window's time_nanos and duration_nanos).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/top_site.h"
#include "report/cli/db.h"
#include "report/cli/report_windows.h"
#include "report/cli/windows.h"

static sqlite3 *open_windows(const char *path)
{
    sqlite3 *db = lb_db_open(path);
    sqlite3_stmt *st = NULL;
    bool found = sqlite3_prepare_v2(db,
                                    "SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                    " AND name = 'time_window'",
                                    -1, &st, NULL) == SQLITE_OK &&
                 sqlite3_step(st) == SQLITE_ROW;

    sqlite3_finalize(st);
    if (!found)
        cli_die(LB_EXIT_USAGE,
                "%s: no time windows (profile with 'lockblame run --interval 10s', or"
                " LOCKBLAME_INTERVAL)",
                path);
    return db;
}

/* The top release site of window (number) seq as the exit line and --by-process
 * rank it (common/top_site.h), as "function (file:line) 1.234 s". */
static void top_site(sqlite3 *db, const char *path, long seq, char *out, size_t size)
{
    char window[32], site[400], kind[32];
    double seconds = 0;
    struct lb_select sel = { .window = window };

    snprintf(window, sizeof window, "%ld", seq);
    lb_windows_apply(db, path, &sel);
    lb_top_site(db, site, sizeof site, kind, sizeof kind, &seconds);
    lb_windows_drop(db);
    if (site[0])
        snprintf(out, size, "%s %.3f s %s", site, seconds, kind);
    else
        snprintf(out, size, "-");
}

int lb_report_windows_list(const char *path, bool csv)
{
    sqlite3 *db = open_windows(path);
    sqlite3_stmt *st = NULL;

    lb_windows_number(db, path);

    if (sqlite3_prepare_v2(
            db,
            "SELECT w.slot, MIN(w.start_unix - s.t0), MAX(w.end_unix - s.t0), MIN(w.start_unix),"
            " (SELECT SUM(o.wait_s) FROM window_object o JOIN lb_windows_numbered x ON x.id = "
            "o.window_id"
            "  WHERE x.slot = w.slot AND o.object <> 'join'),"
            " (SELECT SUM(o.blame_s) FROM window_object o JOIN lb_windows_numbered x ON x.id ="
            "  o.window_id WHERE x.slot = w.slot AND o.object <> 'join'),"
            " (SELECT SUM(o.handoff_s) FROM window_object o JOIN lb_windows_numbered x ON x.id ="
            "  o.window_id WHERE x.slot = w.slot AND o.object <> 'join'),"
            " (SELECT SUM(o.unattributed_s) FROM window_object o JOIN lb_windows_numbered x ON "
            "x.id ="
            "  o.window_id WHERE x.slot = w.slot AND o.object <> 'join'),"
            " COUNT(*), GROUP_CONCAT(DISTINCT w.reason)"
            " FROM lb_windows_numbered w, (SELECT MIN(start_unix - start_s) AS t0 FROM "
            "time_window) s"
            " GROUP BY w.slot ORDER BY w.slot",
            -1, &st, NULL) != SQLITE_OK)
        lb_db_fail(db, path, "reading the time windows");
    if (csv)
        printf("window,start_s,end_s,start_unix,wait_s,blame_s,handoff_s,unattributed_s,"
               "processes,reason,top_release_site\n");
    else
        printf("lockblame report: %s (time windows; joins left out)\n\n"
               "Window   From s     To s  Wall clock  Wait s  Blame s  Hand-off s  Unattr s"
               "  Top release site\n",
               path);
    struct row {
        long seq;
        double v[8];
        int processes;
        char reason[64];
    } *rows = NULL;
    size_t n = 0, cap = 0;

    /* All rows first: the top sites' temporary views change the schema,
     * which a statement still stepping would not survive. */
    while (sqlite3_step(st) == SQLITE_ROW) {
        lb_grow((void **)&rows, &cap, n + 1, sizeof *rows);
        struct row *r = &rows[n++];
        const char *reason = (const char *)sqlite3_column_text(st, 9);

        r->seq = sqlite3_column_int64(st, 0);
        for (int c = 1; c <= 7; c++)
            r->v[c] = sqlite3_column_double(st, c);
        r->processes = sqlite3_column_int(st, 8);
        snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "");
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        char site[512], clock[32];
        time_t t = (time_t)r->v[3];
        struct tm tm;

        top_site(db, path, r->seq, site, sizeof site);
        localtime_r(&t, &tm);
        strftime(clock, sizeof clock, "%H:%M:%S", &tm);
        if (csv)
            printf("%ld,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%d,%s,\"%s\"\n", r->seq, r->v[1],
                   r->v[2], r->v[3], r->v[4], r->v[5], r->v[6], r->v[7], r->processes, r->reason,
                   site);
        else
            printf("%6ld %8.3f %8.3f  %10s %7.3f  %7.3f  %10.3f  %8.3f  %s\n", r->seq, r->v[1],
                   r->v[2], clock, r->v[4], r->v[5], r->v[6], r->v[7], site);
    }
    free(rows);
    sqlite3_close(db);
    if (!n)
        cli_die(LB_EXIT_USAGE, "%s: no time windows written yet", path);
    return LB_EXIT_OK;
}

void lb_report_windows_hint(const char *path)
{
    sqlite3 *db = lb_db_open(path);
    sqlite3_stmt *st = NULL;
    int n = 0;

    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM time_window", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (n > 0)
        cli_warn("report: no process of %s has ended yet; it wrote %d time window%s so far"
                 " (lockblame report --windows %s)",
                 path, n, n == 1 ? "" : "s", path);
}

int lb_report_per_window(struct lb_report_opts *o, const struct lb_select *sel, const char *dir)
{
    sqlite3 *db = open_windows(o->db);
    sqlite3_stmt *st = NULL;
    long last = -1;

    lb_windows_number(db, o->db);
    if (sqlite3_prepare_v2(db, "SELECT MAX(slot) FROM lb_windows_numbered", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        last = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (last < 0)
        cli_die(LB_EXIT_USAGE, "%s: no time windows written yet", o->db);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        cli_die(LB_EXIT_FAIL, "report: cannot create '%s': %s", dir, strerror(errno));
    int written = 0;

    for (long seq = 0; seq <= last; seq++) {
        char window[32], file[4096];
        struct lb_select one = *sel;

        snprintf(window, sizeof window, "%ld", seq);
        if (sel->window && strcmp(sel->window, window) != 0)
            continue;
        one.window = window;
        snprintf(file, sizeof file, "%s/window-%04ld.pb.gz", dir, seq);
        struct lb_profile *p = lb_profile_load_select(o->db, &one);

        if (o->kinds)
            lb_profile_keep_kinds(p, o->kinds);
        if (!freopen(file, "wb", stdout))
            cli_die(LB_EXIT_FAIL, "report: cannot write '%s': %s", file, strerror(errno));
        int rc = lb_view_pprof(p, o);

        lb_profile_free(p);
        if (rc != LB_EXIT_OK)
            return rc;
        written++;
    }
    fprintf(stderr, "lockblame report: %d window profile%s in %s\n", written,
            written == 1 ? "" : "s", dir);
    return LB_EXIT_OK;
}
