#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/env.h"
#include "util/proc_numbers.h"

/* The file fd 2 was when the process started. A program that closes its
 * stderr may reuse fd 2 for a file of its own; our lines must never land
 * there (docs/DESIGN.md "Never change the program's behaviour"), so a line is written
 * only while fd 2 is still that file. (`lockblame run` prints the run's
 * summary on its own stderr.) */
static struct stat start_stderr;
static bool start_stderr_ok;

__attribute__((constructor(101))) static void remember_stderr(void)
{
    int saved_errno = errno; /* (fd 2 closed: EBADF, which main must not see) */
    start_stderr_ok = fstat(STDERR_FILENO, &start_stderr) == 0;
    errno = saved_errno;
}

static bool stderr_is_original(void)
{
    struct stat now;
    if (fstat(STDERR_FILENO, &now) != 0)
        return false;
    return start_stderr_ok && now.st_dev == start_stderr.st_dev &&
           now.st_ino == start_stderr.st_ino;
}

static void lb_vwarn(const char *fmt, va_list ap)
{
    int saved_errno = errno;
    if (!stderr_is_original()) {
        errno = saved_errno;
        return;
    }
    char line[512];
    int n = snprintf(line, sizeof line, "lockblame: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* One line, whole: a signal storm may interrupt the write (EINTR) or
     * cut it short; retry until it is out or stderr is gone. write() is a
     * cancellation point and a warning can come from inside a wrapped
     * call that is not one (pthread_mutex_lock converting a lock), so
     * cancellation is off around it (pthread_setcancelstate is not a
     * cancellation point). */
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(STDERR_FILENO, line + off, len - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    pthread_setcancelstate(cancel_state, NULL);
    errno = saved_errno;
}

/* Whether the comma-separated list names name. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list ? list : ""; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

/* LOCKBLAME_SAID as this image found it: what its predecessors said. */
static char said_before_image[512];
static bool said_read;

static bool said_before(const char *name)
{
    if (!said_read) {
        /* (the image that starts a run removed the list of a tree around
         * it: report/writer/output.c) */
        const char *v = lb_getenv("LOCKBLAME_SAID");
        snprintf(said_before_image, sizeof said_before_image, "%s", v ? v : "");
        said_read = true;
    }
    return listed(said_before_image, name);
}

static void note_said(const char *name)
{
    const char *v = lb_getenv("LOCKBLAME_SAID");
    if (listed(v, name))
        return;
    char list[512];
    int n = snprintf(list, sizeof list, "%s%s%s", v && *v ? v : "", v && *v ? "," : "", name);
    if (n > 0 && (size_t)n < sizeof list)
        setenv("LOCKBLAME_SAID", list, 1);
}

void lb_warn_setting(const char *name, const char *fmt, ...)
{
    if (said_before(name))
        return;
    int saved_errno = errno;
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
    note_said(name);
    errno = saved_errno;
}

void lb_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
}

void lb_warn_once(int *once, const char *fmt, ...)
{
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
        return;
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
}

bool lb_summary_by_run(void)
{
    const char *s = lb_getenv("LOCKBLAME_SUMMARY");
    return s && strcmp(s, "run") == 0;
}

bool lb_summary_by_root(void)
{
    const char *quiet = lb_getenv("LOCKBLAME_QUIET");
    long root = lb_getenv_pid("LOCKBLAME_TREE_ROOT");
    return !(quiet && strcmp(quiet, "0") == 0) && root != -1 && root != (long)lb_own_pid();
}

void lb_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lb_vwarn(fmt, ap);
    va_end(ap);
    abort();
}
