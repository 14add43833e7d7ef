/* How /proc numbers this process. In a pid namespace with /proc mounted
 * for it (a container) /proc's numbers are the ones getpid() and gettid()
 * give; under a /proc of another namespace (`unshare --pid --fork`
 * without --mount-proc) /proc/PID is another process, and only
 * /proc/self and /proc/thread-self name this one. And when /proc says it
 * started, where that is known without reading /proc (below). Raw system
 * calls, no locks, no malloc: usable at a thread's exit. */
#ifndef LB_UTIL_PROC_NUMBERS_H
#define LB_UTIL_PROC_NUMBERS_H
#include <stdbool.h>
#include <stdint.h>
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
 * else forgotten; its start kept where its fork lay in one clock tick
 * and it took that finding (lb_proc_start_known). A child made without
 * the fork hooks (a raw clone) keeps the parent's pid for lb_own_pid
 * until its final write, and finds /proc's numbers afresh
 * (lb_proc_numbers_own). */
void lb_proc_numbers_fork_child(void);

/* This process's start time as /proc gives it (/proc/PID/stat field 22,
 * as common/ledger.h's lb_proc_start_of reads it: clock ticks of
 * CLOCK_BOOTTIME since boot), known without reading /proc where it can
 * be. The kernel stamps a new process with that clock while it forks it,
 * so a fork child's start lies between a reading of the clock in the
 * forking thread before the fork (lb_proc_start_fork_prepare) and one in
 * the child after it (lb_proc_numbers_fork_child); where both fall in
 * one clock tick, that tick is the start, the figure /proc gives anyone
 * in this time namespace. It is kept only where the child took its
 * parent's finding that /proc numbers it as getpid() does
 * (lb_proc_numbers_own): under a /proc of another pid namespace
 * /proc/PID is another process, whose start is what each exec'd image
 * of this one reads there, and what a check by pid finds.
 * Otherwise (a process started by exec, a tick's edge inside the fork,
 * /proc not numbering it) the caller reads /proc once a process and
 * keeps what it read here. (The one fork whose two readings are not of
 * one clock is the one that takes a child into a time namespace its
 * parent made with unshare(CLONE_NEWTIME): an offset back in time
 * shorter than the fork could fix a tick too early.) Each reading is a system call;
 * errno kept. */

/* What the two readings keep from a tick's edges: the process's stamp
 * and this process's readings of the clock need only agree within it. */
#define LB_PROC_START_SLACK_NS 100000ull

/* The start, in clock ticks of hz a second, of a process that started
 * between from_ns and to_ns of CLOCK_BOOTTIME, where that span, widened by
 * LB_PROC_START_SLACK_NS either side, lies in one tick; else 0 (unknown,
 * also where a second is no whole number of ticks). */
uint64_t lb_proc_start_between(uint64_t from_ns, uint64_t to_ns, long hz);
/* Process pid's start as kept here (by its fork, or lb_proc_start_keep),
 * or 0. */
uint64_t lb_proc_start_known(pid_t pid);
/* Where pid is this process's parent, alive (getppid() says pid: a
 * process whose parent ended has another), and this process is its fork
 * child, the parent's start as the parent kept it here before the fork;
 * else 0. One system call; errno kept. The parent's own start then needs
 * no read of /proc/PID/stat: a living parent is the process it was. */
uint64_t lb_proc_parent_start_known(pid_t pid);
/* Keeps start (lb_proc_start_of's reading; 0 is not kept) as process
 * pid's. */
void lb_proc_start_keep(pid_t pid, uint64_t start);
/* Before a fork, in the forking thread, last of its fork steps and under
 * the lock the fork holds (core/runtime.c: the arena's): the clock, which
 * the child's start follows. */
void lb_proc_start_fork_prepare(void);
#endif
