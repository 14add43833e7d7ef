/*
 * run_summary.c - the lines `lockblame run` prints when PROG has ended:
 * the whole run's database in at most seven lockblame: lines, how PROG
 * ended when a signal killed it, and why no profile exists when none does.
 * They go to run's own stderr, which PROG closing its copy does not affect.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "common/db_merge.h"
#include "common/db_name.h"
#include "common/db_summary.h"
#include "common/file_room.h"
#include "common/ledger.h"
#include "common/spool.h"
#include "report/cli/db.h"
#include "report/cli/pending.h"
#include "report/cli/run_checks.h"
#include "report/cli/util.h"
#include "common/go_program.h"

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
    uint64_t now = lb_ledger_now_ns();
    tree_begun_ticks = now ? lb_ledger_ticks(now) : 0;
}

/* The tree's processes still running when PROG has ended (a daemon forks
 * and its first process exits): those that record, each of which writes
 * its profile into the database when it ends, past run's summary, and
 * our orphans that lockblame does not see, which never write one into it. */
typedef struct still_running {
    int recording; /* the ledger's running processes, and our orphans about to record */
    int unseen;    /* our orphans that lockblame does not profile into it */
} still_running_t;

/* The whole of /proc/PID/FILE (malloc'd, NUL-terminated, *size its
 * length), or NULL where it cannot be read. */
static char *proc_file(pid_t pid, const char *file, size_t *size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t n = 0;
    while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        char *more = len + 1 == cap ? realloc(buf, cap *= 2) : buf;
        if (!more)
            free(buf);
        buf = more;
    }
    close(fd);
    if (buf && n < 0) {
        free(buf);
        buf = NULL;
    }
    if (buf) {
        buf[len] = '\0';
        *size = len;
    }
    return buf;
}

/* Whether /proc/PID/maps's text names the library as a mapping's file
 * (" (deleted)" after it where the file was replaced since). */
static bool maps_library(const char *maps)
{
    static const char lib[] = "/liblockblame.so";
    for (const char *at = maps; (at = strstr(at, lib)) != NULL; at += sizeof lib - 1) {
        char next = at[sizeof lib - 1];
        if (next == '\n' || next == ' ' || next == '\0')
            return true;
    }
    return false;
}

/* The value of name in an environment block of size bytes (NUL-separated
 * entries), or NULL. */
static const char *environ_entry(const char *env, size_t size, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = env; p < env + size; p += strlen(p) + 1)
        if (strncmp(p, name, len) == 0 && p[len] == '=')
            return p + len + 1;
    return NULL;
}

/* Whether the program pid runs is a Go program (its executable's notes,
 * as common/go_program.h reads them in the process): the library stays
 * inactive in it. Reads the program headers and the note segments of
 * /proc/PID/exe; false where they cannot be read. */
static bool runs_go(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr eh;
    bool go = false;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_phentsize == sizeof(Elf64_Phdr)) {
        for (unsigned i = 0; i < eh.e_phnum && !go; i++) {
            Elf64_Phdr ph;
            unsigned char notes[4096];
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
                (ssize_t)sizeof ph)
                break;
            if (ph.p_type != PT_NOTE || ph.p_filesz < sizeof(Elf64_Nhdr))
                continue;
            size_t size = ph.p_filesz < sizeof notes ? (size_t)ph.p_filesz : sizeof notes;
            ssize_t got = pread(fd, notes, size, (off_t)ph.p_offset);
            go = got > 0 && lb_go_notes(notes, (size_t)got);
        }
    }
    close(fd);
    return go;
}

/* Whether out, a LOCKBLAME_OUTPUT as process pid has it (NULL: none, so
 * the default name, which the library makes of the program's name and its
 * own pid), names the database at path: the file, or a file of that name
 * in the same directory (reached by another path). A relative one is
 * taken from pid's working directory now. */
static bool names_database(pid_t pid, const char *out, const char *path)
{
    char name[PATH_MAX], cwd[PATH_MAX], given[2 * PATH_MAX];
    if (out && *out) {
        snprintf(name, sizeof name, "%s", out);
    } else {
        size_t size;
        char *cmdline = proc_file(pid, "cmdline", &size);
        lb_default_db_name(name, sizeof name, cmdline ? cmdline : "", (int)pid);
        free(cmdline);
    }
    if (name[0] == '/') {
        snprintf(given, sizeof given, "%s", name);
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
        ssize_t n = readlink(link, cwd, sizeof cwd - 1);
        if (n <= 0)
            return false;
        cwd[n] = '\0';
        snprintf(given, sizeof given, "%s/%s", cwd, name);
    }
    if (strcmp(given, path) == 0)
        return true;
    const char *given_base = strrchr(given, '/') + 1, *base = strrchr(path, '/');
    if (!base || strcmp(given_base, base + 1) != 0)
        return false;
    char given_dir[PATH_MAX], dir[PATH_MAX];
    struct stat a, b;
    return lb_db_dir(given, given_dir, sizeof given_dir) && lb_db_dir(path, dir, sizeof dir) &&
           stat(given_dir, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}
/* Whether our orphan pid, which holds no running slot of the ledger, is
 * about to record into the database at path: lockblame's library is
 * loaded in it, its environment does not disable it, its LOCKBLAME_OUTPUT
 * names that database, and it is no Go program, in which the library
 * stays inactive (a fork child of a profiled process that has not run
 * yet, so has not claimed its slot). One that is statically linked, or
 * started without LD_PRELOAD, with LOCKBLAME_DISABLE, or with another
 * LOCKBLAME_OUTPUT, is not. The environment read is the one pid was
 * started with: a fork child of an image that changed its own is judged
 * by that image's start. */
static bool about_to_record(pid_t pid, const char *path)
{
    size_t size;
    char *maps = proc_file(pid, "maps", &size);
    bool loaded = maps && maps_library(maps);
    free(maps);
    if (!loaded)
        return false;
    char *env = proc_file(pid, "environ", &size);
    bool records = env && !environ_entry(env, size, "LOCKBLAME_DISABLE") &&
                   names_database(pid, environ_entry(env, size, "LOCKBLAME_OUTPUT"), path) &&
                   !runs_go(pid);
    free(env);
    return records;
}

/* still: the ledger's running processes (t, counted from ledger, a copy
 * of the tree's ledger), and our children that still run, the tree's
 * orphans, whose parents ended (run is their subreaper, run.c), started
 * since the tree began (zombies are not counted): those without a
 * running slot in the copy are recording where they are about to record
 * into the database at path, unseen otherwise. One that ends while it is
 * read is not counted. */
static void count_still_running(const lb_ledger_t *ledger, const lb_ledger_tally_t *t,
                                const char *path, still_running_t *still)
{
    *still = (still_running_t){ t->running, 0 };
    /* run has no child left at all (PROG and every orphan reaped, the
     * common end): no orphan of ours runs, and /proc, every process of
     * the machine, need not be read */
    siginfo_t child = { 0 };
    if (waitid(P_ALL, 0, &child, WEXITED | WNOHANG | WNOWAIT) != 0 && errno == ECHILD)
        return;
    DIR *proc = opendir("/proc");
    if (!proc)
        return;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)atoi(e->d_name), parent = 0;
        uint64_t started = lb_proc_start_and_parent(pid, &parent);
        if (!started || parent != self || started < tree_begun_ticks ||
            lb_ledger_records(ledger, pid, started))
            continue;
        bool recording = about_to_record(pid, path);
        if (lb_proc_start_of(pid) != started)
            continue; /* gone while read */
        if (recording)
            still->recording++;
        else
            still->unseen++;
    }
    closedir(proc);
}

/* The tree's processes that ended without writing their profile (the
 * ledger beside the database, common/ledger.h): counted in t, the line
 * that says so in line ("" for none), noted in the database with PROG's
 * command line (the tree's root); the ledger removed. Those still
 * running, counted in still, are read while the ledger is there, from
 * the same copy of it as t. */
static void settle_ledger(const char *path, const char *command, lb_ledger_tally_t *t,
                          still_running_t *still, char *line, size_t size)
{
    line[0] = '\0';
    memset(t, 0, sizeof *t);
    char ledger_path[PATH_MAX];
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    bool present;
    lb_ledger_t *ledger = lb_cli_ledger_map(ledger_path, false, &present);
    /* one copy of the slots for both counts: a process that claims or
     * marks its slot meanwhile is counted once */
    lb_ledger_t *copy = lb_xcalloc(1, sizeof *copy);
    lb_ledger_copy(ledger, copy);
    lb_ledger_tally_copy(copy, ledger, t);
    count_still_running(copy, t, path, still);
    free(copy);
    if (ledger)
        munmap(ledger, sizeof *ledger);
    if (!present)
        return;
    unlink(ledger_path);
    lb_ledger_text(t, line, size);
    lb_ledger_note(path, t, command);
}

/* run's line on the tree's processes still running, if any: how many
 * record, and add their profile to the database at path when they end,
 * and how many more lockblame does not see. Returns how many record. */
static int say_still_running(const still_running_t *still, const char *path)
{
    int n = still->recording, k = still->unseen;
    char unseen[128] = "";
    if (n > 0 && k > 0)
        snprintf(unseen, sizeof unseen, "; %d more that lockblame does not see add%s nothing", k,
                 k == 1 ? "s" : "");
    if (n > 0)
        cli_warn("%d process%s of the tree still run%s (a daemon?): %s added to %s when %s end%s;"
                 " lockblame report merges %s%s",
                 n, n == 1 ? "" : "es", n == 1 ? "s" : "",
                 n == 1 ? "its profile is" : "their profiles are", path, n == 1 ? "it" : "they",
                 n == 1 ? "s" : "", n == 1 ? "it" : "them", unseen);
    else if (k > 0)
        cli_warn("%d process%s of the tree still run%s (a daemon?) that lockblame does not see:"
                 " %s no profile",
                 k, k == 1 ? "" : "es", k == 1 ? "s" : "", k == 1 ? "it adds" : "they add");
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
    still_running_t still;
    /* the tree has ended: a process still running adds its own profile,
     * and those pending go in now */
    lb_ledger_path(ledger_path, sizeof ledger_path, path);
    close_spool(ledger_path);
    lb_cli_add_pending(path, getenv("LOCKBLAME_RUN"));
    lb_spool_remove_dir(path);
    settle_ledger(path, command, &lost, &still, unwritten, sizeof unwritten);
    remove_shared_table(path);
    bool killed = WIFSIGNALED(status);
    int sig = killed ? WTERMSIG(status) : 0;
    struct stat st;
    sqlite3 *db = NULL;

    if (killed)
        cli_warn("%s was killed by %s%s", prog, sig_name(sig),
                 WCOREDUMP(status) ? " (core dumped)" : "");
    if (stat(path, &st) != 0 ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | LB_DB_OPEN_OWN, NULL) != SQLITE_OK ||
        lb_db_version(db, "main") <= 0) {
        sqlite3_close(db);
        if (unwritten[0])
            cli_warn("%s", unwritten);
        if (unprofilable)
            return; /* said before the start */
        int recording = say_still_running(&still, path);
        if (killed && sig == SIGKILL)
            cli_warn("no profile was written: %s was killed by SIGKILL, which cannot be caught",
                     prog);
        else if (lost.failed)
            cli_warn("no profile was written: the processes that recorded something could not"
                     " write it (%s)",
                     lost.failure ? sqlite3_errstr(lost.failure) : "each said why");
        else if (!recording)
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
    say_still_running(&still, path);
    cli_warn("profile %s%s", path,
             s.processes > 1 ? " (lockblame report --by-process lists the processes)" : "");
    sqlite3_close(db);
}
