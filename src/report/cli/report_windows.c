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

#include "common/clone_name.h"
#include "common/demangle.h"
#include "report/cli/db.h"
#include "report/cli/report_windows.h"
#include "report/cli/windows.h"

/* Blame per window leaves joins out: they are structural by definition
 * (a thread joined at shutdown is the program's shape), as in the
 * release-site view. */
#define BLAME_SUM                                                                         \
    "m.idle_mutex_s + m.idle_spin_s + m.idle_rwlock_s + m.idle_cond_s + m.idle_barrier_s" \
    " + m.idle_sem_s + m.idle_futex_s"

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

/* The top release site of window seq, as "function (file:line) 1.234 s". */
static void top_site(sqlite3 *db, long seq, char *out, size_t size)
{
    sqlite3_stmt *st = NULL;

    snprintf(out, size, "-");
    if (sqlite3_prepare_v2(db,
                           "SELECT f.function, f.file, f.line, SUM(" BLAME_SUM ") AS b"
                           " FROM window_metric m JOIN time_window w ON w.id = m.window_id"
                           " JOIN window_node n ON n.id = m.node_id"
                           " JOIN window_frame f ON f.id = n.frame_id WHERE w.seq = ?1"
                           " GROUP BY f.function, f.file, f.line HAVING b > 0"
                           " ORDER BY b DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, seq);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *fn = (const char *)sqlite3_column_text(st, 0);
        const char *file = (const char *)sqlite3_column_text(st, 1);
        const char *base = file ? strrchr(file, '/') : NULL;

        char name[256];

        snprintf(name, sizeof name, "%.*s", fn ? (int)lb_clone_base_len(fn) : 2, fn ? fn : "??");
        snprintf(out, size, "%s (%s:%d) %.3f s", lb_demangled(name),
                 base   ? base + 1
                 : file ? file
                        : "?",
                 sqlite3_column_int(st, 2), sqlite3_column_double(st, 3));
    }
    sqlite3_finalize(st);
}

int lb_report_windows_list(const char *path, bool csv)
{
    sqlite3 *db = open_windows(path);
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(
            db,
            "SELECT w.seq, MIN(w.start_unix - s.t0), MAX(w.end_unix - s.t0), MIN(w.start_unix),"
            " (SELECT SUM(o.wait_s) FROM window_object o JOIN time_window x ON x.id = o.window_id"
            "  WHERE x.seq = w.seq AND o.object <> 'join'),"
            " (SELECT SUM(o.blame_s) FROM window_object o JOIN time_window x ON x.id ="
            "  o.window_id WHERE x.seq = w.seq AND o.object <> 'join'),"
            " (SELECT SUM(o.handoff_s) FROM window_object o JOIN time_window x ON x.id ="
            "  o.window_id WHERE x.seq = w.seq AND o.object <> 'join'),"
            " (SELECT SUM(o.unattributed_s) FROM window_object o JOIN time_window x ON x.id ="
            "  o.window_id WHERE x.seq = w.seq AND o.object <> 'join'),"
            " COUNT(*), GROUP_CONCAT(DISTINCT w.reason)"
            " FROM time_window w, (SELECT MIN(start_unix - start_s) AS t0 FROM time_window) s"
            " GROUP BY w.seq ORDER BY w.seq",
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
    int rows = 0;

    while (sqlite3_step(st) == SQLITE_ROW) {
        long seq = sqlite3_column_int64(st, 0);
        char site[512], clock[32];
        time_t t = (time_t)sqlite3_column_double(st, 3);
        struct tm tm;

        top_site(db, seq, site, sizeof site);
        localtime_r(&t, &tm);
        strftime(clock, sizeof clock, "%H:%M:%S", &tm);
        if (csv)
            printf("%ld,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%d,%s,\"%s\"\n", seq,
                   sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
                   sqlite3_column_double(st, 3), sqlite3_column_double(st, 4),
                   sqlite3_column_double(st, 5), sqlite3_column_double(st, 6),
                   sqlite3_column_double(st, 7), sqlite3_column_int(st, 8),
                   (const char *)sqlite3_column_text(st, 9), site);
        else
            printf("%6ld %8.3f %8.3f  %10s %7.3f  %7.3f  %10.3f  %8.3f  %s\n", seq,
                   sqlite3_column_double(st, 1), sqlite3_column_double(st, 2), clock,
                   sqlite3_column_double(st, 4), sqlite3_column_double(st, 5),
                   sqlite3_column_double(st, 6), sqlite3_column_double(st, 7), site);
        rows++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (!rows)
        cli_die(LB_EXIT_USAGE, "%s: no time windows written yet", path);
    return LB_EXIT_OK;
}

int lb_report_per_window(struct lb_report_opts *o, const struct lb_select *sel, const char *dir)
{
    sqlite3 *db = open_windows(o->db);
    sqlite3_stmt *st = NULL;
    long last = -1;

    if (sqlite3_prepare_v2(db, "SELECT MAX(seq) FROM time_window", -1, &st, NULL) == SQLITE_OK &&
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
