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

/* This process's pid, getpid()'s, without a system call where it is
 * known: stamped by lb_own_pid_stamp (at lockblame's start) and by a fork
 * child's lb_proc_numbers_fork_child (the first of its fork hooks); a
 * raw getpid() before the first stamp. A child made without the fork
 * hooks (a vfork child, a raw clone) is answered its parent's pid until
 * its final write (lb_own_pid_confirm): one that shares its parent's
 * memory reads and writes the same memory through it (process_vm_readv,
 * util/own_memory.h); one that does not (a raw clone without CLONE_VM)
 * would read its parent's. errno kept. */
pid_t lb_own_pid(void);
/* getpid() kept for lb_own_pid; at lockblame's start, before its fork
 * hooks are registered. errno kept. */
void lb_own_pid_stamp(void);
/* At the start of the process's final write, on the finishing thread:
 * getpid() stamped anew where it is not the stamp (a child made without
 * the fork hooks that writes a profile of its own), so that lb_own_pid
 * names the writing process exactly. One system call. errno kept. */
void lb_own_pid_confirm(void);

/* This process's pid as /proc numbers it (the /proc/self link), or 0
 * when the link cannot be read (no /proc, or one of a namespace this
 * process is not in): /proc/PID is then no path to it. errno may change. */
pid_t lb_proc_self_pid(void);

/* True when /proc numbers this process and its threads as getpid() and
 * gettid() do. Found by reading the /proc/self link once a process (by
 * the kernel's getpid(), one system call: a child made without the fork
 * hooks finds its own), or by a fork child's hook from its parent's
 * finding. errno may change. */
bool lb_proc_numbers_own(void);

/* Before a fork, in the forking thread (errno kept): lb_proc_numbers_own
 * found here, once, for the children to take. */
void lb_proc_numbers_fork_prepare(void);
/* In a fork child, first of its fork hooks: its pid stamped for
 * lb_own_pid, and the parent's finding taken where
 * the child is in its parent's pid namespace (its parent's pid is the
 * one the parent found its own; a child in a new namespace is told 0),
 * else forgotten. A child made without the fork hooks (a raw clone)
 * keeps the parent's pid for lb_own_pid until its final write, and finds
 * /proc's numbers afresh (lb_proc_numbers_own). */
void lb_proc_numbers_fork_child(void);
#endif
