/*
 * whatif.h - `lockblame whatif`: predicted gains of shortening the holds
 * that end at a release site, by virtual speedup (core/whatif.h), and
 * their storage in the database's `whatif` table (docs/SCHEMA.md).
 */
#ifndef LB_CLI_WHATIF_H
#define LB_CLI_WHATIF_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>

#define LB_WHATIF_SPEEDUPS 3 /* 25%, 50% and 100% shorter holds */
extern const double lb_whatif_speedups[LB_WHATIF_SPEEDUPS];

/* One row of the whatif table: a site at one speedup. */
struct lb_whatif_row {
    char *site;                  /* the release site's function */
    double blame_s;              /* its mutex blame in the profile */
    double blame_share;          /* of all blame in the profile, 0..1 */
    double speedup;              /* holds shortened by this fraction */
    int runs;                    /* experiments at this speedup (and baseline runs) */
    double baseline_s;           /* median run time with the experiment's hooks, no delay */
    double measured_s;           /* median run time of the experiment, delays included */
    double delay_s;              /* median delay inserted */
    double predicted_s;          /* median of measured - delay */
    double change;               /* median over rounds of predicted / baseline - 1 */
    double change_lo, change_hi; /* the interval over the runs */
    double holds;                /* median holds that ended at the site */
    double hold_s;               /* median of their summed length */
    char *progress;              /* NULL: the run's time; else the function whose calls' rate */
    double baseline_calls;       /* progress: median calls in the baseline runs */
    double calls;                /* progress: median calls in the experiment's runs */
};

/* The verdict on site in words, from its row of the largest speedup:
 * "off the critical path" for much blame and next to no predicted gain,
 * else "". */
const char *lb_whatif_verdict(const struct lb_whatif_row *rows, int n, const char *site);
/* sql prepared on db, or exit 1 with one line naming path. */
sqlite3_stmt *lb_whatif_prepare(sqlite3 *db, const char *path, const char *sql);
/* Create the table if missing and replace the rows of these sites. */
void lb_whatif_store(sqlite3 *db, const char *path, const struct lb_whatif_row *rows, int n);
/* Print rows (grouped by site, speedups in order) as a table or JSON. */
void lb_whatif_print(const struct lb_whatif_row *rows, int n, bool json, FILE *out);
/* The stored rows of the database at path; *n gets how many (0: no table). */
struct lb_whatif_row *lb_whatif_load(sqlite3 *db, int *n);
void lb_whatif_free(struct lb_whatif_row *rows, int n);
/* An HTML section with the stored rows, when the database has any. */
void lb_whatif_html(const char *path, FILE *out);
#endif
