/*
 * run_summary.c - the lines `lockblame run` prints when PROG has ended:
 * the whole run's database in at most seven lockblame: lines, how PROG
 * ended when a signal killed it, and why no profile exists when none does.
 * They go to run's own stderr, which PROG closing its copy does not affect.
 */
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/db_merge.h"
#include "common/db_name.h"
#include "common/db_summary.h"
#include "common/file_room.h"
#include "common/ledger.h"
#include "common/spool.h"
#include "report/cli/pending.h"
#include "report/cli/run_checks.h"
#include "report/cli/util.h"

static const char *sig_name(int sig)
{
    static char buf[32];
    const char *abbrev = sigabbrev_np(sig);

    snprintf(buf, sizeof buf, "SIG%s", abbrev ? abbrev : "?");
    if (!abbrev)
        snprintf(buf, sizeof buf, "signal %d", sig);
    return buf;
}

/* Did PROG itself (any exec generation of its pid) write a profile? */
static bool has_pid(sqlite3 *db, pid_t pid)
{
    sqlite3_stmt *st = NULL;
    bool found = false;

    if (sqlite3_prepare_v2(db, "SELECT 1 FROM run WHERE pid = ?1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pid);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

/* The tree's processes that ended without writing their profile (the
 * ledger beside the database, common/ledger.h): counted in t, the line
 * that says so in line ("" for none), noted in the database with PROG's
 * command line (the tree's root); the ledger removed. */
static void settle_ledger(const char *path, const char *command, lb_ledger_tally_t *t, char *line,
                          size_t size)
{
    line[0] = '\0';
    memset(t, 0, sizeof *t);
    char ledger_path[PATH_MAX];
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    bool present;
    lb_ledger_t *ledger = lb_cli_ledger_map(ledger_path, false, &present);
    if (!present)
        return;
    if (ledger) {
        lb_ledger_tally(ledger, t);
        munmap(ledger, sizeof *ledger);
    }
    unlink(ledger_path);
    lb_ledger_text(t, line, size);
    lb_ledger_note(path, t, command);
}

/* The shared table of process-shared objects beside the database
 * (blame/shared_objs.h), which a tree killed before its last process
 * ended leaves behind. */
static void remove_shared_table(const char *path)
{
    char table_path[PATH_MAX];
    lb_shared_table_path(table_path, sizeof table_path, path);
    unlink(table_path);
}

void lb_run_fresh_ledger(const char *path, const char *run_key)
{
    char ledger_path[PATH_MAX];
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    unlink(ledger_path);
    remove_shared_table(path);
    /* made here, so that a process that finds none knows the tree has
     * ended (writer/ledger.c) */
    int fd = open(ledger_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
        uint64_t run = run_key ? lb_ledger_run_hash(run_key) : 0;
        if (!lb_file_room(fd, sizeof(lb_ledger_t)) ||
            (run &&
             pwrite(fd, &run, sizeof run, offsetof(lb_ledger_t, run)) != (ssize_t)sizeof run))
            unlink(ledger_path); /* no ledger: nothing is counted */
        close(fd);
    }
}

/* The tree's ledger closed to pending profiles (common/spool.h): a
 * process of the tree that ends from now on adds its own. */
static void close_spool(const char *ledger_path)
{
    bool present;
    lb_ledger_t *ledger = lb_cli_ledger_map(ledger_path, true, &present);
    if (!ledger)
        return;
    __atomic_store_n(&ledger->spool_closed, 1u, __ATOMIC_SEQ_CST);
    munmap(ledger, sizeof *ledger);
}

/* The boot clock, in the kernel's clock ticks, just before the program's
 * fork (0: not read): a child of ours that started before is no orphan
 * of its tree (a shell's background job whose shell then exec'd run). */
static unsigned long long tree_begun_ticks;

void lb_run_tree_begins(void)
{
    struct timespec now;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0 && clock_gettime(CLOCK_BOOTTIME, &now) == 0)
        tree_begun_ticks =
            (unsigned long long)now.tv_sec * (unsigned long long)hz +
            (unsigned long long)now.tv_nsec / (1000000000ull / (unsigned long long)hz);
}

/* Our children that still run: the tree's orphans, whose parents ended
 * (run is their subreaper, run.c), started since the tree began; zombies
 * are not counted. */
static int orphans_running(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int n = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t parent = 0;
        uint64_t started = lb_proc_start_and_parent((pid_t)atoi(e->d_name), &parent);
        if (started && parent == self && started >= tree_begun_ticks)
            n++;
    }
    closedir(proc);
    return n;
}

/* The tree's processes that still run when PROG has ended (a daemon
 * forks and its first process exits): each writes its profile into the
 * database when it ends, past run's summary. Those of the ledger, or our
 * orphans where they are more (one that has not run yet has no slot).
 * Returns how many. */
static int say_still_running(const lb_ledger_tally_t *t, const char *path)
{
    int orphans = orphans_running(), n = t->running > orphans ? t->running : orphans;
    if (n > 0)
        cli_warn("%d process%s of the tree still run%s (a daemon?): %s added to %s when %s end%s;"
                 " lockblame report merges %s",
                 n, n == 1 ? "" : "es", n == 1 ? "s" : "",
                 n == 1 ? "its profile is" : "their profiles are", path, n == 1 ? "it" : "they",
                 n == 1 ? "s" : "", n == 1 ? "it" : "them");
    return n;
}

void lb_run_summary(const char *path, char *const *argv, pid_t child, int status,
                    const char *unprofilable)
{
    const char *prog = argv[0];
    char command[4096];
    size_t used = 0;
    command[0] = '\0';
    for (int i = 0; argv[i] && used < sizeof command - 1; i++)
        used +=
            (size_t)snprintf(command + used, sizeof command - used, "%s%s", i ? " " : "", argv[i]);
    char unwritten[512], ledger_path[PATH_MAX];
    lb_ledger_tally_t lost;
    /* the tree has ended: a process still running adds its own profile,
     * and those pending go in now */
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    close_spool(ledger_path);
    lb_cli_add_pending(path, getenv("LOCKBLAME_RUN"));
    lb_spool_remove_dir(path);
    settle_ledger(path, command, &lost, unwritten, sizeof unwritten);
    remove_shared_table(path);
    bool killed = WIFSIGNALED(status);
    int sig = killed ? WTERMSIG(status) : 0;
    struct stat st;
    sqlite3 *db = NULL;

    if (killed)
        cli_warn("%s was killed by %s%s", prog, sig_name(sig),
                 WCOREDUMP(status) ? " (core dumped)" : "");
    if (stat(path, &st) != 0 ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        lb_db_version(db, "main") <= 0) {
        sqlite3_close(db);
        if (unwritten[0])
            cli_warn("%s", unwritten);
        if (unprofilable)
            return; /* said before the start */
        int still = say_still_running(&lost, path);
        if (killed && sig == SIGKILL)
            cli_warn("no profile was written: %s was killed by SIGKILL, which cannot be caught",
                     prog);
        else if (lost.failed)
            cli_warn("no profile was written: the processes that recorded something could not"
                     " write it (%s)",
                     lost.failure ? sqlite3_errstr(lost.failure) : "each said why");
        else if (!still)
            cli_warn("no profile was written: no process recorded anything (no thread of its"
                     " own, no sample, no wait)");
        return;
    }
    lb_db_summary_t s = { 0 };

    lb_db_summary(db, &s);
    char line[512];

    lb_db_summary_effort_text(&s, line, sizeof line);
    cli_warn("%d process%s profiled; %s", s.processes, s.processes == 1 ? "" : "es", line);

    lb_db_summary_site_line(&s, line, sizeof line);
    if (line[0])
        cli_warn("%s", line);
    lb_db_summary_unseen_line(&s, line, sizeof line);
    if (line[0])
        cli_warn("%s", line);
    if (killed && sig == SIGKILL && !has_pid(db, child))
        cli_warn("no profile of %s itself (pid %d): killed by SIGKILL, which cannot be caught",
                 prog, (int)child);
    if (unwritten[0])
        cli_warn("%s", unwritten);
    say_still_running(&lost, path);
    cli_warn("profile %s%s", path,
             s.processes > 1 ? " (lockblame report --by-process lists the processes)" : "");
    sqlite3_close(db);
}
