/*
 * windows.c - --window, --since and --until (select.h): the time windows
 * of docs/SCHEMA.md read in place of the whole run.
 *
 * Every view and format reads the tables by their plain names (load.c),
 * so the selection is made in SQL: temporary views named run, thread,
 * metric, sync_object, module, frame and node, which SQLite finds before
 * the main database's tables, sum the selected windows' rows per id (a
 * process's ids are the same in all its windows; the views renumber them
 * densely, see D below), and site, object_blame
 * and structural_wait read as empty (windows do not hold them). The
 * database itself is opened read-only and stays untouched.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/cli/select.h"
#include "report/cli/windows.h"

static void exec_or_die(sqlite3 *db, const char *path, const char *sql)
{
    char *err = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        char msg[300];

        snprintf(msg, sizeof msg, "%s", err ? err : "?");
        sqlite3_free(err);
        cli_die(LB_EXIT_FAIL, "%s: selecting time windows: %s", path, msg);
    }
}

static bool has_windows(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    bool found = false;

    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM main.sqlite_master WHERE type = 'table'"
                           " AND name = 'time_window'",
                           -1, &st, NULL) == SQLITE_OK)
        found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

/* A time as --since/--until give it: seconds from the run's start (below
 * 1e8), seconds since the epoch, or a local wall-clock time
 * "[YYYY-MM-DD ]HH:MM[:SS]" (without a date: the run's start day). Unix
 * seconds in *out; false when it is none of these. */
static bool parse_time(const char *s, double run_start, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end != s && *end == '\0' && v >= 0) {
        *out = v < 1e8 ? run_start + v : v;
        return true;
    }
    time_t start = (time_t)run_start;
    struct tm tm;

    localtime_r(&start, &tm);
    tm.tm_sec = 0;
    const char *rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
    if (!rest || *rest)
        rest = strptime(s, "%Y-%m-%d %H:%M", &tm);
    if (!rest || *rest) {
        localtime_r(&start, &tm);
        tm.tm_sec = 0;
        rest = strptime(s, "%H:%M:%S", &tm);
        if (!rest || *rest) {
            tm.tm_sec = 0;
            rest = strptime(s, "%H:%M", &tm);
        }
    }
    if (!rest || *rest)
        return false;
    tm.tm_isdst = -1;
    *out = (double)mktime(&tm);
    return true;
}

static double run_start_unix(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    double v = 0;

    if (sqlite3_prepare_v2(db, "SELECT MIN(start_unix - start_s) FROM main.time_window", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* "N" or "N-M" (window numbers, from 0). */
static bool parse_range(const char *s, long *lo, long *hi)
{
    char *end;

    if (!isdigit((unsigned char)*s))
        return false;
    *lo = *hi = strtol(s, &end, 10);
    if (*end == '-') {
        if (!isdigit((unsigned char)end[1]))
            return false;
        *hi = strtol(end + 1, &end, 10);
    }
    return *end == '\0' && *hi >= *lo;
}

/* Ids as the views give them: a process's own id plus the sum of the id
 * ranges of the processes numbered before it, so that they are dense
 * again (the exit line's top site, common/top_site.c, indexes arrays by
 * id); node 0, the root, stays 0. */
#define D(x)                                                              \
    "CASE WHEN " x " > 0 THEN (" x " & 4294967295) + (SELECT b.base FROM" \
    " temp.lb_window_base b WHERE b.process = " x " >> 32) ELSE " x " END"

static const char window_base[] =
    "CREATE TEMP TABLE IF NOT EXISTS lb_window_base AS WITH m AS (SELECT id >> 32 AS process,"
    " MAX(id & 4294967295) AS top FROM (SELECT id FROM main.window_node"
    " UNION ALL SELECT id FROM main.window_frame UNION ALL SELECT id FROM main.window_module"
    " UNION ALL SELECT id FROM main.window_thread UNION ALL SELECT id FROM main.window_object"
    " UNION ALL SELECT id FROM main.window_run) WHERE id > 0 GROUP BY id >> 32)"
    " SELECT process, COALESCE((SELECT SUM(m2.top + 1) FROM m m2 WHERE m2.process < m.process),"
    " 0) AS base FROM m";

static const char *const views[] = {
    /* one row per process: the selected windows' span and sums */
    "CREATE TEMP VIEW run AS SELECT " D(
        "r.id") " AS id, MIN(r.command) AS command,"
                " MIN(r.executable) AS executable, r.pid AS pid, MIN(r.event) AS event,"
                " MIN(r.event_requested) AS event_requested, MIN(r.period) AS period,"
                " MIN(r.period_unit) AS period_unit, AVG(r.ns_per_sample) AS ns_per_sample,"
                " MIN(w.start_unix) AS start_unix, MAX(w.end_unix) - MIN(w.start_unix) AS "
                "duration_s,"
                " MAX(r.threads) AS threads, SUM(r.samples) AS samples,"
                " SUM(r.samples_dropped) AS samples_dropped, 'time window' AS exit_reason,"
                " MIN(r.ppid) AS ppid, MIN(r.exec_gen) AS exec_gen, MIN(r.proc_start) AS "
                "proc_start,"
                " MIN(r.run_key) AS run_key"
                " FROM main.window_run r JOIN temp.lb_selected_windows w ON w.id = r.window_id"
                " GROUP BY r.id",
    /* thread times from the selection's start in its process */
    "CREATE TEMP VIEW thread AS SELECT " D("id") " AS id, tid, " D(
        "start_frame_id") " AS start_frame_id, NULL AS creator_node_id, start_s, end_s, cpu_s,"
                          " samples, samples_dropped, " D(
                              "run_id") " AS run_id,"
                                        " NULL AS runqueue_s, NULL AS unseen_s FROM"
                                        " (SELECT t.id AS id, MIN(t.tid) AS tid,"
                                        " MIN(t.start_frame_id) AS start_frame_id,"
                                        " MIN(t.start_s) - s.first AS start_s, MAX(t.end_s) - "
                                        "s.first AS end_s,"
                                        " SUM(t.cpu_s) AS cpu_s, SUM(t.samples) AS samples,"
                                        " SUM(t.samples_dropped) AS samples_dropped, t.run_id AS "
                                        "run_id"
                                        " FROM main.window_thread t"
                                        " JOIN temp.lb_selected_windows w ON w.id = t.window_id"
                                        " JOIN (SELECT r.id AS run_id, MIN(w2.start_s) AS first"
                                        "  FROM main.window_run r JOIN temp.lb_selected_windows w2"
                                        "  ON w2.id = r.window_id GROUP BY r.id) s"
                                        " ON s.run_id = t.run_id GROUP BY t.id)",
    "CREATE TEMP VIEW metric AS SELECT " D("node_id") " AS node_id, " D(
        "thread_id") " AS thread_id, SUM(work_s) AS work_s,"
                     " SUM(overhead_s) AS overhead_s, SUM(wait_s) AS wait_s,"
                     " SUM(idle_mutex_s) AS idle_mutex_s, SUM(idle_spin_s) AS idle_spin_s,"
                     " SUM(idle_rwlock_s) AS idle_rwlock_s, SUM(idle_cond_s) AS idle_cond_s,"
                     " SUM(idle_barrier_s) AS idle_barrier_s, SUM(idle_sem_s) AS idle_sem_s,"
                     " SUM(idle_join_s) AS idle_join_s, SUM(blamed_count) AS blamed_count,"
                     " SUM(idle_undirected_s) AS idle_undirected_s,"
                     " SUM(idle_futex_s) AS idle_futex_s FROM main.window_metric"
                     " WHERE window_id IN (SELECT id FROM temp.lb_selected_windows)"
                     " GROUP BY node_id, thread_id",
    "CREATE TEMP VIEW sync_object AS SELECT " D(
        "id") " AS id, object, address,"
              " NULL AS first_node_id, NULL AS acquisitions, contended, wait_s, blame_s, handoff_s,"
              " unattributed_s, " D(
                  "run_id") " AS run_id, sampled_waits FROM (SELECT id,"
                            " MIN(object) AS object, MIN(address) AS address, SUM(contended) AS "
                            "contended,"
                            " SUM(wait_s) AS wait_s, SUM(blame_s) AS blame_s, SUM(handoff_s) AS "
                            "handoff_s,"
                            " SUM(unattributed_s) AS unattributed_s, MIN(run_id) AS run_id,"
                            " SUM(sampled_waits) AS sampled_waits FROM main.window_object"
                            " WHERE window_id IN (SELECT id FROM temp.lb_selected_windows) GROUP "
                            "BY id)",
    "CREATE TEMP VIEW module AS SELECT " D("id") " AS id, path, base, build_id"
                                                 " FROM main.window_module",
    "CREATE TEMP VIEW frame AS SELECT " D("id") " AS id, " D(
        "module_id") " AS module_id,"
                     " offset, function, file, line FROM main.window_frame",
    "CREATE TEMP VIEW node AS SELECT " D("id") " AS id, " D("parent_id") " AS parent_id, " D(
        "frame_id") " AS frame_id, depth FROM main.window_node",
    "CREATE TEMP VIEW site AS SELECT * FROM main.site WHERE 0",
    "CREATE TEMP VIEW object_blame AS SELECT * FROM main.object_blame WHERE 0",
    "CREATE TEMP VIEW structural_wait AS SELECT * FROM main.structural_wait WHERE 0",
};

void lb_windows_drop(sqlite3 *db)
{
    static const char *const names[] = { "run",          "thread",         "metric", "sync_object",
                                         "module",       "frame",          "node",   "site",
                                         "object_blame", "structural_wait" };

    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char sql[80];

        snprintf(sql, sizeof sql, "DROP VIEW IF EXISTS temp.%s", names[i]);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_exec(db, "DROP TABLE IF EXISTS temp.lb_selected_windows", NULL, NULL, NULL);
}

/* Windows that end within this much of each other are one (seconds): a
 * tree's processes end theirs at the same multiples of the interval, and
 * take a snapshot's request within one 100 ms tick of each other; at
 * most 40% of the shortest interval window (not a process's first,
 * which ends at the first boundary after its start). */
static const char window_slots[] =
    "CREATE TEMP TABLE IF NOT EXISTS lb_window_slots AS"
    " WITH o AS (SELECT id, end_unix, end_unix - LAG(end_unix) OVER (ORDER BY end_unix, id) AS gap"
    "  FROM main.time_window),"
    " t AS (SELECT MIN(0.15, 0.4 * COALESCE((SELECT MIN(end_unix - start_unix)"
    "  FROM main.time_window WHERE reason = 'interval' AND seq > 0), 1)) AS most)"
    " SELECT o.id AS id, SUM(CASE WHEN o.gap IS NULL OR o.gap > t.most THEN 1 ELSE 0 END)"
    " OVER (ORDER BY o.end_unix, o.id) - 1 AS slot FROM o, t";

void lb_windows_number(sqlite3 *db, const char *path)
{
    exec_or_die(db, path, window_slots);
    exec_or_die(db, path,
                "CREATE TEMP VIEW IF NOT EXISTS lb_windows_numbered AS SELECT w.*, s.slot AS slot"
                " FROM main.time_window w JOIN temp.lb_window_slots s ON s.id = w.id");
}

bool lb_windows_selected(const struct lb_select *sel)
{
    return sel && (sel->window || sel->since || sel->until);
}

void lb_windows_apply(sqlite3 *db, const char *path, const struct lb_select *sel)
{
    if (!lb_windows_selected(sel))
        return;
    if (!has_windows(db))
        cli_die(LB_EXIT_USAGE,
                "%s: no time windows (profile with 'lockblame run --interval 10s', or"
                " LOCKBLAME_INTERVAL)",
                path);
    double start = run_start_unix(db), since = -INFINITY, until = INFINITY;
    long lo = 0, hi = -1;

    if (sel->window && !parse_range(sel->window, &lo, &hi))
        cli_die(LB_EXIT_USAGE, "--window wants N or N-M (window numbers from 0), not '%s'",
                sel->window);
    if (sel->since && !parse_time(sel->since, start, &since))
        cli_die(LB_EXIT_USAGE,
                "--since wants seconds from the start, or a time (HH:MM:SS), not '%s'", sel->since);
    if (sel->until && !parse_time(sel->until, start, &until))
        cli_die(LB_EXIT_USAGE,
                "--until wants seconds from the start, or a time (HH:MM:SS), not '%s'", sel->until);
    lb_windows_number(db, path);
    char *q = sqlite3_mprintf(
        "CREATE TEMP TABLE lb_selected_windows AS SELECT w.* FROM main.time_window w"
        " JOIN temp.lb_window_slots s ON s.id = w.id"
        " WHERE (%d OR s.slot BETWEEN %ld AND %ld) AND w.end_unix > %.6f AND w.start_unix < %.6f",
        sel->window == NULL, lo, hi, isinf(since) ? -1e300 : since, isinf(until) ? 1e300 : until);

    exec_or_die(db, path, q);
    sqlite3_free(q);
    exec_or_die(db, path, window_base);
    for (size_t i = 0; i < sizeof views / sizeof *views; i++)
        exec_or_die(db, path, views[i]);
    sqlite3_stmt *st = NULL;
    int n = 0;

    if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM temp.lb_selected_windows", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (n == 0)
        cli_die(LB_EXIT_USAGE, "%s: no time window matches the selection", path);
}
