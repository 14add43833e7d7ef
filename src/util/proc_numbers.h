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

/* This process's pid as /proc numbers it (the /proc/self link), or 0
 * when the link cannot be read (no /proc, or one of a namespace this
 * process is not in): /proc/PID is then no path to it. errno may change. */
pid_t lb_proc_self_pid(void);

/* True when /proc numbers this process and its threads as getpid() and
 * gettid() do. Found by reading the /proc/self link once a process, or
 * by a fork child's hook from its parent's finding. errno may change. */
bool lb_proc_numbers_own(void);

/* Before a fork, in the forking thread (errno kept): lb_proc_numbers_own
 * found here, once, for the children to take. */
void lb_proc_numbers_fork_prepare(void);
/* In a fork child, from its fork hooks: the parent's finding taken where
 * the child is in its parent's pid namespace (its parent's pid is the
 * one the parent found its own; a child in a new namespace is told 0),
 * else forgotten. A child made without the fork hooks (a raw clone)
 * keeps the parent's finding, which names another pid than its own
 * unless its pid is the parent's number in a new namespace (a pid 1
 * cloning a pid 1): then its threads read /proc/TID of the parent's
 * /proc. */
void lb_proc_numbers_fork_child(void);
#endif
