/*
 * format.c - print a struct lb_table as an aligned table, CSV or JSON.
 * The table's last (label) column takes what the terminal width leaves and
 * is truncated with ".."; every other column is as wide as its widest cell.
 */
#include "report/cli/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/cli/util.h"

struct cell { /* 24 bytes: tables can have 100k+ rows */
    union {
        double d;     /* LB_C_SEC, LB_C_FRAC */
        int64_t i;    /* LB_C_INT, LB_C_BOOL */
        char *s;      /* LB_C_STR */
        char **items; /* LB_C_LIST */
        double *nums; /* LB_C_NUMLIST */
    } v;
    int32_t n, cap; /* list length and capacity */
    bool set;
    bool borrowed; /* strings are not ours to free */
};

struct row_extra {
    int indent;
    char **details;
    int ndetails;
    size_t cap;
};

struct lb_table {
    const struct lb_col *cols;
    int ncols;
    struct cell *cells; /* nrows * ncols */
    struct row_extra *extra;
    int nrows;
    size_t cap;       /* rows allocated in extra */
    size_t cellcap;   /* cells allocated */
    const int *order; /* CSV/JSON leading columns, or NULL */
    int norder;
};

int lb_format_parse(const char *s)
{
    static const char *const names[] = { "table", "csv", "json", "folded", "html", "pprof" };

    for (int i = 0; s && i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

struct lb_table *lb_table_new(const struct lb_col *cols, int ncols)
{
    struct lb_table *t = lb_xcalloc(1, sizeof *t);

    t->cols = cols;
    t->ncols = ncols;
    return t;
}

int lb_table_add_row(struct lb_table *t)
{
    lb_grow((void **)&t->cells, &t->cellcap, ((size_t)t->nrows + 1) * (size_t)t->ncols,
            sizeof *t->cells);
    lb_grow((void **)&t->extra, &t->cap, (size_t)t->nrows + 1, sizeof *t->extra);
    memset(&t->cells[(size_t)t->nrows * (size_t)t->ncols], 0, (size_t)t->ncols * sizeof *t->cells);
    memset(&t->extra[t->nrows], 0, sizeof *t->extra);
    return t->nrows++;
}

static struct cell *cell_at(struct lb_table *t, int row, int col)
{
    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        cli_die(LB_EXIT_FAIL, "internal error: cell %d,%d out of range", row, col);
    return &t->cells[(size_t)row * (size_t)t->ncols + (size_t)col];
}

void lb_table_str(struct lb_table *t, int row, int col, const char *s)
{
    struct cell *c = cell_at(t, row, col);

    if (!c->borrowed)
        free(c->v.s);
    c->v.s = lb_xstrdup(s);
    c->borrowed = false;
    c->set = s != NULL;
}

void lb_table_str_ref(struct lb_table *t, int row, int col, const char *s)
{
    struct cell *c = cell_at(t, row, col);

    if (!c->borrowed)
        free(c->v.s);
    c->v.s = (char *)s;
    c->borrowed = true;
    c->set = s != NULL;
}

void lb_table_int(struct lb_table *t, int row, int col, int64_t v)
{
    struct cell *c = cell_at(t, row, col);

    c->v.i = v;
    c->set = true;
}

void lb_table_num(struct lb_table *t, int row, int col, double v)
{
    struct cell *c = cell_at(t, row, col);

    c->v.d = v;
    c->set = true;
}

void lb_table_bool(struct lb_table *t, int row, int col, bool v)
{
    lb_table_int(t, row, col, v);
}

void lb_table_list_add(struct lb_table *t, int row, int col, const char *s)
{
    struct cell *c = cell_at(t, row, col);

    size_t cap = (size_t)c->cap;

    if (c->borrowed)
        cli_die(LB_EXIT_FAIL, "internal error: mixed list cell");
    lb_grow((void **)&c->v.items, &cap, (size_t)c->n + 1, sizeof *c->v.items);
    c->cap = (int32_t)cap;
    c->v.items[c->n++] = lb_xstrdup(s ? s : "");
    c->set = true;
}

void lb_table_list_ref(struct lb_table *t, int row, int col, const char *s)
{
    struct cell *c = cell_at(t, row, col);
    size_t cap = (size_t)c->cap;

    if (c->n && !c->borrowed)
        cli_die(LB_EXIT_FAIL, "internal error: mixed list cell");
    lb_grow((void **)&c->v.items, &cap, (size_t)c->n + 1, sizeof *c->v.items);
    c->cap = (int32_t)cap;
    c->v.items[c->n++] = (char *)(s ? s : "");
    c->borrowed = true;
    c->set = true;
}

void lb_table_numlist_add(struct lb_table *t, int row, int col, double v)
{
    struct cell *c = cell_at(t, row, col);

    size_t cap = (size_t)c->cap;

    lb_grow((void **)&c->v.nums, &cap, (size_t)c->n + 1, sizeof *c->v.nums);
    c->cap = (int32_t)cap;
    c->v.nums[c->n++] = v;
    c->set = true;
}

void lb_table_indent(struct lb_table *t, int row, int indent)
{
    (void)cell_at(t, row, 0);
    t->extra[row].indent = indent;
}

void lb_table_detail(struct lb_table *t, int row, const char *line)
{
    (void)cell_at(t, row, 0);
    struct row_extra *e = &t->extra[row];

    lb_grow((void **)&e->details, &e->cap, (size_t)e->ndetails + 1, sizeof *e->details);
    e->details[e->ndetails++] = lb_xstrdup(line);
}

void lb_table_order(struct lb_table *t, const int *cols, int n)
{
    t->order = cols;
    t->norder = n;
}

/* The CSV/JSON columns in output order into out[ncols]; returns the count. */
static int data_columns(const struct lb_table *t, int *out)
{
    int n = 0;

    for (int i = 0; i < t->norder; i++)
        if (!(t->cols[t->order[i]].flags & LB_COL_TABLEONLY))
            out[n++] = t->order[i];
    for (int c = 0; c < t->ncols; c++) {
        bool listed = false;

        for (int i = 0; i < t->norder; i++)
            listed |= t->order[i] == c;
        if (!listed && !(t->cols[c].flags & LB_COL_TABLEONLY))
            out[n++] = c;
    }
    return n;
}

int lb_table_rows(const struct lb_table *t)
{
    return t->nrows;
}

int lb_term_width(void)
{
    const char *env = getenv("COLUMNS");
    struct winsize ws;

    if (env && atoi(env) > 0)
        return atoi(env);
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 100;
}

/* Does byte s[0] start something a JSON string must escape? Inside an
 * HTML <script> element also '<', '>', '&', DEL and the line and paragraph
 * separators U+2028/U+2029 (e2 80 a8/a9), which end a script line. */
static bool json_needs_escape(const char *s, bool in_script)
{
    unsigned char c = (unsigned char)*s;

    if (c == '"' || c == '\\' || c < 0x20)
        return true;
    if (!in_script)
        return false;
    return c == '<' || c == '>' || c == '&' || c == 0x7f ||
           (c == 0xe2 && (unsigned char)s[1] == 0x80 &&
            ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9));
}

/* s as a JSON string literal (null for NULL). */
static void json_string_escaped(FILE *out, const char *s, bool in_script)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    while (*s) {
        /* write the longest run that needs no escape in one go */
        size_t run = 0;

        while (s[run] && !json_needs_escape(s + run, in_script))
            run++;
        fwrite(s, 1, run, out);
        s += run;
        if (!*s)
            break;
        switch (*s) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        default:
            if ((unsigned char)*s == 0xe2) { /* U+2028 or U+2029 */
                fprintf(out, "\\u%04x", 0x2028 + ((unsigned char)s[2] - 0xa8));
                s += 2;
            } else {
                fprintf(out, "\\u%04x", (unsigned char)*s);
            }
            break;
        }
        s++;
    }
    putc('"', out);
}

void lb_json_string(FILE *out, const char *s)
{
    json_string_escaped(out, s, false);
}

void lb_json_script_string(FILE *out, const char *s)
{
    json_string_escaped(out, s, true);
}

void lb_json_number(FILE *out, double v)
{
    if (!isfinite(v))
        fputs("null", out);
    else
        fprintf(out, "%.12g", v == 0 ? 0.0 : v); /* no "-0" */
}

/* Cell text for the table and CSV. */
static void cell_text(const struct lb_col *col, const struct cell *c, bool table, struct lb_buf *b)
{
    lb_buf_reset(b);
    if (!c->set) {
        lb_buf_puts(b, table && col->type != LB_C_STR ? "-" : "");
        return;
    }
    switch (col->type) {
    case LB_C_STR:
        lb_buf_puts(b, c->v.s);
        break;
    case LB_C_INT:
        lb_buf_printf(b, "%lld", (long long)c->v.i);
        break;
    case LB_C_BOOL:
        lb_buf_puts(b, c->v.i ? (table ? "yes" : "true") : (table ? "no" : "false"));
        break;
    case LB_C_SEC:
        if (table)
            lb_buf_printf(b, (col->flags & LB_COL_SIGNED) ? "%+.3f" : "%.3f",
                          c->v.d == 0 ? 0.0 : c->v.d);
        else
            lb_buf_printf(b, "%.12g", c->v.d == 0 ? 0.0 : c->v.d);
        break;
    case LB_C_FRAC:
        if (table)
            lb_buf_printf(b, (col->flags & LB_COL_SIGNED) ? "%+.1f%%" : "%.1f%%",
                          c->v.d * 100 == 0 ? 0.0 : c->v.d * 100);
        else
            lb_buf_printf(b, "%.12g", c->v.d == 0 ? 0.0 : c->v.d);
        break;
    case LB_C_LIST:
        for (int i = 0; i < c->n; i++) {
            if (i)
                lb_buf_puts(b, table ? ", " : "; ");
            lb_buf_puts(b, c->v.items[i]);
        }
        break;
    case LB_C_NUMLIST:
        for (int i = 0; i < c->n; i++)
            lb_buf_printf(b, i ? (table ? " %.3f" : "; %.12g") : (table ? "%.3f" : "%.12g"),
                          c->v.nums[i]);
        break;
    }
}

static bool right_aligned(enum lb_ctype t)
{
    return t == LB_C_INT || t == LB_C_SEC || t == LB_C_FRAC || t == LB_C_NUMLIST;
}

/* Print at most `width` bytes of s, cutting at a UTF-8 boundary and marking
 * the cut with "..". */
static void put_clipped(FILE *out, const char *s, int width)
{
    int len = (int)strlen(s);

    if (len <= width) {
        fputs(s, out);
        return;
    }
    int keep = width > 2 ? width - 2 : 0;

    while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
        keep--;
    fwrite(s, 1, (size_t)keep, out);
    fputs(width >= 2 ? ".." : "", out);
}

static void print_table(struct lb_table *t, FILE *out)
{
    int width = lb_term_width();
    int *w = lb_xcalloc((size_t)t->ncols, sizeof *w);
    struct lb_buf b = { 0 };

    for (int c = 0; c < t->ncols; c++) {
        if (t->cols[c].flags & LB_COL_NOTABLE)
            continue;
        w[c] = (int)strlen(t->cols[c].title);
        for (int r = 0; r < t->nrows; r++) {
            cell_text(&t->cols[c], cell_at(t, r, c), true, &b);
            int n = (int)b.len + ((t->cols[c].flags & LB_COL_LABEL) ? 2 * t->extra[r].indent : 0);

            if (n > w[c])
                w[c] = n;
        }
    }
    /* The label column gets the rest of the line, at least 24. */
    int fixed = 0, label_start = 0;
    bool seen = false;

    for (int c = 0; c < t->ncols; c++) {
        if (t->cols[c].flags & LB_COL_NOTABLE)
            continue;
        if (seen)
            fixed += 2;
        seen = true;
        if (t->cols[c].flags & LB_COL_LABEL)
            label_start = fixed;
        else
            fixed += w[c];
    }
    int label_w = width - fixed;

    if (label_w < 24)
        label_w = 24;
    for (int r = -1; r < t->nrows; r++) {
        struct row_extra *e = r >= 0 ? &t->extra[r] : NULL;
        bool first = true;

        for (int c = 0; c < t->ncols; c++) {
            const struct lb_col *cd = &t->cols[c];

            if (cd->flags & LB_COL_NOTABLE)
                continue;
            if (r < 0) {
                lb_buf_reset(&b);
                lb_buf_puts(&b, cd->title);
            } else {
                cell_text(cd, cell_at(t, r, c), true, &b);
            }
            fputs(first ? "" : "  ", out);
            first = false;
            if (cd->flags & LB_COL_LABEL) {
                int ind = e ? 2 * e->indent : 0;

                if (ind > label_w - 8)
                    ind = label_w - 8 > 0 ? label_w - 8 : 0;
                fprintf(out, "%*s", ind, "");
                put_clipped(out, lb_buf_str(&b), label_w - ind);
            } else if (right_aligned(cd->type)) {
                fprintf(out, "%*s", w[c], lb_buf_str(&b));
            } else {
                /* no trailing blanks after a last text column */
                bool last = true;

                for (int k = c + 1; k < t->ncols; k++)
                    if (!(t->cols[k].flags & LB_COL_NOTABLE))
                        last = false;
                fprintf(out, "%-*s", last ? 0 : w[c], lb_buf_str(&b));
            }
        }
        putc('\n', out);
        for (int d = 0; e && d < e->ndetails; d++) {
            /* under the label, or from the left margin when the
			 * label column is too narrow for a useful line */
            int start = label_start + 2 * e->indent + 4;

            if (start + 48 > width)
                start = 4 + 2 * e->indent;
            if (start + 24 > width)
                start = width > 24 ? width - 24 : 0;
            fprintf(out, "%*s", start, "");
            put_clipped(out, e->details[d], width - start > 24 ? width - start : 24);
            putc('\n', out);
        }
    }
    lb_buf_free(&b);
    free(w);
}

static void csv_field(FILE *out, const char *s)
{
    bool quote = strpbrk(s, ",\"\n\r") != NULL || (*s && (s[0] == ' ' || s[strlen(s) - 1] == ' '));

    if (!quote) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

static void print_csv(struct lb_table *t, FILE *out)
{
    struct lb_buf b = { 0 };
    int *cols = lb_xmalloc((size_t)t->ncols * sizeof *cols);
    int n = data_columns(t, cols);

    for (int i = 0; i < n; i++) {
        fputs(i ? "," : "", out);
        csv_field(out, t->cols[cols[i]].key);
    }
    putc('\n', out);
    for (int r = 0; r < t->nrows; r++) {
        for (int i = 0; i < n; i++) {
            cell_text(&t->cols[cols[i]], cell_at(t, r, cols[i]), false, &b);
            fputs(i ? "," : "", out);
            csv_field(out, lb_buf_str(&b));
        }
        putc('\n', out);
    }
    free(cols);
    lb_buf_free(&b);
}

static void json_cell(FILE *out, const struct lb_col *col, const struct cell *c)
{
    switch (col->type) {
    case LB_C_STR:
        lb_json_string(out, c->set ? c->v.s : NULL);
        return;
    case LB_C_LIST:
        putc('[', out);
        for (int i = 0; c->set && i < c->n; i++) {
            fputs(i ? ", " : "", out);
            lb_json_string(out, c->v.items[i]);
        }
        putc(']', out);
        return;
    case LB_C_NUMLIST:
        putc('[', out);
        for (int i = 0; c->set && i < c->n; i++) {
            fputs(i ? ", " : "", out);
            lb_json_number(out, c->v.nums[i]);
        }
        putc(']', out);
        return;
    default:
        break;
    }
    if (!c->set)
        fputs("null", out);
    else if (col->type == LB_C_INT)
        fprintf(out, "%lld", (long long)c->v.i);
    else if (col->type == LB_C_BOOL)
        fputs(c->v.i ? "true" : "false", out);
    else
        lb_json_number(out, c->v.d);
}

static void print_json(struct lb_table *t, FILE *out)
{
    if (!t->nrows) {
        fputs("[]\n", out);
        return;
    }
    int *cols = lb_xmalloc((size_t)t->ncols * sizeof *cols);
    int n = data_columns(t, cols);

    fputs("[\n", out);
    for (int r = 0; r < t->nrows; r++) {
        fputs("  {", out);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", out);
            lb_json_string(out, t->cols[cols[i]].key);
            fputs(": ", out);
            json_cell(out, &t->cols[cols[i]], cell_at(t, r, cols[i]));
        }
        fputs(r + 1 < t->nrows ? "},\n" : "}\n", out);
    }
    fputs("]\n", out);
    free(cols);
}

/* An HTML <table>: the columns a table shows plus the list columns (callers,
 * holders), one escaped line per list item; numbers as in the table. */
static void print_html(struct lb_table *t, FILE *out)
{
    struct lb_buf b = { 0 };
    int rows = t->nrows < LB_HTML_ROWS ? t->nrows : LB_HTML_ROWS, ncols = 0;

    fputs("<table class=\"data\">\n<thead><tr>", out);
    for (int c = 0; c < t->ncols; c++) {
        const struct lb_col *cd = &t->cols[c];

        if ((cd->flags & LB_COL_NOTABLE) && cd->type != LB_C_LIST)
            continue;
        ncols++;
        fputs(right_aligned(cd->type) ? "<th class=\"num\">" : "<th>", out);
        lb_html_text(out, *cd->title ? cd->title : cd->key);
        fputs("</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (int r = 0; r < rows; r++) {
        fputs("<tr>", out);
        for (int c = 0; c < t->ncols; c++) {
            const struct lb_col *cd = &t->cols[c];
            const struct cell *cl = cell_at(t, r, c);

            if ((cd->flags & LB_COL_NOTABLE) && cd->type != LB_C_LIST)
                continue;
            fputs(right_aligned(cd->type) ? "<td class=\"num\">" : "<td>", out);
            if (cd->type == LB_C_LIST) {
                for (int i = 0; cl->set && i < cl->n; i++) {
                    fputs(i ? "<br>" : "", out);
                    lb_html_text(out, cl->v.items[i]);
                }
            } else {
                cell_text(cd, cl, true, &b);
                lb_html_text(out, lb_buf_str(&b));
            }
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    if (rows < t->nrows)
        fprintf(out,
                "<tr><td class=\"more\" colspan=\"%d\">%d more rows; --format csv lists "
                "all</td></tr>\n",
                ncols, t->nrows - rows);
    if (!t->nrows)
        fprintf(out, "<tr><td class=\"more\" colspan=\"%d\">(none recorded)</td></tr>\n", ncols);
    fputs("</tbody>\n</table>\n", out);
    lb_buf_free(&b);
}

void lb_table_print(struct lb_table *t, enum lb_format fmt, FILE *out)
{
    switch (fmt) {
    case LB_FMT_CSV:
        print_csv(t, out);
        break;
    case LB_FMT_JSON:
        print_json(t, out);
        break;
    case LB_FMT_HTML:
        print_html(t, out);
        break;
    default:
        print_table(t, out);
        break;
    }
}

void lb_table_free(struct lb_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < (size_t)t->nrows * (size_t)t->ncols; i++) {
        struct cell *c = &t->cells[i];
        enum lb_ctype type = t->cols[i % (size_t)t->ncols].type;

        if (type == LB_C_STR && !c->borrowed)
            free(c->v.s);
        if (type == LB_C_LIST && !c->borrowed)
            for (int j = 0; j < c->n; j++)
                free(c->v.items[j]);
        if (type == LB_C_LIST || type == LB_C_NUMLIST)
            free(c->v.items);
    }
    for (int r = 0; r < t->nrows; r++) {
        for (int d = 0; d < t->extra[r].ndetails; d++)
            free(t->extra[r].details[d]);
        free(t->extra[r].details);
    }
    free(t->cells);
    free(t->extra);
    free(t);
}
