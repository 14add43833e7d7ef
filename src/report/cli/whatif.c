/*
 * whatif.c - `lockblame whatif [options] -- PROG [ARGS]`: profile PROG once
 * with `lockblame run`, take its top release sites whose holds can be
 * shortened (whatif_sites.h: the release-site view's rows), and for each
 * rerun PROG with the holds that end there virtually shortened by 25%, 50%
 * and 100% (liblockblame's LOCKBLAME_WHATIF_* experiment, core/whatif.h),
 * in rounds: a baseline run (the same hooks, no delay), then one run at
 * each speedup. Every run is `lockblame run` of PROG with its output
 * discarded; the library reports the run's time and the delay it
 * inserted. The predicted time of one run is its time less that delay;
 * the predicted change is the median over the rounds of predicted time
 * over the round's baseline time, less one, and its interval spans the
 * rounds (summarize). Results go to the
 * profile database's `whatif` table and to stdout (a table or JSON).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/db_name.h"
#include "common/kinds.h"
#include "report/cli/commands.h"
#include "report/cli/db.h"
#include "report/cli/seconds.h"
#include "report/cli/util.h"
#include "report/cli/whatif.h"
#include "report/cli/whatif_sites.h"

static const char whatif_usage[] =
    "usage: lockblame whatif [-o FILE] [--site NAME] [-n K] [-r RUNS] [--progress FUNCTION]\n"
    "                        [--format table|json] (-- PROG [ARGS] | FILE | --show FILE)\n"
    "\n"
    "Predict how much faster PROG gets if the mutex, spin-lock or rwlock holds\n"
    "that end at a release site were 25%, 50% or 100% shorter, by experiment:\n"
    "profile PROG once, take the top K rows of `report --by-release-site` (one a\n"
    "function, with that row's blame) whose holds can be shortened (a lock's;\n"
    "a signal's or post's made in a function that releases a lock: its holds;\n"
    "a cond signal's or post's made under no lock: the code its thread runs\n"
    "before it, since it last woke or signalled),\n"
    "or the one named, and rerun PROG with a virtual speedup of those holds:\n"
    "while one lasts, every other thread is delayed by that fraction of it, and\n"
    "the run's time less the delays inserted is the time it would take (coz's\n"
    "causal profiling; docs/INTERNALS.md). A row of another kind ranked above\n"
    "them is named as not supported. Each site runs RUNS rounds of a baseline\n"
    "run and a run at each speedup; the table gives the median predicted change\n"
    "of the run's time and its interval over the rounds. A site with much blame\n"
    "and no gain is marked \"off the critical path\". PROG's output is\n"
    "discarded. Results are stored in FILE's whatif table (docs/SCHEMA.md).\n"
    "Given an existing profile FILE instead of PROG, takes its sites and reruns\n"
    "its command (its executable, and the words of its command line after it).\n"
    "\n"
    "options:\n"
    "  -o FILE          profile database (default lockblame.<prog>.<pid>.db here)\n"
    "  --site NAME      experiment on this release site (a function name) only\n"
    "  -n K             how many top sites (default 3)\n"
    "  -r RUNS          runs per experiment and of the baseline (default 3, 1..20)\n"
    "  --progress FUNCTION\n"
    "                   predict the change of the rate of FUNCTION's calls instead\n"
    "                   (calls per second of the run's time less the delays), for\n"
    "                   programs that run for a fixed time; FUNCTION is a function\n"
    "                   of the program (or of its libraries), its calls counted by\n"
    "                   a hardware breakpoint (a debug exception a call, 1-12 us)\n"
    "                   or, where breakpoints do not count, a uprobe (root)\n"
    "  --format F       table (default) or json\n"
    "  --show           print the results stored in FILE, run nothing\n"
    "  -h, --help       this help\n";

struct sample {
    double elapsed_s, delay_s, holds, hold_s;
    double calls;       /* progress point's calls; -1: not counted */
    double hit_s;       /* what one counted call cost (0: not measured) */
    int progress_errno; /* why not (0: none asked for, or counted) */
};

/* LOCKBLAME_WHATIF_PROGRESS of the experiments: "OFFSET:MODULE", or NULL. */
static char *progress_spec;

static char *self_exe(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        cli_die(LB_EXIT_FAIL, "whatif: cannot read /proc/self/exe");
    exe[n] = '\0';
    return lb_xstrdup(exe);
}

/* Run `lockblame run -o db -- prog...` with PROG's output discarded and
 * the experiment's environment (site == NULL: none). Returns its status. */
static int run_once(const char *db, char **prog, const char *site, double speedup, const char *out)
{
    static char *self;
    if (!self)
        self = self_exe();
    pid_t pid = fork();
    if (pid < 0)
        cli_die(LB_EXIT_FAIL, "whatif: fork: %s", strerror(errno));
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        if (site) {
            char p[32];
            snprintf(p, sizeof p, "%.6f", speedup);
            setenv("LOCKBLAME_WHATIF_SITE", site, 1);
            setenv("LOCKBLAME_WHATIF_SPEEDUP", p, 1);
            setenv("LOCKBLAME_WHATIF_OUT", out, 1);
            if (progress_spec)
                setenv("LOCKBLAME_WHATIF_PROGRESS", progress_spec, 1);
        }
        int n = 0;
        while (prog[n])
            n++;
        char **argv = lb_xcalloc((size_t)n + 6, sizeof *argv);
        argv[0] = "lockblame";
        argv[1] = "run";
        argv[2] = "-o";
        argv[3] = (char *)db;
        argv[4] = "--";
        memcpy(argv + 5, prog, (size_t)n * sizeof *argv);
        execv(self, argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            cli_die(LB_EXIT_FAIL, "whatif: waitpid: %s", strerror(errno));
    return status;
}

/* The results line of the run's top process: the longest one. */
static bool read_sample(const char *path, struct sample *s)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool found = false;
    if (!f)
        return false;
    while (fgets(line, sizeof line, f)) {
        unsigned long long elapsed, delay, slept, holds, hold;
        int pid;
        if (sscanf(line,
                   "pid=%d elapsed_ns=%llu delay_ns=%llu slept_ns=%llu holds=%llu hold_ns=%llu",
                   &pid, &elapsed, &delay, &slept, &holds, &hold) != 6)
            continue;
        if (found && elapsed * 1e-9 <= s->elapsed_s)
            continue;
        *s = (struct sample){ elapsed * 1e-9, delay * 1e-9, (double)holds, hold * 1e-9, -1, 0, 0 };
        const char *calls = strstr(line, " calls="), *err = strstr(line, " progress_errno=");
        if (calls)
            s->calls = strtod(calls + 7, NULL);
        const char *hit = strstr(line, " progress_hit_ns=");
        if (hit)
            s->hit_s = strtod(hit + 17, NULL) * 1e-9;
        if (err)
            s->progress_errno = atoi(err + 16);
        found = true;
    }
    fclose(f);
    return found;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    lb_sort(v, (size_t)n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static sqlite3 *open_db(const char *path, int flags)
{
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, flags | LB_DB_OPEN_OWN, NULL) != SQLITE_OK)
        cli_die(LB_EXIT_FAIL, "whatif: %s: %s", path, sqlite3_errmsg(db));
    sqlite3_busy_timeout(db, 5000);
    return db;
}

/* The command line of an existing profile's first process: its
 * executable (absolute), then the words of run.command after the first
 * (the command is stored joined with spaces: an argument with spaces in
 * it comes back split). */
static char **profile_command(const char *path)
{
    sqlite3 *db = lb_db_open(path); /* a bad profile: one line, exit 2 */
    sqlite3_stmt *st;
    char **argv = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT executable, command FROM run ORDER BY exec_gen, start_unix"
                           " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_text(st, 0))
        cli_die(LB_EXIT_USAGE, "whatif: %s: not a lockblame profile with a command", path);
    char *command = lb_xstrdup((const char *)sqlite3_column_text(st, 1));
    size_t n = 1, cap = 0;
    lb_grow((void **)&argv, &cap, 2, sizeof *argv);
    argv[0] = lb_xstrdup((const char *)sqlite3_column_text(st, 0));
    char *save = NULL, *word = command ? strtok_r(command, " ", &save) : NULL;
    while (word && (word = strtok_r(NULL, " ", &save))) {
        lb_grow((void **)&argv, &cap, n + 2, sizeof *argv);
        argv[n++] = word;
    }
    argv[n] = NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return argv;
}

static void show(const char *path, bool json)
{
    sqlite3 *db = lb_db_open(path); /* a bad database: one line, exit 2 */
    int n;
    struct lb_whatif_row *rows = lb_whatif_load(db, &n);
    sqlite3_close(db);
    if (!n)
        cli_die(LB_EXIT_USAGE, "whatif: %s has no whatif results", path);
    lb_whatif_print(rows, n, json, stdout);
    lb_whatif_free(rows, n);
}

/* One run of the site's experiment at speedup p; false if it reported
 * nothing. */
/* The kernel's ENOTSUPP, which perf_event_open passes on when a uprobe's
 * instruction cannot be probed; libc has no name or text for it. */
#define KERNEL_ENOTSUPP 524

static bool experiment(const char *db, char **prog, const char *spec, double p, const char *out,
                       struct sample *sample)
{
    unlink(out);
    int status = run_once(db, prog, spec, p, out);
    if (read_sample(out, sample)) {
        if (progress_spec && sample->calls < 0)
            cli_die(LB_EXIT_USAGE,
                    "whatif: --progress: cannot count calls with a hardware "
                    "breakpoint or a uprobe: %s",
                    sample->progress_errno == KERNEL_ENOTSUPP
                        ? "breakpoints do not count on this machine, and a uprobe cannot sit "
                          "on the function's first instruction (a lock prefix)"
                        : strerror(sample->progress_errno));
        return true;
    }
    cli_warn("whatif: a run of %s reported no result (status %d)", prog[0], status);
    return false;
}

/* The progress point's spec (progress_spec): FUNCTION in the site's
 * module, else in the first other module of the profile that has it. */
static void set_progress(sqlite3 *db, const char *function, const char *module)
{
    free(progress_spec);
    progress_spec = NULL;
    if (!function)
        return;
    char *found = lb_xstrdup(module);
    unsigned long long start = lb_whatif_function_start(module, function);
    sqlite3_stmt *st;
    if (!start && sqlite3_prepare_v2(db,
                                     "SELECT DISTINCT path FROM module WHERE path LIKE '/%'"
                                     " ORDER BY id",
                                     -1, &st, NULL) == SQLITE_OK) {
        while (!start && sqlite3_step(st) == SQLITE_ROW) {
            const char *path = (const char *)sqlite3_column_text(st, 0);
            if ((start = lb_whatif_function_start(path, function))) {
                free(found);
                found = lb_xstrdup(path);
            }
        }
        sqlite3_finalize(st);
    }
    if (!start)
        cli_die(LB_EXIT_USAGE, "whatif: --progress: no function '%s' in %s or its libraries",
                function, module);
    struct lb_buf b = { 0 };
    lb_buf_printf(&b, "%llx:%s", start, found);
    progress_spec = lb_xstrdup(lb_buf_str(&b));
    lb_buf_free(&b);
    free(found);
}

/* A counted call's fixed cost is not sped up with the rest: where the
 * counting threads set the rate it pulls a predicted rate change toward
 * zero. Say how large it was against the baseline runs (t: their median
 * time), where it is 1% of that or more. */
static void say_counting_cost(const char *function, const struct sample *base, int runs, double t)
{
    double calls[20], hit[20];
    for (int r = 0; r < runs; r++) {
        calls[r] = base[r].calls;
        hit[r] = base[r].hit_s;
    }
    double n = median(calls, runs), h = median(hit, runs);
    if (n <= 0 || t <= 0 || h <= 0 || n * h < 0.01 * t)
        return;
    fprintf(stderr,
            "lockblame: whatif: counting %s's calls costs %.1f us a call here; the baseline's "
            "%.0f calls took %.3f s of their threads' time, %.0f%% of its %.3f s: where those "
            "threads set the rate, that share pulls the predicted change toward zero\n",
            function, h * 1e6, n, n * h, 100 * n * h / t, t);
}

/* Where the site's waiters spent a tenth or more of their wait there
 * waking after its releases (hand-off latency: the profile's), say that
 * shortened holds leave those wake-ups in place while a fix that ends the
 * contention saves them too (docs/INTERNALS.md, "What-if experiments",
 * "Limits"). */
static void say_saved_wakeups(const struct lb_whatif_site *s)
{
    double wait = s->blame_s + s->handoff_s;
    if (wait <= 0 || s->handoff_s < LB_WHATIF_WAKEUP_SHARE * wait)
        return;
    fprintf(stderr,
            "lockblame: whatif: %s: its waiters also waited %.3f s after its releases for "
            "their wake-ups (hand-off latency, %.0f%% of their wait there), which shorter "
            "holds do not remove: a fix that ends the contention saves them too, and gains "
            "more than predicted\n",
            s->label, s->handoff_s, 100 * s->handoff_s / wait);
}

/* Fill the row of one site at speedup p from its runs and the baseline's.
 * Round r's experiment is set against round r's baseline, run just before
 * it: the change is the median over the rounds of predicted / baseline - 1,
 * and the interval spans the rounds' changes, so that a change of the
 * machine's load between rounds widens the interval instead of moving
 * the prediction. */
static void summarize(struct lb_whatif_row *r, const struct sample *base, const struct sample *exp,
                      int runs)
{
    double b[20], m[20], d[20], pr[20], h[20], hs[20], ch[20], bc[20], c[20];
    for (int i = 0; i < runs; i++) {
        b[i] = base[i].elapsed_s;
        m[i] = exp[i].elapsed_s;
        d[i] = exp[i].delay_s;
        pr[i] = exp[i].elapsed_s - exp[i].delay_s;
        ch[i] = pr[i] / b[i] - 1;
        bc[i] = base[i].calls;
        c[i] = exp[i].calls;
        if (r->progress) /* the rate in virtual time against the baseline's */
            ch[i] = bc[i] > 0 && pr[i] > 0 ? (c[i] / pr[i]) / (bc[i] / b[i]) - 1 : 0;
        h[i] = exp[i].holds;
        hs[i] = exp[i].hold_s;
    }
    r->baseline_calls = r->progress ? median(bc, runs) : 0;
    r->calls = r->progress ? median(c, runs) : 0;
    r->runs = runs;
    r->baseline_s = median(b, runs);
    r->measured_s = median(m, runs);
    r->delay_s = median(d, runs);
    r->predicted_s = median(pr, runs);
    r->change = median(ch, runs); /* sorts ch */
    r->change_lo = ch[0];
    r->change_hi = ch[runs - 1];
    r->holds = median(h, runs);
    r->hold_s = median(hs, runs);
}

int lb_cmd_whatif(int argc, char **argv)
{
    enum {
        O_SITE = 256,
        O_FORMAT,
        O_SHOW,
        O_PROGRESS
    };
    static const struct option longopts[] = {
        { "site", required_argument, NULL, O_SITE },
        { "format", required_argument, NULL, O_FORMAT },
        { "show", no_argument, NULL, O_SHOW },
        { "progress", required_argument, NULL, O_PROGRESS },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *path = NULL, *only = NULL, *progress = NULL;
    int k = 3, runs = 3, opt;
    bool json = false, show_only = false;
    char *end;

    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+:o:n:r:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            path = optarg;
            break;
        case O_SITE:
            only = optarg;
            break;
        case 'n':
            k = (int)strtol(optarg, &end, 10);
            if (*end || end == optarg || k < 1 || k > 100)
                cli_die(LB_EXIT_USAGE, "whatif: -n wants a number of sites from 1 to 100, not '%s'",
                        optarg);
            break;
        case 'r':
            runs = (int)strtol(optarg, &end, 10);
            if (*end || end == optarg || runs < 1 || runs > 20)
                cli_die(LB_EXIT_USAGE, "whatif: -r wants a number of runs from 1 to 20, not '%s'",
                        optarg);
            break;
        case O_FORMAT:
            if (strcmp(optarg, "json") == 0)
                json = true;
            else if (strcmp(optarg, "table") != 0)
                cli_die(LB_EXIT_USAGE, "whatif: unknown format '%s' (table, json)", optarg);
            break;
        case O_SHOW:
            show_only = true;
            break;
        case O_PROGRESS:
            progress = optarg;
            break;
        case 'h':
            fputs(whatif_usage, stdout);
            return LB_EXIT_OK;
        default:
            lb_bad_option("whatif", opt == ':' ? ':' : optopt, argv[optind - 1]);
        }
    }
    if (show_only) {
        if (optind != argc - 1)
            cli_die(LB_EXIT_USAGE, "whatif: --show wants one database");
        show(argv[optind], json);
        return LB_EXIT_OK;
    }
    if (optind >= argc)
        cli_die(LB_EXIT_USAGE, "whatif: missing program (lockblame whatif [options] -- PROG)");
    bool dashes = strcmp(argv[optind - 1], "--") == 0;
    char **prog = argv + optind;
    char db_path[PATH_MAX];
    if (!dashes && optind == argc - 1) {
        /* An existing profile: its sites, and its program run again. */
        if (path)
            cli_die(LB_EXIT_USAGE, "whatif: -o names the profile to make; give FILE alone");
        snprintf(db_path, sizeof db_path, "%s", argv[optind]);
        prog = profile_command(db_path);
    } else {
        if (path)
            snprintf(db_path, sizeof db_path, "%s", path);
        else
            lb_default_db_name(db_path, sizeof db_path, prog[0], (int)getpid());
        /* The profile. */
        unlink(db_path);
        int status = run_once(db_path, prog, NULL, 0, NULL);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            cli_warn("whatif: %s exited with status %d in the profile run", prog[0],
                     WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        if (access(db_path, R_OK) != 0)
            cli_die(LB_EXIT_FAIL, "whatif: the profile run wrote no database (%s)", db_path);
    }
    struct lb_whatif_site *sites;
    int nsites = lb_whatif_pick_sites(db_path, only, k, &sites), supported = 0;
    for (int i = 0; i < nsites; i++)
        supported += !sites[i].unsupported;
    if (supported == 0 && nsites > 0 && only)
        cli_die(LB_EXIT_USAGE, "whatif: %s is a %s release site: %s", only,
                lb_obj_kind_name(sites[0].row_kind), sites[0].unsupported);
    if (nsites == 0 && only)
        cli_die(LB_EXIT_USAGE, "whatif: no release site '%s' with blame in %s", only, db_path);
    if (supported == 0)
        cli_die(LB_EXIT_FAIL,
                "whatif: no release site with blame whose holds can be shortened in %s", db_path);
    sqlite3 *db = open_db(db_path, SQLITE_OPEN_READWRITE);

    /* The experiments; their own profiles go to a scratch database. */
    char scratch[PATH_MAX + 32], out[PATH_MAX + 32];
    snprintf(scratch, sizeof scratch, "%s.whatif-run.db", db_path);
    snprintf(out, sizeof out, "%s.whatif-run.txt", db_path);
    struct lb_whatif_row *rows = lb_xcalloc((size_t)nsites * LB_WHATIF_SPEEDUPS, sizeof *rows);
    struct sample base[20], exp[LB_WHATIF_SPEEDUPS][20];
    int nrows = 0;
    for (int i = 0; i < nsites; i++) {
        struct lb_whatif_site *s = &sites[i];
        struct lb_buf spec = { 0 };
        if (s->unsupported)
            continue;
        if (!s->module) {
            cli_warn("whatif: no release calls of %s recorded; skipped", s->label);
            continue;
        }
        lb_buf_printf(&spec, "%s%llx:%s:%s:%s",
                      lb_obj_kind_is_signalled((unsigned)s->kind) ? "signal:" : "", s->fstart,
                      lb_buf_str(&s->offsets), lb_buf_str(&s->acquires), s->module);
        set_progress(db, progress, s->module);
        fprintf(stderr,
                "lockblame: whatif: %s: %d rounds of a baseline run and a run at each "
                "speedup\n",
                s->label, runs);
        /* Rounds, so that a change of the machine's load meanwhile falls on
         * the baseline and every speedup alike. */
        bool ok = true;
        double began = lb_cli_seconds();
        for (int r = 0; r < runs && ok; r++) {
            ok = experiment(scratch, prog, lb_buf_str(&spec), 0, out, &base[r]);
            for (int j = 0; j < LB_WHATIF_SPEEDUPS && ok; j++)
                ok = experiment(scratch, prog, lb_buf_str(&spec), lb_whatif_speedups[j], out,
                                &exp[j][r]);
        }
        if (ok) { /* what the site cost, against the program's own run */
            double took = lb_cli_seconds() - began, b[20];
            for (int r = 0; r < runs; r++)
                b[r] = base[r].elapsed_s;
            double own = median(b, runs);
            fprintf(stderr,
                    "lockblame: whatif: %s: %d runs took %.1f s, %.0f times the baseline "
                    "run's %.3f s\n",
                    s->label, runs * (1 + LB_WHATIF_SPEEDUPS), took, own > 0 ? took / own : 0, own);
            if (progress)
                say_counting_cost(progress, base, runs, own);
            say_saved_wakeups(s);
        }
        for (int j = 0; j < LB_WHATIF_SPEEDUPS && ok; j++) {
            struct lb_whatif_row *r = &rows[nrows++];
            r->site = lb_xstrdup(s->label);
            r->blame_s = s->blame_s;
            r->blame_share = s->blame_share;
            r->speedup = lb_whatif_speedups[j];
            r->progress = progress ? lb_xstrdup(progress) : NULL;
            summarize(r, base, exp[j], runs);
        }
        lb_buf_free(&spec);
    }
    unlink(scratch);
    unlink(out);
    lb_whatif_store(db, db_path, rows, nrows);
    sqlite3_close(db);
    lb_whatif_print(rows, nrows, json, stdout);
    for (int i = 0; i < nsites; i++)
        if (sites[i].unsupported)
            fprintf(json ? stderr : stdout, "%s%s (%s, %.3f s, %.1f%% of blame): %s\n",
                    json ? "lockblame: whatif: " : "", sites[i].label,
                    lb_obj_kind_name(sites[i].row_kind), sites[i].blame_s,
                    100 * sites[i].blame_share, sites[i].unsupported);
    if (!json)
        printf("results in %s (table whatif)\n", db_path);
    lb_whatif_sites_free(sites, nsites);
    free(sites);
    return nrows ? LB_EXIT_OK : LB_EXIT_FAIL;
}
