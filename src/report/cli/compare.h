/*
 * compare.h - `lockblame compare`, in three steps: parse the options
 * (compare.c), compute per-context changes across runs (compare_compute.c)
 * and print them (compare_print.c).
 *
 * Calling contexts are matched across runs by their frame path, each frame
 * keyed by function + file + line (module basename + offset when the
 * function is unknown); node ids and addresses are never compared. With
 * --by-function a context is the innermost function (unnamed frames: their
 * module). A context's effort is its exclusive work + idleness summed over
 * threads (thesis ch. 7.2.1); its change from the first run A to the last
 * run B is excess = effort(B) - effort(A), negative for a gain.
 *
 * --pid/--comm select the same processes in every run (select.h); only
 * theirs are loaded, so every total, duration and thread count below is
 * the selected processes'.
 */
#ifndef LB_CLI_COMPARE_H
#define LB_CLI_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "report/cli/format.h"
#include "report/cli/profile.h"

struct cmp_opts {
    enum lb_format format; /* table, csv or json */
    bool by_function;
    int limit;            /* table rows, default 20 */
    struct lb_select sel; /* --pid/--comm, applied to every run */
    char **dbs;           /* the databases, A first */
    int ndbs;
};

struct cmp_ctx {        /* a calling context (or a function), merged over runs */
    int32_t parent;     /* ctx index, -1 at the top */
    int32_t run, frame; /* where its labels come from */
};

struct cmp {
    int nruns;
    bool by_function;
    struct lb_profile **runs;
    struct lb_strtab keys; /* frame keys across runs */
    struct lb_map map;     /* (parent + 1) << 32 | key -> ctx */
    struct cmp_ctx *ctx;
    int32_t nctx;
    size_t cap;
    double **work, **idle; /* [run][ctx]; slot nctx holds metrics at the root */

    /* compare_compute.c's results */
    double *excess; /* [ctx] effort(last) - effort(first) */
    double *change; /* [ctx] sort key: the signed largest change from the
				 * first run over the series (= excess for two runs) */
    int32_t *order; /* contexts with any effort, by |change| descending */
    int32_t norder;
    double abs_total;     /* sum of |excess| over contexts: share's denominator */
    double gains, losses; /* sums of the negative / positive excesses */
};

/* Effort of context x in run r. */
double lb_cmp_effort(const struct cmp *c, int r, int32_t x);
/* Load nothing; match the loaded runs' contexts and fill the results. */
void lb_cmp_compute(struct cmp *c);
/* Print the table (with the story header; the process selection when
 * there is one or a run has several processes) or csv/json rows to stdout. */
void lb_cmp_print(struct cmp *c, const struct cmp_opts *o);
/* One stderr line per run whose program differs from A's. */
void lb_cmp_warn_programs(const struct cmp *c);

#endif
