/*
 * snapshot.c - `lockblame snapshot PID`: the profiled process PID and the
 * processes of its tree write a time window now (docs/DESIGN.md "Time
 * windows").
 *
 * The processes must run with LOCKBLAME_INTERVAL (lockblame run
 * --interval T; 0 for windows on request only) and a LOCKBLAME_OUTPUT
 * (lockblame run always sets it). For each one this creates the request
 * file DB.snap/PID, which the process's window thread takes (renames to
 * PID.taken) within 100 ms and removes once the window is in the
 * database; it waits for that, so that a report run next reads the
 * window. Scripts can do the same: mkdir -p DB.snap; touch DB.snap/PID.
 *
 * A process in a container (a pid namespace and a root of its own) is
 * named by the caller's numbers and sees the file system from its root:
 * the request is made through /proc/PID/root, named by the pid the
 * process has in its own namespace (the last of /proc/PID/status's
 * NSpid), which is what its window thread looks for.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/cli/commands.h"
#include "report/cli/util.h"

#define SNAPSHOT_WAIT_S 60 /* a window of a big profile takes seconds on a loaded machine */

static const char snapshot_usage[] =
    "usage: lockblame snapshot PID\n"
    "\n"
    "Makes the profiled process PID and the processes of its tree write what they\n"
    "recorded since their last time window as a new window, and waits until the\n"
    "windows are in the database. The processes must run with --interval (or\n"
    "LOCKBLAME_INTERVAL; --interval 0 writes windows on request only). Read the\n"
    "windows with 'lockblame report --windows' and 'lockblame report --window N'.\n"
    "Scripts can ask without waiting: create the file DB.snap/PID (and its directory).\n";

/* The head of /proc/pid/file into buf, NUL-terminated: its length, or
 * 0 when there is none. */
static ssize_t read_proc(long pid, const char *file, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", pid, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? n : 0;
}

/* The value of name in /proc/pid/environ (malloc'd), or NULL. */
static char *environ_value(long pid, const char *name)
{
    char buf[1 << 16];
    ssize_t n = read_proc(pid, "environ", buf, sizeof buf);
    if (n == 0)
        return NULL;
    size_t len = strlen(name);
    for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
        if (strncmp(p, name, len) == 0 && p[len] == '=')
            return lb_xstrdup(p + len + 1);
    }
    return NULL;
}

static long parent_of(long pid)
{
    char buf[1024];
    if (read_proc(pid, "stat", buf, sizeof buf) == 0)
        return -1;
    char *p = strrchr(buf, ')'); /* the command may hold spaces */
    long ppid = -1;
    if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

/* PID and its descendants, PID first. */
static long *tree_of(long root, int *count)
{
    struct proc {
        long pid, ppid;
    } *all = NULL;
    long *pids = lb_xmalloc(sizeof *pids);
    size_t n = 1, cap = 1, nall = 0, capall = 0;
    pids[0] = root;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        lb_grow((void **)&all, &capall, nall + 1, sizeof *all);
        all[nall].pid = atol(e->d_name);
        all[nall].ppid = parent_of(all[nall].pid);
        nall++;
    }
    if (d)
        closedir(d);
    for (size_t i = 0; i < n; i++) { /* breadth first */
        for (size_t j = 0; j < nall; j++) {
            if (all[j].ppid == pids[i]) {
                lb_grow((void **)&pids, &cap, n + 1, sizeof *pids);
                pids[n++] = all[j].pid;
            }
        }
    }
    free(all);
    *count = (int)n;
    return pids;
}

/* pid's number in its own (innermost) pid namespace: the last of
 * /proc/pid/status's NSpid numbers; pid itself where there is none. */
static long own_number(long pid)
{
    char buf[4096];
    read_proc(pid, "status", buf, sizeof buf);
    const char *line = strstr(buf, "\nNSpid:");
    long own = pid;
    for (const char *p = line ? line + 7 : NULL; p && *p && *p != '\n';) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        own = v;
        p = end;
    }
    return own;
}

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int lb_cmd_snapshot(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(snapshot_usage, stdout);
        return LB_EXIT_OK;
    }
    char *end = NULL;
    long root = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || !end || *end || root <= 0)
        cli_die(LB_EXIT_USAGE, "snapshot: wants one process id (usage: lockblame snapshot PID)");
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld", root);
    if (!exists(path))
        cli_die(LB_EXIT_USAGE, "snapshot: no process %ld", root);
    int n;
    long *pids = tree_of(root, &n);
    char **requests = lb_xcalloc((size_t)n, sizeof *requests);
    const char *db = NULL;
    int asked = 0;
    for (int i = 0; i < n; i++) {
        char *out = environ_value(pids[i], "LOCKBLAME_OUTPUT");
        char *interval = environ_value(pids[i], "LOCKBLAME_INTERVAL");
        if (out && interval && *out == '/') {
            /* its file system and its number, as the process sees them */
            char req[PATH_MAX + 96];
            snprintf(req, sizeof req, "/proc/%ld/root%s.snap", pids[i], out);
            mkdir(req, 0700); /* the processes remove it as they end */
            snprintf(req, sizeof req, "/proc/%ld/root%s.snap/%ld", pids[i], out,
                     own_number(pids[i]));
            int fd = open(req, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) {
                close(fd);
                requests[i] = lb_xstrdup(req);
                asked++;
                if (!db)
                    db = lb_xstrdup(out);
            }
        }
        free(out);
        free(interval);
    }
    if (!asked)
        cli_die(LB_EXIT_USAGE,
                "snapshot: process %ld and its children write no time windows (run them with"
                " 'lockblame run --interval T', or LOCKBLAME_INTERVAL and LOCKBLAME_OUTPUT)",
                root);
    /* Wait until every request is taken and its window written. */
    struct timespec pause = { 0, 20000000 };
    int pending = asked;
    for (int tries = 0; pending && tries < SNAPSHOT_WAIT_S * 50; tries++) {
        nanosleep(&pause, NULL);
        pending = 0;
        for (int i = 0; i < n; i++) {
            if (!requests[i])
                continue;
            char taken[PATH_MAX + 80];
            snprintf(taken, sizeof taken, "%s.taken", requests[i]);
            snprintf(path, sizeof path, "/proc/%ld", pids[i]);
            if ((exists(requests[i]) || exists(taken)) && exists(path))
                pending++;
        }
    }
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (requests[i] && exists(requests[i])) {
            unlink(requests[i]); /* never taken: no window thread there */
            failed++;
        }
        free(requests[i]);
    }
    printf("snapshot: %d of %d process%s wrote a window to %s\n", asked - failed, asked,
           asked == 1 ? "" : "es", db);
    free(requests);
    free(pids);
    return failed == asked ? LB_EXIT_FAIL : LB_EXIT_OK;
}
