/* How /proc numbers this process, its pid and its start (contract in
 * proc_numbers.h).
 *
 * Invariants: `pid` is 0 or getpid() of the process that stamped it (the
 * start, a fork child's first hook, which runs alone in the child, or
 * the finishing thread of a child made without the hooks);
 * `own_for` holds the pid of the process that found /proc's
 * numbers to be its own, `checked_for` the pid of one that looked; each
 * is written whole (racing threads find the same; `checked_for` is
 * stored after `own_for`, with release). A fork child's hook sets both
 * for the child before any thread of it runs; a child made without the
 * hooks keeps its parent's, which name another pid than its own (but
 * for the case proc_numbers.h gives). `start_for` names the process
 * `start` is for (0: none): a fork child's hook sets both, `start_for`
 * only where it took its parent's finding that /proc numbers it as
 * getpid() does (`own_for`), so that the start kept is /proc/PID's; a
 * keeper stores `start` before `start_for` (release), a reader loads
 * `start_for` (acquire) before `start`, so a reader that finds its pid
 * finds its start. */
#include "util/proc_numbers.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/common.h"
#include "util/raw_syscall.h"

/* Written by a fork child's hook: on the page the child's hooks write
 * anyway (util/common.h), one cache line. */
static struct {
    pid_t pid;         /* lb_own_pid's; 0 before the start's stamp */
    pid_t own_for;     /* found /proc's numbers its own; 0 none */
    pid_t checked_for; /* read the link (own_for set if they were) */
    pid_t start_for;   /* the process `start` is for; 0: none */
    uint64_t start;    /* its start, in clock ticks */
    pid_t parent_for;  /* the parent `parent_start` is for (a fork child's); 0: none */
    uint64_t parent_start;
    /* CLOCK_BOOTTIME before the last fork (0: none), written by the
     * forking thread under the arena's lock, which the fork holds
     * (core/runtime.c): no other fork's in between. Here, not in a
     * thread-local: the parent writes this page at each fork anyway,
     * where a thread-local's page was one more to copy after each. */
    uint64_t fork_begun_ns;
    /* sysconf(_SC_CLK_TCK), read by the first fork's parent: in each
     * child the call would fault in libc's pages of it */
    long clk_tck;
} numbers LB_FORK_WRITTEN;

static pid_t raw_getpid(void)
{
    return (pid_t)lb_raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

pid_t lb_own_pid(void)
{
    pid_t pid = __atomic_load_n(&numbers.pid, __ATOMIC_RELAXED);
    return pid ? pid : raw_getpid();
}

void lb_own_pid_stamp(void)
{
    __atomic_store_n(&numbers.pid, raw_getpid(), __ATOMIC_RELAXED);
}

void lb_own_pid_confirm(void)
{
    pid_t pid = raw_getpid();
    if (__atomic_load_n(&numbers.pid, __ATOMIC_RELAXED) != pid)
        __atomic_store_n(&numbers.pid, pid, __ATOMIC_RELAXED);
}

/* The number a /proc link names, or -1. */
static long link_number(const char *link)
{
    char text[32];
    long n =
        lb_raw_syscall(SYS_readlinkat, AT_FDCWD, (long)link, (long)text, sizeof text - 1, 0, 0);
    if (n <= 0)
        return -1;
    long v = 0;
    for (long i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v = v * 10 + (text[i] - '0');
    }
    return v;
}

pid_t lb_proc_self_pid(void)
{
    long pid = link_number("/proc/self");
    return pid > 0 ? (pid_t)pid : 0;
}

bool lb_proc_numbers_own(void)
{
    /* the kernel's number, not lb_own_pid's: a child made without the fork
     * hooks (a raw clone into a pid namespace of its own) must not take its
     * parent's finding */
    pid_t pid = raw_getpid();
    if (__atomic_load_n(&numbers.own_for, __ATOMIC_RELAXED) == pid)
        return true;
    if (__atomic_load_n(&numbers.checked_for, __ATOMIC_ACQUIRE) == pid)
        return __atomic_load_n(&numbers.own_for, __ATOMIC_RELAXED) == pid;
    bool same = link_number("/proc/self") == (long)pid;
    if (same)
        __atomic_store_n(&numbers.own_for, pid, __ATOMIC_RELAXED);
    __atomic_store_n(&numbers.checked_for, pid, __ATOMIC_RELEASE);
    return same;
}

/* CLOCK_BOOTTIME from the kernel, the clock it stamps a new process with,
 * not through the vDSO: a fork child that has not run the vDSO's code
 * would fault its page in (one page fault a child that writes nothing). */
static uint64_t boottime_ns(void)
{
    int saved_errno = errno;
    struct timespec ts;
    uint64_t ns = lb_raw_syscall(SYS_clock_gettime, CLOCK_BOOTTIME, (long)&ts, 0, 0, 0, 0) == 0
                      ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec
                      : 0;
    if (errno != saved_errno) /* only then: the last fork write-protected errno's page */
        errno = saved_errno;
    return ns;
}

uint64_t lb_proc_start_between(uint64_t from_ns, uint64_t to_ns, long hz)
{
    if (hz <= 0 || 1000000000 % hz != 0 || from_ns < LB_PROC_START_SLACK_NS || to_ns < from_ns)
        return 0;
    uint64_t tick_ns = 1000000000u / (uint64_t)hz;
    uint64_t first = (from_ns - LB_PROC_START_SLACK_NS) / tick_ns;
    return first == (to_ns + LB_PROC_START_SLACK_NS) / tick_ns ? first : 0;
}

uint64_t lb_proc_start_known(pid_t pid)
{
    if (!pid || __atomic_load_n(&numbers.start_for, __ATOMIC_ACQUIRE) != pid)
        return 0;
    return __atomic_load_n(&numbers.start, __ATOMIC_RELAXED);
}

uint64_t lb_proc_parent_start_known(pid_t pid)
{
    if (!pid || numbers.parent_for != pid ||
        (pid_t)lb_raw_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0) != pid)
        return 0;
    return numbers.parent_start;
}

void lb_proc_start_keep(pid_t pid, uint64_t start)
{
    if (!pid || !start)
        return;
    __atomic_store_n(&numbers.start, start, __ATOMIC_RELAXED);
    __atomic_store_n(&numbers.start_for, pid, __ATOMIC_RELEASE);
}

void lb_proc_start_fork_prepare(void)
{
    if (!numbers.clk_tck) {
        int saved_errno = errno;
        numbers.clk_tck = sysconf(_SC_CLK_TCK);
        errno = saved_errno;
    }
    numbers.fork_begun_ns = boottime_ns();
}

void lb_proc_numbers_fork_child(void)
{
    uint64_t forked_ns = boottime_ns();     /* first: the nearer the fork, the surer its tick */
    pid_t parents = numbers.own_for;        /* the fork hooks run alone in the child */
    numbers.parent_for = numbers.start_for; /* the parent's own start, where it knew it */
    numbers.parent_start = numbers.start;
    numbers.pid = raw_getpid();
    numbers.own_for = 0;
    numbers.checked_for = 0;
    if (parents && parents == (pid_t)lb_raw_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0))
        numbers.own_for = numbers.pid;
    numbers.start = lb_proc_start_between(numbers.fork_begun_ns, forked_ns, numbers.clk_tck);
    /* only where /proc/PID is this process: under a /proc of another pid
     * namespace it is another one, whose start an exec'd image of this
     * process reads and the spool's duty check compares; never the
     * parent's */
    numbers.start_for = numbers.start && numbers.own_for ? numbers.pid : 0;
}

void lb_proc_numbers_fork_prepare(void)
{
    int saved_errno = errno;
    lb_proc_numbers_own();
    if (errno != saved_errno) /* only then: the last fork write-protected errno's page */
        errno = saved_errno;
}
