/*
 * whatif_store.c - the `whatif` table: store, load, and print its rows as
 * a text table, JSON or an HTML section (docs/SCHEMA.md).
 */
#include "report/cli/whatif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/cli/db.h"
#include "report/cli/format.h"
#include "report/cli/util.h"

const double lb_whatif_speedups[LB_WHATIF_SPEEDUPS] = { 0.25, 0.5, 1.0 };

static const char whatif_ddl[] =
    "CREATE TABLE IF NOT EXISTS whatif(site TEXT, speedup REAL, runs INTEGER, blame_s REAL,"
    " blame_share REAL, baseline_s REAL, measured_s REAL, delay_s REAL, predicted_s REAL,"
    " change REAL, change_lo REAL, change_hi REAL, holds REAL, hold_s REAL, verdict TEXT,"
    " PRIMARY KEY (site, speedup))";

/* Columns added after the table's first form: a database made before has
 * none of them, and its rows are of the run's time (docs/SCHEMA.md). */
static const char *const whatif_progress_columns[] = {
    "ALTER TABLE whatif ADD COLUMN progress TEXT",
    "ALTER TABLE whatif ADD COLUMN baseline_calls REAL",
    "ALTER TABLE whatif ADD COLUMN calls REAL",
};

static bool has_progress_columns(sqlite3 *db)
{
    sqlite3_stmt *st;
    bool has = sqlite3_prepare_v2(db, "SELECT progress FROM whatif", -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    return has;
}

const char *lb_whatif_verdict(const struct lb_whatif_row *rows, int n, const char *site)
{
    /* Much blame: a tenth of all blame or more. Next to no gain: the
     * largest speedup measured (holds gone altogether) gains under 3%: a
     * run's time shorter, or a progress rate higher, by that much. */
    const struct lb_whatif_row *top = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].site, site) == 0 && (!top || rows[i].speedup > top->speedup))
            top = &rows[i];
    if (top && top->blame_share >= 0.10 && (top->progress ? top->change : -top->change) < 0.03)
        return "off the critical path";
    return "";
}

sqlite3_stmt *lb_whatif_prepare(sqlite3 *db, const char *path, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
    return st;
}

static void exec_or_die(sqlite3 *db, const char *path, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, err ? err : "write failed");
}

void lb_whatif_store(sqlite3 *db, const char *path, const struct lb_whatif_row *rows, int n)
{
    sqlite3_stmt *del, *ins;
    exec_or_die(db, path, "BEGIN");
    exec_or_die(db, path, whatif_ddl);
    if (!has_progress_columns(db))
        for (size_t k = 0; k < sizeof whatif_progress_columns / sizeof *whatif_progress_columns;
             k++)
            exec_or_die(db, path, whatif_progress_columns[k]);
    del = lb_whatif_prepare(db, path, "DELETE FROM whatif WHERE site = ?");
    ins = lb_whatif_prepare(db, path,
                            "INSERT INTO whatif(site, speedup, runs, blame_s, blame_share,"
                            " baseline_s, measured_s, delay_s, predicted_s, change, change_lo,"
                            " change_hi, holds, hold_s, verdict, progress, baseline_calls, calls)"
                            " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(del, 1, rows[i].site, -1, SQLITE_STATIC);
        sqlite3_step(del);
        sqlite3_reset(del);
    }
    for (int i = 0; i < n; i++) {
        const struct lb_whatif_row *r = &rows[i];
        const double v[] = { r->blame_s,   r->blame_share, r->baseline_s, r->measured_s,
                             r->delay_s,   r->predicted_s, r->change,     r->change_lo,
                             r->change_hi, r->holds,       r->hold_s };
        sqlite3_bind_text(ins, 1, r->site, -1, SQLITE_STATIC);
        sqlite3_bind_double(ins, 2, r->speedup);
        sqlite3_bind_int(ins, 3, r->runs);
        for (int k = 0; k < (int)(sizeof v / sizeof v[0]); k++)
            sqlite3_bind_double(ins, 4 + k, v[k]);
        sqlite3_bind_text(ins, 15, lb_whatif_verdict(rows, n, r->site), -1, SQLITE_STATIC);
        if (r->progress) {
            sqlite3_bind_text(ins, 16, r->progress, -1, SQLITE_STATIC);
            sqlite3_bind_double(ins, 17, r->baseline_calls);
            sqlite3_bind_double(ins, 18, r->calls);
        } else {
            for (int k = 16; k <= 18; k++)
                sqlite3_bind_null(ins, k);
        }
        if (sqlite3_step(ins) != SQLITE_DONE)
            cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
        sqlite3_reset(ins);
    }
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    exec_or_die(db, path, "COMMIT");
}

struct lb_whatif_row *lb_whatif_load(sqlite3 *db, int *n)
{
    sqlite3_stmt *st;
    struct lb_whatif_row *rows = NULL;
    size_t cap = 0;
    *n = 0;
    bool progress = has_progress_columns(db);
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT site, speedup, runs, blame_s, blame_share, baseline_s, measured_s, delay_s,"
             " predicted_s, change, change_lo, change_hi, holds, hold_s%s FROM whatif"
             " ORDER BY blame_s DESC, site, speedup",
             progress ? ", progress, baseline_calls, calls" : "");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL; /* no table: no experiments */
    while (sqlite3_step(st) == SQLITE_ROW) {
        lb_grow((void **)&rows, &cap, (size_t)*n + 1, sizeof *rows);
        struct lb_whatif_row *r = &rows[(*n)++];
        *r = (struct lb_whatif_row){ 0 };
        r->site = lb_xstrdup((const char *)sqlite3_column_text(st, 0));
        r->speedup = sqlite3_column_double(st, 1);
        r->runs = sqlite3_column_int(st, 2);
        double *v[] = { &r->blame_s,   &r->blame_share, &r->baseline_s, &r->measured_s,
                        &r->delay_s,   &r->predicted_s, &r->change,     &r->change_lo,
                        &r->change_hi, &r->holds,       &r->hold_s };
        for (int k = 0; k < (int)(sizeof v / sizeof v[0]); k++)
            *v[k] = sqlite3_column_double(st, 3 + k);
        if (progress && sqlite3_column_text(st, 14)) {
            r->progress = lb_xstrdup((const char *)sqlite3_column_text(st, 14));
            r->baseline_calls = sqlite3_column_double(st, 15);
            r->calls = sqlite3_column_double(st, 16);
        }
    }
    sqlite3_finalize(st);
    return rows;
}

void lb_whatif_free(struct lb_whatif_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        free(rows[i].site);
        free(rows[i].progress);
    }
    free(rows);
}

/* "-38.2% [-41.0, -35.1]" */
static void change_text(const struct lb_whatif_row *r, char *buf, size_t size)
{
    snprintf(buf, size, "%+.1f%% [%+.1f, %+.1f]", 100 * r->change, 100 * r->change_lo,
             100 * r->change_hi);
}

/* The row of site at speedup s, or NULL. */
static const struct lb_whatif_row *find(const struct lb_whatif_row *rows, int n, const char *site,
                                        double s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].site, site) == 0 && fabs(rows[i].speedup - s) < 1e-9)
            return &rows[i];
    return NULL;
}

static bool first_of_site(const struct lb_whatif_row *rows, int i)
{
    for (int j = 0; j < i; j++)
        if (strcmp(rows[j].site, rows[i].site) == 0)
            return false;
    return true;
}

static void print_text(const struct lb_whatif_row *rows, int n, FILE *out)
{
    char cell[LB_WHATIF_SPEEDUPS][64];
    fprintf(out, "%-28s %9s %6s  %-24s %-24s %-24s %s\n", "release site", "blame", "share",
            "holds 25% shorter", "holds 50% shorter", "holds 100% shorter", "");
    for (int i = 0; i < n; i++) {
        if (!first_of_site(rows, i))
            continue;
        for (int k = 0; k < LB_WHATIF_SPEEDUPS; k++) {
            const struct lb_whatif_row *r = find(rows, n, rows[i].site, lb_whatif_speedups[k]);
            if (r) {
                change_text(r, cell[k], sizeof cell[k]);
            } else {
                snprintf(cell[k], sizeof cell[k], "-");
            }
        }
        fprintf(out, "%-28s %7.3f s %5.1f%%  %-24s %-24s %-24s %s\n", rows[i].site, rows[i].blame_s,
                100 * rows[i].blame_share, cell[0], cell[1], cell[2],
                lb_whatif_verdict(rows, n, rows[i].site));
    }
    if (n && rows[0].progress)
        fprintf(out,
                "predicted change of the rate of %s calls, per second of the run's time less "
                "the delays (median over %d runs each, [interval]); baseline %.0f calls in "
                "%.3f s\n",
                rows[0].progress, rows[0].runs, rows[0].baseline_calls, rows[0].baseline_s);
    else if (n)
        fprintf(out,
                "predicted change of the run's time (median over %d runs each, [interval]); "
                "baseline %.3f s\n",
                rows[0].runs, rows[0].baseline_s);
}

static void print_json(const struct lb_whatif_row *rows, int n, FILE *out)
{
    fputs("[\n", out);
    for (int i = 0; i < n; i++) {
        const struct lb_whatif_row *r = &rows[i];
        fputs("  {\"site\": ", out);
        lb_json_string(out, r->site);
        const struct {
            const char *key;
            double v;
        } f[] = { { "blame_s", r->blame_s },       { "blame_share", r->blame_share },
                  { "speedup", r->speedup },       { "runs", r->runs },
                  { "baseline_s", r->baseline_s }, { "measured_s", r->measured_s },
                  { "delay_s", r->delay_s },       { "predicted_s", r->predicted_s },
                  { "change", r->change },         { "change_lo", r->change_lo },
                  { "change_hi", r->change_hi },   { "holds", r->holds },
                  { "hold_s", r->hold_s } };
        for (int k = 0; k < (int)(sizeof f / sizeof f[0]); k++) {
            fprintf(out, ", \"%s\": ", f[k].key);
            lb_json_number(out, f[k].v);
        }
        fputs(", \"verdict\": ", out);
        lb_json_string(out, lb_whatif_verdict(rows, n, r->site));
        fprintf(out, ", \"metric\": \"%s\"", r->progress ? "rate" : "time");
        if (r->progress) {
            fputs(", \"progress\": ", out);
            lb_json_string(out, r->progress);
            fputs(", \"baseline_calls\": ", out);
            lb_json_number(out, r->baseline_calls);
            fputs(", \"calls\": ", out);
            lb_json_number(out, r->calls);
        }
        fputs(i + 1 < n ? "},\n" : "}\n", out);
    }
    fputs("]\n", out);
}

void lb_whatif_print(const struct lb_whatif_row *rows, int n, bool json, FILE *out)
{
    if (json)
        print_json(rows, n, out);
    else
        print_text(rows, n, out);
}

void lb_whatif_html(const char *path, FILE *out)
{
    sqlite3 *db;
    int n = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return;
    }
    struct lb_whatif_row *rows = lb_whatif_load(db, &n);
    sqlite3_close(db);
    if (!n)
        return;
    fputs("<section id=\"whatif\">\n<h2>What if</h2>\n<p class=\"note\">Predicted change of the ",
          out);
    if (rows[0].progress) {
        fputs("rate of <code>", out);
        lb_html_text(out, rows[0].progress);
        fputs("</code> calls (per second of the run's time less the delays)", out);
    } else {
        fputs("run's time", out);
    }
    fputs(" if the holds ending at each site were shorter (virtual speedup, as "
          "<code>lockblame whatif</code>): median and interval over the runs.</p>\n"
          "<table class=\"data\">\n<thead><tr><th>release site</th><th class=\"num\">blame "
          "s</th><th class=\"num\">holds shorter by</th><th class=\"num\">predicted "
          "change</th><th>verdict</th></tr></thead>\n<tbody>\n",
          out);
    for (int i = 0; i < n; i++) {
        char cell[64];
        change_text(&rows[i], cell, sizeof cell);
        fputs("<tr><td>", out);
        lb_html_text(out, rows[i].site);
        fprintf(out, "</td><td class=\"num\">%.3f</td><td class=\"num\">%.0f%%</td>",
                rows[i].blame_s, 100 * rows[i].speedup);
        fprintf(out, "<td class=\"num\">%s</td><td>%s</td></tr>\n", cell,
                lb_whatif_verdict(rows, n, rows[i].site));
    }
    fputs("</tbody>\n</table>\n</section>\n", out);
    lb_whatif_free(rows, n);
}
