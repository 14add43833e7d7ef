/* The main executable's name as exec'd (exe_alias.h).
 *
 * The constructor copies AT_EXECFN (and, for a relative one, the working
 * directory it is relative to) while both are as the exec left them: a
 * program may rewrite the strings at the top of its stack for a process
 * title, or change directory. The comparison with the mapped file waits
 * for the final write. Single-threaded use: only the finishing thread
 * calls lb_exe_alias. */
#include "report/writer/exe_alias.h"
#include "common/path_base.h"
#include "report/writer/writer_int.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static char exec_path[PATH_MAX]; /* absolute; "" when unknown */

static void copy_exec_path(void)
{
    const char *fn = (const char *)getauxval(AT_EXECFN);
    if (!fn || !*fn)
        return;
    size_t used = 0;
    if (fn[0] != '/') {
        if (!getcwd(exec_path, sizeof exec_path - 1)) {
            exec_path[0] = '\0';
            return;
        }
        used = strlen(exec_path);
        exec_path[used++] = '/';
    }
    size_t len = strlen(fn);
    if (used + len >= sizeof exec_path) {
        exec_path[0] = '\0';
        return;
    }
    memcpy(exec_path + used, fn, len + 1);
}

/* errno kept: the program's main starts with errno 0 (C11 7.5). */
__attribute__((constructor(150))) static void remember_exec_path(void)
{
    int saved_errno = errno;
    copy_exec_path();
    errno = saved_errno;
}

const char *lb_exe_alias(const char *module_path)
{
    static bool resolved;
    static char exe[PATH_MAX], alias[PATH_MAX];
    if (!resolved) {
        resolved = true;
        char own[PATH_MAX], target[PATH_MAX];
        /* not a path that names another file in another process:
         * /proc/self/exe, /proc/PID/exe, /dev/fd/N (fexecve) */
        bool per_process =
            strncmp(exec_path, "/proc/", 6) == 0 || strncmp(exec_path, "/dev/fd/", 8) == 0;
        /* The kernel's name of the file has no symbolic link in it, as the
         * maps name it; the exec'd name is resolved only when its base
         * name differs (a path per component, each a lookup a fresh
         * process pays dearly for). */
        const char *file =
            exec_path[0] && !per_process ? lb_tables_executable(own, sizeof own) : "";
        if (file[0] && strcmp(lb_path_base(file), lb_path_base(exec_path)) != 0 &&
            realpath(exec_path, target) && strcmp(file, target) == 0) {
            memcpy(exe, file, strlen(file) + 1);
            memcpy(alias, exec_path, strlen(exec_path) + 1);
        }
    }
    if (alias[0] && module_path && strcmp(module_path, exe) == 0)
        return alias;
    return module_path;
}
