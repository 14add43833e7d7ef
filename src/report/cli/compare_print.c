/*
 * compare_print.c - print a computed comparison (compare.h): in a table, a
 * per-run scaling header with speedup and parallel efficiency, one line
 * saying whether the last run is faster or slower than the first, the
 * gains and the losses, then the contexts by absolute change; csv/json
 * print every context's row. Above the table, the processes compared when
 * --pid/--comm selected some or a run holds several.
 *
 * Speedup of run r = duration(A) / duration(r). Parallel efficiency of run
 * r relative to A = speedup * threads(A) / threads(r) (strong scaling: 100%
 * when r's extra threads shorten the run in proportion; thesis ch. 7.2).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/cli/compare.h"
#include "report/cli/select.h"
#include "report/cli/views.h"

enum {
    C_EXCESS,
    C_SHARE,
    C_A,
    C_B,
    C_EXWORK,
    C_EXIDLE,
    C_EXCESS_BY_RUN,
    C_GROWS,
    C_LABEL,
    C_FUNCTION,
    C_FILE,
    C_LINE,
    C_MODULE,
    C_CONTEXT,
    C_VALUES,
    C_CHANGE,
    C_NCOLS
};

static struct lb_col cmp_cols[C_NCOLS] = {
    [C_EXCESS] = { "excess_s", "Change s", LB_C_SEC, LB_COL_SIGNED },
    [C_SHARE] = { "share", "Share", LB_C_FRAC, LB_COL_SIGNED },
    [C_A] = { "a_s", "A s", LB_C_SEC, 0 },
    [C_B] = { "b_s", "B s", LB_C_SEC, 0 },
    [C_EXWORK] = { "excess_work_s", "Ch work", LB_C_SEC, LB_COL_SIGNED },
    [C_EXIDLE] = { "excess_idleness_s", "Ch idle", LB_C_SEC, LB_COL_SIGNED },
    [C_GROWS] = { "grows", "Grows", LB_C_BOOL, LB_COL_NOTABLE },
    [C_LABEL] = { "label", "Context (innermost frame; callers below)", LB_C_STR,
                  LB_COL_LABEL | LB_COL_TABLEONLY },
    [C_FUNCTION] = { "function", "", LB_C_STR, LB_COL_NOTABLE },
    [C_FILE] = { "file", "", LB_C_STR, LB_COL_NOTABLE },
    [C_LINE] = { "line", "", LB_C_INT, LB_COL_NOTABLE },
    [C_MODULE] = { "module", "", LB_C_STR, LB_COL_NOTABLE },
    [C_CONTEXT] = { "context", "", LB_C_STR, LB_COL_NOTABLE },
    [C_VALUES] = { "values_s", "Effort per run", LB_C_NUMLIST, LB_COL_NOTABLE },
    [C_EXCESS_BY_RUN] = { "excess_by_run_s", "Change per run", LB_C_NUMLIST, LB_COL_NOTABLE },
    [C_CHANGE] = { "change_s", "", LB_C_SEC, LB_COL_NOTABLE },
};

#define SHOWN_CHANGE 0.0005 /* s: smaller changes print as 0.000 in a table */

static char run_letter(int r)
{
    return (char)('A' + (r < 26 ? r : 25));
}

static int64_t run_threads(const struct lb_profile *p)
{
    return p->run.threads ? p->run.threads : p->nthreads;
}

static double speedup(const struct cmp *c, int r)
{
    double d = c->runs[r]->run.duration_s;

    return d > 0 ? c->runs[0]->run.duration_s / d : 0;
}

static double efficiency(const struct cmp *c, int r)
{
    int64_t n = run_threads(c->runs[r]);

    return n > 0 ? speedup(c, r) * (double)run_threads(c->runs[0]) / (double)n : 0;
}

/* "processes: comm=NAME (A: 3 of 9, B: 3 of 7)", or "processes: all (A: 9,
 * B: 7)" when nothing is selected; no line for single-process runs. */
static void print_processes(const struct cmp *c, const struct lb_select *sel)
{
    bool selected = lb_select_any(sel), several = false;
    struct lb_buf b = { 0 };

    for (int r = 0; r < c->nruns; r++)
        several |= c->runs[r]->nprocs > 1;
    if (!selected && !several)
        return;
    lb_select_describe(sel, &b);
    printf("processes: %s (", selected ? lb_buf_str(&b) : "all");
    for (int r = 0; r < c->nruns; r++) {
        const struct lb_profile *p = c->runs[r];

        printf("%s%c: %" PRId32, r ? ", " : "", run_letter(r), p->nselected);
        if (selected)
            printf(" of %" PRId32, p->nprocs);
    }
    puts(")");
    lb_buf_free(&b);
}

static void print_scaling(const struct cmp *c)
{
    printf("%-4s %-18s %7s %10s %8s %10s %9s %9s %9s %6s\n", "Run", "Database", "Threads",
           "Duration s", "Speedup", "Efficiency", "Effort s", "Work s", "Idle s", "Idle%");
    for (int r = 0; r < c->nruns; r++) {
        const struct lb_profile *p = c->runs[r];
        const struct lb_totals *t = &p->totals;

        printf("%-4c %-18.18s %7" PRId64 " %10.3f %7.2fx %9.0f%% %9.3f %9.3f %9.3f %5.1f%%\n",
               run_letter(r), lb_basename(p->path), run_threads(p), p->run.duration_s,
               speedup(c, r), 100 * efficiency(c, r), t->effort, t->work, t->idleness,
               100 * lb_share(t->idleness, t->effort));
    }
    putchar('\n');
}

/* The innermost context from x up whose frame is the program's own, as
 * `report` names a release site (site_frame.c): inline frames of system
 * headers (std::lock_guard, gthr-default.h) and runtime libraries stay
 * below it. x itself if there is none. */
static int32_t program_ctx(const struct cmp *c, int32_t x)
{
    for (int32_t y = x; y >= 0; y = c->ctx[y].parent)
        if (!lb_frame_is_runtime(c->runs[c->ctx[y].run], c->ctx[y].frame))
            return y;
    return x;
}

/* The story: is the last run faster or slower, and where did it gain and
 * lose effort. */
static void print_story(struct cmp *c)
{
    int last = c->nruns - 1;
    char b = run_letter(last);
    double s = speedup(c, last);
    const struct lb_profile *pa = c->runs[0], *pb = c->runs[last];

    if (s == 0)
        printf("%c's duration is unknown: no speedup\n", b);
    else if (fabs(s - 1) < 0.02)
        printf("%c is about as fast as A: speedup %.2fx", b, s);
    else
        printf("%c is %s than A: speedup %.2fx", b, s > 1 ? "FASTER" : "SLOWER", s);
    if (s != 0)
        printf(" (%.3f s -> %.3f s), parallel efficiency %.0f%% (%" PRId64 " -> %" PRId64
               " threads)\n",
               pa->run.duration_s, pb->run.duration_s, 100 * efficiency(c, last), run_threads(pa),
               run_threads(pb));
    printf("effort:  %.3f s -> %.3f s (%+.3f s): gains %+.3f s, losses %+.3f s\n",
           pa->totals.effort, pb->totals.effort, pb->totals.effort - pa->totals.effort, c->gains,
           c->losses);
    int32_t gain = -1, loss = -1;

    for (int32_t i = 0; i < c->norder; i++) {
        int32_t x = c->order[i];

        if (c->excess[x] < 0 && (gain < 0 || c->excess[x] < c->excess[gain]))
            gain = x;
        if (c->excess[x] > 0 && (loss < 0 || c->excess[x] > c->excess[loss]))
            loss = x;
    }
    for (int k = 0; k < 2; k++) {
        int32_t x = k ? loss : gain;

        if (x < 0)
            continue;
        int32_t y = program_ctx(c, x);
        struct lb_profile *p = c->runs[c->ctx[y].run];

        printf("largest %s: %+.3f s at %s\n", k ? "loss" : "gain", c->excess[x],
               c->by_function ? lb_frame_proc_label(p, c->ctx[y].frame)
                              : lb_frame_desc(p, c->ctx[y].frame));
    }
    putchar('\n');
}

/* The frame path of a context, root to leaf, as "f1;f2;f3". */
static void ctx_path(struct cmp *c, int32_t x, struct lb_buf *b)
{
    int32_t chain[512], n = 0;

    for (int32_t y = x; y >= 0 && n < 512; y = c->ctx[y].parent)
        chain[n++] = y;
    for (int32_t i = n - 1; i >= 0; i--) {
        const struct cmp_ctx *k = &c->ctx[chain[i]];

        if (i != n - 1)
            lb_buf_putc(b, ';');
        lb_buf_puts(b, lb_frame_label(c->runs[k->run], k->frame));
    }
}

static bool grows(const struct cmp *c, int32_t x)
{
    double prev = 0;
    bool g = true;

    for (int r = 1; r < c->nruns; r++) {
        double e = lb_cmp_effort(c, r, x) - lb_cmp_effort(c, 0, x);

        g &= e >= prev && e > 0;
        prev = e;
    }
    return g;
}

static void add_row(struct cmp *c, struct lb_table *t, int32_t x, struct lb_buf *b)
{
    const struct cmp_ctx *k = &c->ctx[x];
    struct lb_profile *p = c->runs[k->run];
    int last = c->nruns - 1, row = lb_table_add_row(t);
    const char *name =
        c->by_function ? lb_frame_proc_label(p, k->frame) : lb_frame_label(p, k->frame);

    lb_table_num(t, row, C_EXCESS, c->excess[x]);
    lb_table_num(t, row, C_CHANGE, c->change[x]);
    lb_table_num(t, row, C_SHARE, lb_share(c->excess[x], c->abs_total));
    lb_table_num(t, row, C_A, lb_cmp_effort(c, 0, x));
    lb_table_num(t, row, C_B, lb_cmp_effort(c, last, x));
    lb_table_num(t, row, C_EXWORK, c->work[last][x] - c->work[0][x]);
    lb_table_num(t, row, C_EXIDLE, c->idle[last][x] - c->idle[0][x]);
    lb_table_bool(t, row, C_GROWS, grows(c, x));
    lb_table_str(t, row, C_FUNCTION, name);
    lb_table_str(t, row, C_FILE, c->by_function ? NULL : p->frames[k->frame].file);
    lb_table_int(t, row, C_LINE, c->by_function ? 0 : p->frames[k->frame].line);
    lb_table_str(t, row, C_MODULE, lb_frame_module(p, k->frame));
    lb_buf_reset(b);
    if (c->by_function)
        lb_buf_puts(b, name);
    else
        ctx_path(c, x, b);
    lb_table_str(t, row, C_CONTEXT, lb_buf_str(b));
    for (int r = 0; r < c->nruns; r++)
        lb_table_numlist_add(t, row, C_VALUES, lb_cmp_effort(c, r, x));
    for (int r = 1; r < c->nruns; r++)
        lb_table_numlist_add(t, row, C_EXCESS_BY_RUN,
                             lb_cmp_effort(c, r, x) - lb_cmp_effort(c, 0, x));
    lb_buf_reset(b);
    if (c->by_function) {
        const char *mod = lb_frame_module(p, k->frame);

        lb_buf_printf(b, "%s%s%s", name, *mod && name[0] != '[' ? " in " : "",
                      name[0] != '[' ? mod : "");
    } else {
        lb_frame_describe(p, k->frame, b);
    }
    lb_table_str(t, row, C_LABEL, lb_buf_str(b));
    for (int32_t y = k->parent, d = 0; !c->by_function && y >= 0 && d < 3;
         y = c->ctx[y].parent, d++) {
        lb_buf_reset(b);
        lb_buf_puts(b, "<- ");
        lb_frame_describe(c->runs[c->ctx[y].run], c->ctx[y].frame, b);
        lb_table_detail(t, row, lb_buf_str(b));
    }
}

void lb_cmp_print(struct cmp *c, const struct cmp_opts *o)
{
    bool table = o->format == LB_FMT_TABLE, multi = c->nruns > 2;

    cmp_cols[C_A].title = multi ? "First s" : "A s";
    cmp_cols[C_B].title = multi ? "Last s" : "B s";
    cmp_cols[C_EXCESS_BY_RUN].flags = multi ? 0 : LB_COL_NOTABLE;
    cmp_cols[C_LABEL].title =
        c->by_function ? "Function" : "Context (innermost frame; callers below)";
    struct lb_table *t = lb_table_new(cmp_cols, C_NCOLS);
    static const int col_order[] = { C_FUNCTION, C_FILE,          C_LINE,    C_A,
                                     C_B,        C_EXCESS,        C_SHARE,   C_EXWORK,
                                     C_EXIDLE,   C_MODULE,        C_CONTEXT, C_GROWS,
                                     C_VALUES,   C_EXCESS_BY_RUN, C_CHANGE };
    struct lb_buf b = { 0 };

    lb_table_order(t, col_order, (int)(sizeof col_order / sizeof *col_order));
    for (int32_t i = 0; i < c->norder && (!table || i < o->limit); i++) {
        if (table && fabs(c->change[c->order[i]]) < SHOWN_CHANGE)
            break; /* sorted by |change|: the rest print as 0.000 too */
        add_row(c, t, c->order[i], &b);
    }
    if (table) {
        print_processes(c, &o->sel);
        print_scaling(c);
        print_story(c);
        const char *rows = c->by_function ? "functions" : "contexts";

        if (multi)
            printf("%s with the largest change from A over the series (by |change|; "
                   "Change s is %c - A):\n",
                   rows, run_letter(c->nruns - 1));
        else
            printf("%s by |change| (Change s = B - A; negative is a gain; unchanged ones not "
                   "shown; structural waits (joins, threads parked until shutdown, idle helpers) "
                   "left out as in report):\n",
                   rows);
        if (!lb_table_rows(t))
            printf("(no %s changed)\n", c->by_function ? "function" : "context");
        else
            lb_table_print(t, LB_FMT_TABLE, stdout);
    } else {
        lb_table_print(t, o->format, stdout);
    }
    lb_table_free(t);
    lb_buf_free(&b);
}

/* The program a run profiled: its command's first word, without the
 * directory. Writes into buf. */
static const char *program(const struct lb_profile *p, char *buf, size_t len)
{
    const char *cmd = p->run.command ? p->run.command : "";
    size_t n = strcspn(cmd, " \t");

    snprintf(buf, len, "%.*s", (int)n, cmd);
    return lb_basename(buf);
}

void lb_cmp_warn_programs(const struct cmp *c)
{
    char a[256], x[256];
    const char *pa = program(c->runs[0], a, sizeof a);

    for (int r = 1; r < c->nruns && *pa; r++) {
        const char *px = program(c->runs[r], x, sizeof x);

        if (*px && strcmp(pa, px) != 0) {
            cli_warn("compare: the runs profile different programs (A: %s, %c: %s); only "
                     "contexts with the same functions match",
                     pa, run_letter(r), px);
            return;
        }
    }
}
