#include "common/db_summary.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/top_site.h"
#include "common/unseen.h"

void lb_db_summary(sqlite3 *db, lb_db_summary_t *out)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT (SELECT TOTAL(work_s) FROM metric),"
                       " (SELECT TOTAL(idle_mutex_s + idle_spin_s + idle_rwlock_s + idle_cond_s"
                       "  + idle_barrier_s + idle_sem_s + idle_join_s + idle_futex_s) FROM metric),"
                       " (SELECT TOTAL(wait_s) FROM sync_object), (SELECT COUNT(*) FROM run),"
                       " (SELECT TOTAL(idle_join_s) FROM metric)",
                       -1, &st, NULL);
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        out->work_s = sqlite3_column_double(st, 0);
        out->idleness_s = sqlite3_column_double(st, 1);
        out->effort_s = out->work_s + out->idleness_s;
        out->wait_s = sqlite3_column_double(st, 2);
        out->processes = sqlite3_column_int(st, 3);
        out->structural_join_s = sqlite3_column_double(st, 4); /* parked waits below */
    }
    sqlite3_finalize(st);
    /* The parked waits and the idle helpers (no such table before schema
     * version 3: then the joins alone are structural; idle helpers' rows
     * are marked from version 10 on, before it they count as parked). */
    st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT TOTAL(CASE WHEN helper THEN 0 ELSE blame_s END),"
                           " TOTAL(CASE WHEN helper THEN blame_s ELSE 0 END) FROM structural_wait",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        st = NULL;
        sqlite3_prepare_v2(db, "SELECT TOTAL(blame_s), 0 FROM structural_wait", -1, &st, NULL);
    }
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        out->structural_parked_s = sqlite3_column_double(st, 0);
        out->structural_helper_s = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    out->structural_s =
        out->structural_join_s + out->structural_parked_s + out->structural_helper_s;
    /* Unseen off-CPU time (no such column before schema version 5: it
     * stays 0, and no line is printed). */
    st = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT TOTAL(unseen_s), TOTAL(end_s - start_s),"
                       " (SELECT TOTAL(wait_s) FROM metric) FROM thread",
                       -1, &st, NULL);
    if (st && sqlite3_step(st) == SQLITE_ROW) {
        out->unseen_s = sqlite3_column_double(st, 0);
        out->lifetime_s = sqlite3_column_double(st, 1);
        out->seen_wait_s = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    /* The release site as the report's default view ranks it. */
    lb_top_site(db, out->top_site, sizeof out->top_site, out->top_object, sizeof out->top_object,
                &out->top_site_s);
}

void lb_db_summary_effort_text(const lb_db_summary_t *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "effort %.3f s = work %.3f s + idleness %.3f s (%.1f%% idle); threads waited %.3f s",
             s->effort_s, s->work_s, s->idleness_s,
             s->effort_s > 0 ? 100.0 * s->idleness_s / s->effort_s : 0, s->wait_s);
}

void lb_structural_parts_text(char *buf, size_t size, double join_s, double parked_s,
                              double helper_s)
{
    const char *names[] = { "joins", "parked until shutdown", "idle helpers" };
    double parts[] = { join_s, parked_s, helper_s };
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 3; i++)
        if (parts[i] > 0 && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s %.3f s", n ? " + " : "", names[i],
                                  parts[i]);
}

void lb_db_summary_site_line(const lb_db_summary_t *s, char *buf, size_t size)
{
    buf[0] = '\0';
    bool apart = s->structural_s > s->top_site_s && s->structural_s >= 0.5 * s->idleness_s;
    if (s->top_site[0])
        snprintf(buf, size, "top release site: %s, %.3f s %s blame%s", s->top_site, s->top_site_s,
                 s->top_object, apart ? ";" : "");
    if (apart) {
        char parts[160];
        lb_structural_parts_text(parts, sizeof parts, s->structural_join_s, s->structural_parked_s,
                                 s->structural_helper_s);
        size_t n = strlen(buf);
        snprintf(buf + n, size - n,
                 "%s%.1f%% of the idleness (%.3f s) is structural (%s), which lockblame report "
                 "lists apart",
                 n ? " " : "", s->idleness_s > 0 ? 100.0 * s->structural_s / s->idleness_s : 0,
                 s->structural_s, parts);
    }
}

void lb_db_summary_unseen_line(const lb_db_summary_t *s, char *buf, size_t size)
{
    buf[0] = '\0';
    if (lb_unseen_notable(s->unseen_s, s->lifetime_s, s->seen_wait_s))
        lb_unseen_text(buf, size, s->unseen_s, s->lifetime_s, s->seen_wait_s);
}
