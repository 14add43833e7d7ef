/* How /proc numbers this process, and its pid (contract in
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
 * for the case proc_numbers.h gives). */
#include "util/proc_numbers.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "util/common.h"
#include "util/raw_syscall.h"

/* Written by a fork child's hook: on the page the child's hooks write
 * anyway (util/common.h), one cache line. */
static struct {
    pid_t pid;         /* lb_own_pid's; 0 before the start's stamp */
    pid_t own_for;     /* found /proc's numbers its own; 0 none */
    pid_t checked_for; /* read the link (own_for set if they were) */
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

void lb_proc_numbers_fork_child(void)
{
    pid_t parents = numbers.own_for; /* the fork hooks run alone in the child */
    numbers.pid = raw_getpid();
    numbers.own_for = 0;
    numbers.checked_for = 0;
    if (parents && parents == (pid_t)lb_raw_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0))
        numbers.own_for = numbers.pid;
}

void lb_proc_numbers_fork_prepare(void)
{
    int saved_errno = errno;
    lb_proc_numbers_own();
    if (errno != saved_errno) /* only then: the last fork write-protected errno's page */
        errno = saved_errno;
}
