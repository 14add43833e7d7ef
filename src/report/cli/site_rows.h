/*
 * site_rows.h - the rows of `report --by-release-site`, computed once for
 * every caller: the view prints them (views_sites.c) and `lockblame
 * whatif` ranks its sites by them (whatif_sites.c), so that the two agree
 * row for row.
 */
#ifndef LB_CLI_SITE_ROWS_H
#define LB_CLI_SITE_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "report/cli/profile.h"
#include "report/cli/util.h"

#define LB_SITE_NO_KIND LB_OBJ_KINDS /* kind of a row for a metric without an object kind */

/* One row: a frame key (function, file, line of the innermost program
 * frame) and object kind, split into what a user can act on and the
 * structural part. */
struct lb_site_row {
    int32_t key;      /* frame key id */
    int kind;         /* lb_obj_kind, or LB_SITE_NO_KIND */
    int32_t frame;    /* a representative frame */
    double value;     /* selected metric */
    double blame;     /* idleness at this frame+kind */
    int64_t blamed;   /* blamed_count */
    int64_t count;    /* from the site table; -1: unknown */
    int32_t heaviest; /* node with the largest value */
    double heaviest_value;
    bool structural; /* structural waits' blame (docs/DESIGN.md rule 6) */
};

struct lb_site_rows {
    struct lb_site_row *rows; /* ranked: rows a user can act on first, by value */
    int32_t n;
    int32_t acts; /* rows [0, acts) are not structural */
};

/* The release-site rows of metric m in p (table format or not: the same). */
void lb_site_rows(struct lb_profile *p, enum lb_metric m, struct lb_site_rows *out);
void lb_site_rows_free(struct lb_site_rows *r);
#endif
