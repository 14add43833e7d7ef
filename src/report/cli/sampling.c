/*
 * sampling.c - the sampling lines of the report header (see sampling.h).
 * Reads the sampling_* keys of the meta table with a connection of its
 * own, read-only, so that profile loading stays unchanged.
 */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/sampled_limits.h"
#include "report/cli/db.h"
#include "report/cli/sampling.h"

#define LB_DROP_WARN_PCT 5.0

struct lb_sampling {
    char mechanism[32], choice[256];
    int kernel;
    double rate_hz, dropped_pct, unsampled_s, blocked_s;
    long long taken, dropped, unsampled_threads, blocked_threads, fallbacks, mutex_no_slot;
    int has_blocked; /* a profile from before the split has no blocked_* keys */
    int found;
};

static void take(struct lb_sampling *s, const char *key, const char *v)
{
    if (!strcmp(key, "sampling_mechanism"))
        snprintf(s->mechanism, sizeof s->mechanism, "%s", v), s->found = 1;
    else if (!strcmp(key, "sampling_choice"))
        snprintf(s->choice, sizeof s->choice, "%s", v);
    else if (!strcmp(key, "sampling_kernel"))
        s->kernel = atoi(v);
    else if (!strcmp(key, "sampling_rate_hz"))
        s->rate_hz = atof(v);
    else if (!strcmp(key, "samples_taken"))
        s->taken = atoll(v);
    else if (!strcmp(key, "samples_dropped"))
        s->dropped = atoll(v);
    else if (!strcmp(key, "samples_dropped_pct"))
        s->dropped_pct = atof(v);
    else if (!strcmp(key, "unsampled_cpu_s"))
        s->unsampled_s = atof(v);
    else if (!strcmp(key, "unsampled_threads"))
        s->unsampled_threads = atoll(v);
    else if (!strcmp(key, "unsampled_blocked_cpu_s"))
        s->blocked_s = atof(v), s->has_blocked = 1;
    else if (!strcmp(key, "unsampled_blocked_threads"))
        s->blocked_threads = atoll(v);
    else if (!strcmp(key, "sampling_timer_fallbacks"))
        s->fallbacks = atoll(v);
    else if (!strcmp(key, "sampled_mutex_no_slot"))
        s->mutex_no_slot = atoll(v);
}

static int load(const char *path, struct lb_sampling *s)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;

    memset(s, 0, sizeof *s);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT key, value FROM meta WHERE key LIKE 'sampl%'"
                           " OR key LIKE 'unsampled%'",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return -1;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (k && v)
            take(s, k, v);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return s->found ? 0 : -1;
}

/* The figures of p's selected processes (all of them, or some) in place
 * of the meta table's, which are the database's: samples from their
 * processes' rows, the unsampled CPU time from their threads' credit in
 * the tree (what --flat shows). The blocked part is kept by the database
 * only: shown for all processes, not for some (`some`). */
static void select_processes(const struct lb_profile *p, struct lb_sampling *s, bool some)
{
    s->taken = p->run.samples;
    s->dropped = p->run.samples_dropped;
    s->dropped_pct =
        s->taken + s->dropped ? 100.0 * (double)s->dropped / (double)(s->taken + s->dropped) : 0;
    s->unsampled_s = 0;
    s->unsampled_threads = 0;
    if (some)
        s->has_blocked = 0;
    int64_t last_thread = -1;
    for (int32_t m = 0; m < p->nmrows; m++) {
        const struct lb_mrow *r = &p->mrows[m];
        int32_t f = p->nodes[r->node].frame;
        const char *name = f >= 0 ? p->frames[f].function : NULL;
        if (r->work <= 0 || !name || strcmp(name, "lockblame_unsampled_cpu") != 0)
            continue; /* (each process has a frame of that name) */
        s->unsampled_s += r->work;
        if (r->thread_id != last_thread) /* rows of a node come thread by thread */
            s->unsampled_threads++;
        last_thread = r->thread_id;
    }
}

void lb_print_sampling(const struct lb_profile *p, FILE *out)
{
    struct lb_sampling s;

    if (!p->path || load(p->path, &s) != 0)
        return;
    select_processes(p, &s, p->nselected != p->nprocs);
    fprintf(out, "sampling: %s", s.mechanism);
    if (*s.choice)
        fprintf(out, " (%s)", s.choice);
    fprintf(out, ", %.0f samples per CPU second%s; %lld taken, %lld dropped (%.1f%%)\n", s.rate_hz,
            s.kernel ? ", user and kernel time" : ", user time only", s.taken, s.dropped,
            s.dropped_pct);
    if (s.dropped_pct > LB_DROP_WARN_PCT)
        fprintf(out,
                "warning:  %.1f%% of the CPU samples were dropped; work is short by about"
                " that much\n",
                s.dropped_pct);
    if (s.unsampled_s > 0) {
        fprintf(out,
                "unsampled: %.3f s of CPU time in %lld thread(s) no sample saw, credited to"
                " their start routines as lockblame_unsampled_cpu",
                s.unsampled_s, s.unsampled_threads);
        /* the part the process's own lockblame: line names (10 ms or more) */
        if (s.has_blocked && s.blocked_threads > 0)
            fprintf(out,
                    "; %.3f s of it in %lld thread(s) that blocked the sampling"
                    " signal or had no event",
                    s.blocked_s, s.blocked_threads);
        else if (s.has_blocked)
            fprintf(out, "; each a thread's last part of a sample period");
        fputc('\n', out);
    }
    if (s.fallbacks)
        fprintf(out,
                "note:     %lld thread(s) sampled by a CPU-time timer: no file descriptor"
                " left for their perf event\n",
                s.fallbacks);
    if (s.mutex_no_slot)
        fprintf(out,
                "note:     %lld hot mutex(es) stayed exact: all %d slots for mutexes blamed"
                " by holder samples were taken (their holds carry lockblame's accounting)\n",
                s.mutex_no_slot, LB_MUTEX_HOT_SLOTS);
}
