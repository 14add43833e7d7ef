/* The process's environment, read the way the program would have it.
 * A program may define a getenv of its own, which then serves the
 * library's calls too: bash's looks only at the shell's variables once it
 * has made them, which the library's first setenv does at start-up (a
 * setting read after it read as unset). Depends on nothing of ours. */
#ifndef LB_UTIL_ENV_H
#define LB_UTIL_ENV_H

/* Variable `name`: the program's getenv first (it holds what the library
 * set through the program's setenv, which a shell passes on to what it
 * runs), then `environ` itself. */
const char *lb_getenv(const char *name);

/* Variable `name` removed through the program's unsetenv (a shell's own
 * variables) and from `environ` itself (glibc's), so that lb_getenv does
 * not find it there either. For the images' setup, before the program
 * runs threads. */
void lb_unsetenv(const char *name);

/* Variable `name` read as a process id: its leading digits (0 for none),
 * -1 when it is unset. By hand, not strtol: a fork child's exit reads
 * LOCKBLAME_TREE_ROOT, and strtol's code was a page of libc that child
 * touched for nothing else. */
long lb_getenv_pid(const char *name);
#endif
