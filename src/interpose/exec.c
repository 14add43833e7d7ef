/* exec: the old image's profile is written before the image is replaced
 * (docs/DESIGN.md "Storage"), unless the exec cannot succeed as far as
 * a look at its file tells (none there, not a regular file, not
 * executable by this process: the commonest failures, as a program that
 * tries one command and then another meets them): then the image goes
 * on profiled, as it goes on running. If an exec that looked possible
 * fails all the same (E2BIG, ETXTBSY, ENOEXEC from execve, ...), the
 * program goes on unprofiled, and one lockblame: line says so: what it
 * does from there is in no profile. errno and the return value are
 * always the real call's.
 *
 * glibc's exec family calls __execve internally, not through the PLT, so
 * each entry point is wrapped; the variadic execl* build an argv first. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path_search.h"
#include "core/phase.h"
#include "core/runtime.h"
#include "util/common.h"
#include "util/log.h"

typedef int (*exec_fn)(const char *, char *const[], char *const[]);

extern char **environ;

/* Whether an exec of path may succeed: false only on a definite no (no
 * such file, not a regular file, no execute bit, or execute permission
 * refused to the effective ids, as execve checks them). Any other
 * answer, a sandbox's EPERM for faccessat2 say, counts as maybe: a wrong
 * no would lose the image's profile, a wrong maybe only ends profiling
 * early, as any exec that fails did. errno may change. */
static bool runnable(const char *path)
{
    struct stat st;
    if (!path)
        return false;
    if (stat(path, &st) != 0)
        return errno != ENOENT && errno != ENOTDIR;
    if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0)
        return false;
    return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0 || errno != EACCES;
}

/* runnable as a path search's visitor. */
static bool visit_runnable(const char *candidate, void *arg)
{
    (void)arg;
    return runnable(candidate);
}

/* How an exec finds its file: the path as given, or searched in PATH
 * (the p forms), or a descriptor (not looked at). */
enum exec_lookup {
    LOOK_PATH,
    LOOK_SEARCH,
    LOOK_NONE
};

/* The image's profile written, where the exec may replace it (the look
 * at its file above). Returns whether this call ended the profiling.
 * errno kept. */
static bool write_before_exec(const char *file, enum exec_lookup how)
{
    if (!lb_runtime_is_own_process() || !lb_runtime_monitoring())
        return false; /* a vfork child (the memory is its parent's), or not profiling */
    int saved_errno = errno;
    bool may_replace =
        how == LOOK_NONE ||
        (how == LOOK_PATH ? runnable(file)
                          : lb_path_search(file, LB_EXEC_DEFAULT_PATH, visit_runnable, NULL));
    bool ended = may_replace && lb_runtime_finish("exec");
    errno = saved_errno;
    return ended;
}

/* The exec returned: it failed. If it ended the profiling first, say so
 * (errno kept: it is the exec's), naming the error by its symbol
 * (strerrorname_np: a table, no locale's lock, as a fork child of a
 * threaded program or a crash handler may call exec). file: NULL for
 * fexecve. */
static void say_failed_exec(const char *file, bool ended_profiling)
{
    if (!ended_profiling)
        return;
    const char *name = strerrorname_np(errno);
    lb_warn("exec of %s failed (%s): the profile ends at the exec, and what this process does"
            " from here is not recorded",
            file ? file : "a file descriptor", name ? name : "an unknown error");
}

/* dlsym without our table: exec is rare, so one lookup per call is fine. */
#include <dlfcn.h>
static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

LB_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    exec_fn fn = (exec_fn)real("execve");
    bool ended = write_before_exec(path, LOOK_PATH);
    int rc = fn(path, argv, envp);
    say_failed_exec(path, ended);
    return rc;
}

LB_EXPORT int execv(const char *path, char *const argv[])
{
    int (*fn)(const char *, char *const[]) = real("execv");
    bool ended = write_before_exec(path, LOOK_PATH);
    int rc = fn(path, argv);
    say_failed_exec(path, ended);
    return rc;
}

LB_EXPORT int execvp(const char *file, char *const argv[])
{
    int (*fn)(const char *, char *const[]) = real("execvp");
    bool ended = write_before_exec(file, LOOK_SEARCH);
    int rc = fn(file, argv);
    say_failed_exec(file, ended);
    return rc;
}

LB_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    exec_fn fn = (exec_fn)real("execvpe");
    bool ended = write_before_exec(file, LOOK_SEARCH);
    int rc = fn(file, argv, envp);
    say_failed_exec(file, ended);
    return rc;
}

LB_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    int (*fn)(int, char *const[], char *const[]) = real("fexecve");
    bool ended = write_before_exec(NULL, LOOK_NONE);
    int rc = fn(fd, argv, envp);
    say_failed_exec(NULL, ended);
    return rc;
}

enum exec_form {
    EXEC_PATH,
    EXEC_SEARCH,
    EXEC_ENV
};

/* The variadic list of execl/execlp/execle as an argv on the stack, then
 * the matching v-form (execle's envp follows the NULL). */
static int exec_list(enum exec_form form, const char *path, const char *arg0, va_list args)
{
    va_list ap;
    va_copy(ap, args);
    size_t n = 1;
    if (arg0) {
        va_list count;
        va_copy(count, ap);
        while (va_arg(count, const char *))
            n++;
        va_end(count);
    }
    char *argv[n + 1];
    argv[0] = (char *)arg0;
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(ap, char *);
    argv[n] = NULL;
    if (arg0)
        (void)va_arg(ap, char *); /* the NULL terminator */
    char *const *envp = form == EXEC_ENV ? va_arg(ap, char *const *) : NULL;
    va_end(ap);
    switch (form) {
    case EXEC_PATH:
        return execv(path, argv);
    case EXEC_SEARCH:
        return execvp(path, argv);
    default:
        return execve(path, argv, envp);
    }
}

LB_EXPORT int execl(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    int rc = exec_list(EXEC_PATH, path, arg0, ap);
    va_end(ap);
    return rc;
}

LB_EXPORT int execlp(const char *file, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    int rc = exec_list(EXEC_SEARCH, file, arg0, ap);
    va_end(ap);
    return rc;
}

LB_EXPORT int execle(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    int rc = exec_list(EXEC_ENV, path, arg0, ap);
    va_end(ap);
    return rc;
}
