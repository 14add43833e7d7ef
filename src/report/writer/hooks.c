/* The writer's part of the process lifecycle (core/hooks.h): choose the
 * database path at start (and again in a fork child), and write the
 * profile at finish, then print the one-line summary.
 *
 * Invariants: output_path is written at setup, and in a fork child while
 * only the forking thread exists; it is read at finish, by the one thread
 * that claimed the finish. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hooks.h"
#include "report/writer/writer.h"
#include "util/log.h"

static char output_path[PATH_MAX];

/* The database path: LOCKBLAME_OUTPUT, or lockblame.<prog>.<pid>.db in
 * the working directory at start. Relative paths are made absolute now,
 * because the program may chdir. A fork child (forked) gets its own file:
 * the default name with its pid, or LOCKBLAME_OUTPUT with ".<pid>" put
 * before a ".db" suffix. */
static void choose_output_path(bool forked)
{
    static char start_cwd[PATH_MAX];
    if (!forked && !getcwd(start_cwd, sizeof start_cwd))
        strcpy(start_cwd, ".");
    const char *given = getenv("LOCKBLAME_OUTPUT");
    char name[PATH_MAX];
    int pid = (int)getpid();
    if (given && *given) {
        size_t len = strlen(given);
        bool has_db = len > 3 && strcmp(given + len - 3, ".db") == 0;
        if (!forked)
            snprintf(name, sizeof name, "%s", given);
        else if (has_db)
            snprintf(name, sizeof name, "%.*s.%d.db", (int)(len - 3), given, pid);
        else
            snprintf(name, sizeof name, "%s.%d", given, pid);
    } else {
        extern char *program_invocation_short_name;
        snprintf(name, sizeof name, "lockblame.%s.%d.db", program_invocation_short_name, pid);
    }
    int n;
    if (name[0] == '/')
        n = snprintf(output_path, sizeof output_path, "%s", name);
    else
        n = snprintf(output_path, sizeof output_path, "%s/%s", start_cwd, name);
    if (n >= (int)sizeof output_path)
        lb_warn("output path too long; writing %s", output_path);
}

static void print_summary(const lb_summary_t *s)
{
    double pct = s->effort_s > 0 ? 100.0 * s->idleness_s / s->effort_s : 0;
    lb_warn("effort %.3f s = work %.3f s + idleness %.3f s (%.1f%% idle); threads waited %.3f s;"
            " profile %s",
            s->effort_s, s->work_s, s->idleness_s, pct, s->wait_s,
            s->path ? s->path : output_path);
    if (s->top_site[0])
        lb_warn("top release site: %s, %.3f s %s blame", s->top_site, s->top_site_s,
                s->top_object);
}

static void writer_setup(void)
{
    choose_output_path(false);
}

static void writer_fork_child(lb_thread_t *self)
{
    if (self)
        choose_output_path(true);
}

static void writer_finish(const char *reason)
{
    lb_summary_t summary = { 0 };
    if (lb_write_profile(output_path, reason, &summary) == 0)
        print_summary(&summary);
}

LB_PROCESS_HOOKS(writer_hooks) = {
    .rank = LB_RANK_WRITER,
    .setup = writer_setup,
    .finish = writer_finish,
    .fork_child = writer_fork_child,
};
