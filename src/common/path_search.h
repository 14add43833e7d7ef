/* The paths an exec*p call (execvp, execvpe, execlp) tries for a file,
 * in its order: the file itself when its name has a '/', else the file in
 * each directory of PATH (an empty entry: the working directory), or of
 * a default list where PATH is unset. Used by the library's exec
 * wrappers (interpose/exec.c) and by `lockblame run`'s checks
 * (report/cli/run_checks.c). No malloc and no stdio: async-signal-safe
 * where the visitor is (an exec may run in a signal handler). */
#ifndef LB_COMMON_PATH_SEARCH_H
#define LB_COMMON_PATH_SEARCH_H
#include <stdbool.h>

/* The list glibc's exec*p calls search where PATH is unset (its
 * confstr(_CS_PATH)). */
#define LB_EXEC_DEFAULT_PATH "/bin:/usr/bin"

/* Calls visit(candidate, arg) for each path in that order until it
 * returns true; returns whether one did. An empty or NULL file has none;
 * a candidate longer than PATH_MAX - 1 bytes is skipped. */
bool lb_path_search(const char *file, const char *default_path,
                    bool (*visit)(const char *candidate, void *arg), void *arg);
#endif
