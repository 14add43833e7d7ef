/*
 * compare.c - `lockblame compare A.db B.db [C.db ...]`: parse the options,
 * load the runs, then compute (compare_compute.c) and print
 * (compare_print.c) where a run spends effort beyond the first one or
 * saves it (scaling loss, thesis ch. 7.2.1).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/cli/commands.h"
#include "report/cli/compare.h"
#include "report/cli/select.h"

static const char compare_usage[] =
    "usage: lockblame compare [--pid N] [--comm NAME] [--format table|csv|json]\n"
    "                         [--by-function] [-n N] A.db B.db [C.db ...]\n"
    "\n"
    "Compare runs of the same program (4 vs 16 workers, before vs after a fix).\n"
    "For each calling context, matched by its path of frames (function, file,\n"
    "line), effort = work + idleness summed over threads; excess_s is the\n"
    "change from A to B (negative: a gain), split into work and idleness, and\n"
    "share is its part of all change (sum of |excess_s|). Rows are sorted by\n"
    "absolute change. The table header gives each run's speedup and parallel\n"
    "efficiency relative to A and says whether B is faster or slower. With\n"
    "three or more runs, each is compared with the first and the contexts with\n"
    "the largest change over the series are listed.\n"
    "\n"
    "A run may be named DB@N or DB@N-M: time windows N to M of DB (a spike\n"
    "against the calm before it: lockblame compare s.db@1 s.db@3).\n"
    "A run of a process tree holds all its processes; --pid and --comm keep\n"
    "the same selection in every run (each must have a matching process), and\n"
    "the table header names it with each run's count.\n"
    "\n"
    "options:\n" LB_SELECT_HELP "  --format F     table (default), csv or json (an array of rows)\n"
    "  --by-function  one row per function (innermost frame; unnamed frames by\n"
    "                 module) instead of per calling context\n"
    "  -n N           table rows to show, largest |change| first (default 20)\n"
    "  -h, --help     this help\n";

/* Returns false after printing the help (exit 0); usage errors exit 2. */
static bool parse(int argc, char **argv, struct cmp_opts *o)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "by-function", no_argument, NULL, 'F' },
        LB_SELECT_LONGOPTS,
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int opt;

    *o = (struct cmp_opts){ .format = LB_FMT_TABLE, .limit = 20 };
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":hn:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            fputs(compare_usage, stdout);
            return false;
        case 'f': {
            int fmt = lb_format_parse(optarg);

            if (fmt != LB_FMT_TABLE && fmt != LB_FMT_CSV && fmt != LB_FMT_JSON)
                cli_die(LB_EXIT_USAGE, "compare: unknown format '%s' (table, csv, json)", optarg);
            o->format = (enum lb_format)fmt;
            break;
        }
        case 'F':
            o->by_function = true;
            break;
        case LB_OPT_PID:
        case LB_OPT_COMM:
        case LB_OPT_WINDOW:
        case LB_OPT_SINCE:
        case LB_OPT_UNTIL:
            lb_select_option(&o->sel, "compare", opt, optarg);
            break;
        case 'n': {
            char *end;
            long v = strtol(optarg, &end, 10);

            if (!*optarg || *end || v < 0 || v > 1000000)
                cli_die(LB_EXIT_USAGE, "compare: -n wants a number >= 0, not '%s'", optarg);
            o->limit = (int)v;
            break;
        }
        default:
            lb_bad_option("compare", opt == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (argc - optind < 2)
        cli_die(LB_EXIT_USAGE,
                "compare: needs two or more databases (lockblame compare A.db B.db)");
    o->dbs = argv + optind;
    o->ndbs = argc - optind;
    return true;
}

static void cmp_free(struct cmp *c)
{
    for (int r = 0; r < c->nruns; r++) {
        free(c->work[r]);
        free(c->idle[r]);
        lb_profile_free(c->runs[r]);
    }
    free(c->work);
    free(c->idle);
    free(c->runs);
    free(c->ctx);
    free(c->excess);
    free(c->change);
    free(c->order);
    lb_map_free(&c->map);
    lb_strtab_free(&c->keys);
}

/* A run as named on the command line: DB, or DB@N / DB@N-M for time
 * windows of it (a spike against the calm before it: A.db@1 A.db@3). */
static struct lb_profile *load_run_arg(const char *arg, const struct lb_select *sel)
{
    const char *at = strrchr(arg, '@');
    struct stat st;

    if (!at || stat(arg, &st) == 0)
        return lb_profile_load_select(arg, sel);
    char *path = lb_xstrdup(arg);
    struct lb_select one = *sel;

    path[at - arg] = '\0';
    one.window = at + 1;
    struct lb_profile *p = lb_profile_load_select(path, &one);

    free(p->path);
    p->path = lb_xstrdup(arg); /* the run's name in the table's header */
    free(path);
    return p;
}

int lb_cmd_compare(int argc, char **argv)
{
    struct cmp_opts o;

    if (!parse(argc, argv, &o))
        return LB_EXIT_OK;
    struct cmp c = { .nruns = o.ndbs, .by_function = o.by_function };

    c.runs = lb_xmalloc((size_t)c.nruns * sizeof *c.runs);
    for (int r = 0; r < c.nruns; r++)
        c.runs[r] = load_run_arg(o.dbs[r], &o.sel);
    lb_cmp_warn_programs(&c);
    lb_cmp_compute(&c);
    lb_cmp_print(&c, &o);
    cmp_free(&c);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(LB_EXIT_FAIL, "compare: cannot write the output");
    return LB_EXIT_OK;
}
