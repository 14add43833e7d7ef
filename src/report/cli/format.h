/*
 * format.h - one row/column model printed four ways: an aligned,
 * terminal-width-aware table, CSV with a header line, a JSON array of
 * objects, an escaped HTML <table> (for the --format html page, which
 * format_html.c writes), and folded stacks, which views print themselves.
 *
 * Columns are declared once per view as a static array; cells are set by
 * column index. Fractions are stored as 0..1 and shown as percentages only
 * in the table.
 */
#ifndef LB_CLI_FORMAT_H
#define LB_CLI_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum lb_format {
    LB_FMT_TABLE,
    LB_FMT_CSV,
    LB_FMT_JSON,
    LB_FMT_FOLDED,
    LB_FMT_HTML,
    LB_FMT_PPROF
};
int lb_format_parse(const char *s); /* -1 if unknown */

enum lb_ctype {
    LB_C_STR,     /* text; NULL prints as null / empty */
    LB_C_INT,     /* integer */
    LB_C_SEC,     /* seconds: %.3f in the table, full precision elsewhere */
    LB_C_FRAC,    /* fraction 0..1, a percentage in the table */
    LB_C_BOOL,    /* true/false */
    LB_C_LIST,    /* list of strings: JSON array, "; "-joined in CSV */
    LB_C_NUMLIST, /* list of numbers: JSON array, "; "-joined in CSV */
};

enum lb_colflag {
    LB_COL_NOTABLE = 1,   /* CSV/JSON only */
    LB_COL_TABLEONLY = 2, /* table only */
    LB_COL_LABEL = 4,     /* the last, flexible table column: indented, truncated */
    LB_COL_SIGNED = 8,    /* SEC/FRAC changes: the table shows "+" on gains too */
};

struct lb_col {
    const char *key;   /* JSON key and CSV header */
    const char *title; /* table header */
    enum lb_ctype type;
    unsigned flags; /* enum lb_colflag */
};

struct lb_table;

struct lb_table *lb_table_new(const struct lb_col *cols, int ncols);
int lb_table_add_row(struct lb_table *t);                               /* returns the row index */
void lb_table_str(struct lb_table *t, int row, int col, const char *s); /* copies */
void lb_table_int(struct lb_table *t, int row, int col, int64_t v);
void lb_table_num(struct lb_table *t, int row, int col, double v); /* SEC, FRAC */
void lb_table_bool(struct lb_table *t, int row, int col, bool v);
void lb_table_list_add(struct lb_table *t, int row, int col, const char *s);
/* Like lb_table_str / lb_table_list_add, but keep the pointer: `s` must
 * outlive the table (frame labels of a loaded profile do). */
void lb_table_str_ref(struct lb_table *t, int row, int col, const char *s);
void lb_table_list_ref(struct lb_table *t, int row, int col, const char *s);
void lb_table_numlist_add(struct lb_table *t, int row, int col, double v);
void lb_table_indent(struct lb_table *t, int row, int indent); /* table label only */
/* A table-only line printed below the row, under the label column. */
void lb_table_detail(struct lb_table *t, int row, const char *line);
int lb_table_rows(const struct lb_table *t);
/* CSV/JSON column order: these columns first (in this order), then the
 * others in declaration order. `cols` must outlive the table. */
void lb_table_order(struct lb_table *t, const int *cols, int n);
/* Print in `fmt` (table, csv, json or html) to out. An html table shows the
 * table columns plus the list columns, at most LB_HTML_ROWS rows. */
#define LB_HTML_ROWS 100
void lb_table_print(struct lb_table *t, enum lb_format fmt, FILE *out);
void lb_table_free(struct lb_table *t);

/* Terminal width: $COLUMNS, else TIOCGWINSZ on stdout, else 100. */
int lb_term_width(void);

/* JSON string literal with escapes. */
void lb_json_string(FILE *out, const char *s);
/* The same, safe inside an HTML <script> element. */
void lb_json_script_string(FILE *out, const char *s);
/* A number as JSON (null for NaN/inf), full precision. */
void lb_json_number(FILE *out, double v);
/* Text escaped for HTML text and quoted attribute values: & < > " ' become
 * entities, control characters U+FFFD, U+2028/U+2029 character references
 * (format_html.c). */
void lb_html_text(FILE *out, const char *s);

#endif
