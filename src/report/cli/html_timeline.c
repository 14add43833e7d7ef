/*
 * html_timeline.c - the HTML page's timeline (report --format html, for a
 * run written in time windows): blame per window as a stacked bar, one
 * colour per top release site (the five with the most blame over all
 * windows, the rest as "other"), so that a spike is seen before it is
 * read. Plain inline SVG, no script: every bar is a <rect> with the
 * window, the site's index and its blame in data attributes and a
 * <title> tooltip. Joins are left out (structural).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clone_name.h"
#include "common/demangle.h"
#include "common/path_base.h"
#include "report/cli/db.h"
#include "report/cli/html_timeline.h"
#include "report/cli/format.h"
#include "report/cli/util.h"
#include "report/cli/windows.h"

#define TOP_SITES 5
#define CHART_W   900
#define CHART_H   180

static const char *const colours[TOP_SITES + 1] = { "#d62728", "#1f77b4", "#2ca02c",
                                                    "#9467bd", "#ff7f0e", "#999999" };

/* The site of a frame as the page names it: function (file:line), or
 * module+0xOFFSET without a name. */
static void site_name(sqlite3_stmt *st, int col, char *out, size_t size)
{
    const char *fn = (const char *)sqlite3_column_text(st, col);
    const char *file = (const char *)sqlite3_column_text(st, col + 1);
    const char *module = (const char *)sqlite3_column_text(st, col + 3);

    if (fn) {
        char base[256];

        snprintf(base, sizeof base, "%.*s", (int)lb_clone_base_len(fn), fn);
        snprintf(out, size, "%s (%s:%d)", lb_demangled(base), file ? lb_path_base(file) : "?",
                 sqlite3_column_int(st, col + 2));
    } else {
        snprintf(out, size, "%s+0x%llx", module ? lb_path_base(module) : "?",
                 (unsigned long long)sqlite3_column_int64(st, col + 4));
    }
}

#define SITE_BLAME                                                                            \
    "SUM(m.idle_mutex_s + m.idle_spin_s + m.idle_rwlock_s + m.idle_cond_s + m.idle_barrier_s" \
    " + m.idle_sem_s + m.idle_futex_s)"
#define SITE_FROM                                                                      \
    " FROM window_metric m JOIN lb_windows_numbered w ON w.id = m.window_id"           \
    " JOIN window_node n ON n.id = m.node_id JOIN window_frame f ON f.id = n.frame_id" \
    " LEFT JOIN window_module mo ON mo.id = f.module_id"

void lb_html_timeline(const char *path, FILE *out)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;

    if (!path ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT MAX(seq) FROM time_window", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL) {
        sqlite3_finalize(st);
        sqlite3_close(db);
        return; /* no windows: no timeline */
    }
    sqlite3_finalize(st);
    lb_windows_number(db, path);
    int windows = 0;

    if (sqlite3_prepare_v2(db, "SELECT MAX(slot) + 1 FROM lb_windows_numbered", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        windows = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    /* the top sites over all windows */
    char names[TOP_SITES][300];
    int nsites = 0;

    if (sqlite3_prepare_v2(db,
                           "SELECT f.function, f.file, f.line, mo.path, f.offset, " SITE_BLAME
                           " AS b" SITE_FROM " GROUP BY 1, 2, 3, 4, 5 HAVING b > 0"
                           " ORDER BY b DESC",
                           -1, &st, NULL) == SQLITE_OK) {
        while (nsites < TOP_SITES && sqlite3_step(st) == SQLITE_ROW) {
            char name[300];

            site_name(st, 0, name, sizeof name);
            bool seen = false; /* clones and frames of several processes fold */

            for (int i = 0; i < nsites; i++)
                seen |= strcmp(names[i], name) == 0;
            if (!seen)
                snprintf(names[nsites++], sizeof names[0], "%s", name);
        }
    }
    sqlite3_finalize(st);
    /* blame[window][site], the last column "other" */
    double(*blame)[TOP_SITES + 1] = lb_xcalloc((size_t)windows, sizeof *blame);
    double *start = lb_xcalloc((size_t)windows, sizeof *start);

    if (sqlite3_prepare_v2(
            db,
            "SELECT f.function, f.file, f.line, mo.path, f.offset, w.slot, " SITE_BLAME SITE_FROM
            " GROUP BY 1, 2, 3, 4, 5, 6",
            -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            char name[300];
            int seq = sqlite3_column_int(st, 5), k = TOP_SITES;

            site_name(st, 0, name, sizeof name);
            for (int i = 0; i < nsites; i++)
                if (strcmp(names[i], name) == 0)
                    k = i;
            if (seq >= 0 && seq < windows)
                blame[seq][k] += sqlite3_column_double(st, 6);
        }
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db,
                           "SELECT slot, MIN(start_unix) - (SELECT MIN(start_unix - start_s)"
                           " FROM time_window) FROM lb_windows_numbered GROUP BY slot",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int seq = sqlite3_column_int(st, 0);

            if (seq >= 0 && seq < windows)
                start[seq] = sqlite3_column_double(st, 1);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    double top = 0;

    for (int w = 0; w < windows; w++) {
        double sum = 0;

        for (int k = 0; k <= TOP_SITES; k++)
            sum += blame[w][k] > 0 ? blame[w][k] : 0;
        top = sum > top ? sum : top;
    }
    fprintf(out,
            "<section id=\"timeline\">\n<h2>Timeline</h2>\n<p class=\"note\">Blame per time"
            " window (%d windows; the tallest holds %.3f s), stacked by the top release"
            " sites; joins left out. <code>lockblame report --window N</code> reads one"
            " window.</p>\n<svg class=\"timeline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d"
            " %d\" role=\"img\">\n",
            windows, top, CHART_W, CHART_H + 20, CHART_W, CHART_H + 20);
    double bar = (double)CHART_W / windows;

    for (int w = 0; w < windows; w++) {
        double y = CHART_H;

        for (int k = 0; k <= TOP_SITES; k++) {
            double v = blame[w][k];

            if (v <= 0 || top <= 0)
                continue;
            double h = v / top * CHART_H;

            y -= h;
            fprintf(out,
                    "<rect class=\"tl-bar\" data-window=\"%d\" data-site=\"%d\" data-blame=\"%.6f\""
                    " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                    w, k, v, w * bar, y, bar > 2 ? bar - 1 : bar, h, colours[k]);
            fprintf(out, "window %d (%.1f s): %.3f s ", w, start[w], v);
            lb_html_text(out, k < nsites ? names[k] : "other sites");
            fputs("</title></rect>\n", out);
        }
        if (windows <= 60 || w % (windows / 30 + 1) == 0)
            fprintf(out,
                    "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n",
                    w * bar + bar / 2, CHART_H + 14, w);
    }
    fputs("</svg>\n<ul class=\"legend\" "
          "style=\"list-style:none;display:flex;flex-wrap:wrap;gap:1.5em;padding:0\">\n",
          out);
    for (int k = 0; k <= TOP_SITES; k++) {
        if (k >= nsites && k != TOP_SITES)
            continue;
        fprintf(out, "<li data-site=\"%d\"><span style=\"color:%s\">&#9632;</span> ", k,
                colours[k]);
        lb_html_text(out, k < nsites ? names[k] : "other sites");
        fputs("</li>\n", out);
    }
    fputs("</ul>\n</section>\n", out);
    free(blame);
    free(start);
}
