/* How /proc numbers this process. In a pid namespace with /proc mounted
 * for it (a container) /proc's numbers are the ones getpid() and gettid()
 * give; under a /proc of another namespace (`unshare --pid --fork`
 * without --mount-proc) /proc/PID is another process, and only
 * /proc/self and /proc/thread-self name this one. Raw system calls, no
 * locks, no malloc: usable at a thread's exit. */
#ifndef LB_UTIL_PROC_NUMBERS_H
#define LB_UTIL_PROC_NUMBERS_H
#include <stdbool.h>
#include <sys/types.h>

/* This process's pid as /proc numbers it (the /proc/self link), or
 * getpid() when the link cannot be read. errno may change. */
pid_t lb_proc_self_pid(void);

/* True when /proc numbers this process and its threads as getpid() and
 * gettid() do. Found once a process: by a fork child from its parent's
 * finding where its parent is in its namespace, else by reading the
 * /proc/self link. errno may change. */
bool lb_proc_numbers_own(void);

/* Before a fork, in the forking thread (errno kept): lb_proc_numbers_own
 * found here, once, for the children to take. */
void lb_proc_numbers_fork_prepare(void);
#endif
