/*
 * report.c - `lockblame report`: parse the options, pick the database
 * (the argument, or the newest lockblame.*.db here), load it and run one
 * view in one format.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/cli/commands.h"
#include "report/cli/report_windows.h"
#include "report/cli/select.h"
#include "report/cli/views.h"
#include "report/cli/windows.h"

static const char report_usage[] =
    "usage: lockblame report [VIEW] [--pid N] [--comm NAME] [--metric M] [--kind KINDS]\n"
    "                        [--format table|csv|json|folded|html|pprof]\n"
    "                        [-n N] [--per-address] [-o FILE] [DB]\n"
    "\n"
    "Show a lockblame database: all its processes together unless --pid or --comm\n"
    "selects some. DB defaults to the newest lockblame.*.db in the current directory.\n"
    "\n"
    "Structural waits (joins, threads parked on a cond/sem until shutdown, idle\n"
    "helpers woken early) are the program's shape, not contention: the\n"
    "release-site table ranks the rest and lists them apart, with their totals\n"
    "in the header.\n"
    "\n"
    "views (one of):\n"
    "  --by-release-site  blame by the release/signal/post site that caused it,\n"
    "                     with the caller chain of its heaviest context (default)\n"
    "  --by-lock          contended locks grouped by kind and where first contended:\n"
    "                     waits, blame, hand-off, top holders (20 rows in a table)\n"
    "  --by-thread        per thread: work, blame caused (received by its release\n"
    "                     sites), time spent waiting, overhead\n"
    "  --top-down         calling context tree, inclusive and exclusive values\n"
    "  --bottom-up        callers view: each procedure's cost by its callers\n"
    "  --flat             one row per procedure (function, file, module)\n"
    "  --by-process       one row per process: pid, parent, command, work,\n"
    "                     idleness, top release site\n"
    "\n"
    "options:\n" LB_SELECT_HELP
    "  --metric M     idleness (blame received; default), work, wait, overhead\n"
    "  --kind KINDS   only these object kinds, comma-separated: mutex, spin,\n"
    "                 rwlock, cond, barrier, sem, join, futex (blame, objects and\n"
    "                 structural waits of other kinds are left out, in every view)\n"
    "  --format F     table (default), csv, json, folded (flamegraph.pl stacks of\n"
    "                 the metric in integer microseconds), html (one self-contained\n"
    "                 page: flame graphs of idleness and work, the release-site,\n"
    "                 lock and thread tables; ignores VIEW and --metric), pprof\n"
    "                 (gzipped profile.proto for go tool pprof, Pyroscope, Parca:\n"
    "                 sample types blame, wait, work, contentions; ignores VIEW\n"
    "                 and --metric; needs -o or a redirected stdout)\n"
    "  -n N           depth: caller chain length (--by-release-site, default 5),\n"
    "                 tree depth (--top-down, default 10 in tables), caller levels\n"
    "                 (--bottom-up, default 5); rows: --by-lock, --by-thread, --flat\n"
    "  --per-address  --by-lock: one row per lock address instead of per group\n"
    "  --windows      list the time windows (run --interval, snapshot): when, the\n"
    "                 waiting, blame and top release site of each (table or csv)\n"
    "  --per-window DIR  with --format pprof: DIR/window-NNNN.pb.gz, one profile\n"
    "                 per time window, each with its time range\n"
    "  -o FILE        write the output to FILE instead of stdout\n"
    "  -h, --help     this help\n";

static int parse_n(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (!*s || *end || v < 0 || v > 1000000)
        cli_die(LB_EXIT_USAGE, "report: -n wants a number >= 0, not '%s'", s);
    return (int)v;
}

/* Point stdout at -o FILE; refuse to send pprof's binary to a terminal. */
static void lb_report_output(const struct lb_report_opts *o)
{
    if (o->out && !freopen(o->out, o->format == LB_FMT_PPROF ? "wb" : "w", stdout))
        cli_die(LB_EXIT_FAIL, "report: cannot write '%s': %m", o->out);
    if (!o->out && o->format == LB_FMT_PPROF && isatty(STDOUT_FILENO))
        cli_die(LB_EXIT_USAGE,
                "report: --format pprof writes binary data: use -o FILE or redirect stdout");
}

int lb_cmd_report(int argc, char **argv)
{
    enum {
        O_SITE = 256,
        O_LOCK,
        O_THREAD,
        O_TOPDOWN,
        O_BOTTOMUP,
        O_FLAT,
        O_PROCESS,
        O_METRIC,
        O_FORMAT,
        O_KIND,
        O_PER_ADDRESS,
        O_WINDOWS,
        O_PER_WINDOW
    };
    static const struct option longopts[] = {
        { "by-release-site", no_argument, NULL, O_SITE },
        { "by-lock", no_argument, NULL, O_LOCK },
        { "by-thread", no_argument, NULL, O_THREAD },
        { "top-down", no_argument, NULL, O_TOPDOWN },
        { "bottom-up", no_argument, NULL, O_BOTTOMUP },
        { "flat", no_argument, NULL, O_FLAT },
        { "by-process", no_argument, NULL, O_PROCESS },
        LB_SELECT_LONGOPTS,
        { "metric", required_argument, NULL, O_METRIC },
        { "format", required_argument, NULL, O_FORMAT },
        { "kind", required_argument, NULL, O_KIND },
        { "per-address", no_argument, NULL, O_PER_ADDRESS },
        { "windows", no_argument, NULL, O_WINDOWS },
        { "per-window", required_argument, NULL, O_PER_WINDOW },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct lb_report_opts o = {
        .view = LB_V_RELEASE_SITE, .metric = LB_M_IDLENESS, .format = LB_FMT_TABLE, .n = -1
    };
    struct lb_select sel = { 0 };
    int views = 0, c;
    bool list_windows = false;
    const char *per_window = NULL;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hn:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(report_usage, stdout);
            return LB_EXIT_OK;
        case 'n':
            o.n = parse_n(optarg);
            break;
        case 'o':
            o.out = optarg;
            break;
        case O_PER_ADDRESS:
            o.per_address = true;
            break;
        case O_WINDOWS:
            list_windows = true;
            break;
        case O_PER_WINDOW:
            per_window = optarg;
            break;
        case LB_OPT_PID:
        case LB_OPT_COMM:
        case LB_OPT_WINDOW:
        case LB_OPT_SINCE:
        case LB_OPT_UNTIL:
            lb_select_option(&sel, "report", c, optarg);
            break;
        case O_SITE:
        case O_LOCK:
        case O_THREAD:
        case O_TOPDOWN:
        case O_BOTTOMUP:
        case O_FLAT:
        case O_PROCESS:
            o.view = (enum lb_view)(c - O_SITE);
            views++;
            break;
        case O_METRIC:
            if (lb_metric_parse(optarg) < 0)
                cli_die(LB_EXIT_USAGE,
                        "report: unknown metric '%s' (idleness, work, wait, overhead)", optarg);
            o.metric = (enum lb_metric)lb_metric_parse(optarg);
            break;
        case O_FORMAT:
            if (lb_format_parse(optarg) < 0)
                cli_die(LB_EXIT_USAGE,
                        "report: unknown format '%s' (table, csv, json, folded, html, pprof)",
                        optarg);
            o.format = (enum lb_format)lb_format_parse(optarg);
            break;
        case O_KIND:
            o.kinds = lb_kinds_parse(optarg);
            if (!o.kinds)
                cli_die(LB_EXIT_USAGE,
                        "report: unknown kind in '%s' (mutex, spin, rwlock,"
                        " cond, barrier, sem, join, futex)",
                        optarg);
            break;
        default:
            lb_bad_option("report", c == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (views > 1)
        cli_die(LB_EXIT_USAGE, "report: choose one view (--by-release-site, --by-lock, "
                               "--by-thread, --top-down, --bottom-up, --flat or --by-process)");
    if (argc - optind > 1)
        cli_die(LB_EXIT_USAGE,
                "report: one database at a time ('%s' is extra); "
                "use 'lockblame compare' for several",
                argv[optind + 1]);
    char *found = NULL;

    o.db = optind < argc ? argv[optind] : (found = lb_find_default_db());
    if (list_windows || per_window) {
        if (per_window && o.format != LB_FMT_PPROF)
            cli_die(LB_EXIT_USAGE, "report: --per-window DIR goes with --format pprof");
        int wrc = list_windows ? lb_report_windows_list(o.db, o.format == LB_FMT_CSV)
                               : lb_report_per_window(&o, &sel, per_window);

        free(found);
        return wrc;
    }
    struct lb_profile *p = lb_profile_load_select(o.db, &sel);

    if (p->nprocs == 0 && !lb_windows_selected(&sel))
        lb_report_windows_hint(o.db);
    int rc;

    if (o.kinds)
        lb_profile_keep_kinds(p, o.kinds);
    lb_report_output(&o);
    if (o.metric == LB_M_OVERHEAD) /* the writer puts samples it had to drop at the root */
        p->root_label = "[root: dropped samples, no call path]";
    if (o.format == LB_FMT_PPROF) {
        rc = lb_view_pprof(p, &o);
    } else if (o.format == LB_FMT_FOLDED) {
        rc = lb_view_folded(p, &o);
    } else if (o.format == LB_FMT_HTML) {
        rc = lb_view_html(p, &o);
    } else {
        switch (o.view) {
        case LB_V_LOCK:
            rc = lb_view_locks(p, &o);
            break;
        case LB_V_THREAD:
            rc = lb_view_threads(p, &o);
            break;
        case LB_V_TOP_DOWN:
            rc = lb_view_top_down(p, &o);
            break;
        case LB_V_BOTTOM_UP:
            rc = lb_view_bottom_up(p, &o);
            break;
        case LB_V_FLAT:
            rc = lb_view_flat(p, &o);
            break;
        case LB_V_PROCESS:
            rc = lb_view_processes(p, &o);
            break;
        default:
            rc = lb_view_release_sites(p, &o);
            break;
        }
    }
    lb_profile_free(p);
    free(found);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_die(LB_EXIT_FAIL, "report: cannot write the output");
    return rc;
}
