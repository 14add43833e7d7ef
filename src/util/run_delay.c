#include "util/run_delay.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>

#include "util/decimal.h"
#include "util/proc_numbers.h"
#include "util/raw_syscall.h"
#include "util/read_head.h"

/* path = "/proc/" ID "/schedstat", by hand, not snprintf: vfprintf's
 * frame is kilobytes of stack that a thread about to exit, or an exit
 * write on a stack of its own, has not touched (page faults). */
static bool schedstat_path(char *path, size_t size, const char *id, size_t len)
{
    static const char head[] = "/proc/", tail[] = "/schedstat";
    if (sizeof head - 1 + len + sizeof tail > size)
        return false;
    memcpy(path, head, sizeof head - 1);
    memcpy(path + sizeof head - 1, id, len);
    memcpy(path + sizeof head - 1 + len, tail, sizeof tail);
    return true;
}

/* The calling thread's schedstat path, /proc/TID/schedstat, with TID as
 * /proc numbers it: gettid() where /proc numbers the process as it does
 * (util/proc_numbers.h), else the /proc/thread-self link's last
 * component, read without following the link. Not
 * /proc/thread-self/schedstat: that leaves the thread's dentries below
 * /proc/PID, and the parent's reap of a process whose threads have just
 * exited invalidates /proc/PID's subtree while the last thread's own
 * release invalidates its part: the reap then spins in
 * shrink_dcache_parent until that thread runs again. /proc/TID's
 * dentries are the thread's alone, invalidated by its own release. */
static bool own_schedstat_path(char *path, size_t size)
{
    char id[24];
    if (lb_proc_numbers_own())
        return schedstat_path(
            path, size, id,
            lb_decimal_u64(id, (uint64_t)lb_raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0)));
    char link[64]; /* "PID/task/TID" */
    long n = lb_raw_syscall(SYS_readlinkat, AT_FDCWD, (long)"/proc/thread-self", (long)link,
                            sizeof link - 1, 0, 0);
    if (n <= 0)
        return false;
    link[n] = '\0';
    const char *tid = strrchr(link, '/');
    tid = tid ? tid + 1 : link;
    return schedstat_path(path, size, tid, strlen(tid));
}

/* "self/task/TID" for a thread of this process; false where /proc
 * numbers its threads otherwise (util/proc_numbers.h): the run delay is
 * then not known. */
static bool task_schedstat_path(char *path, size_t size, pid_t tid)
{
    if (!lb_proc_numbers_own())
        return false;
    char id[32] = "self/task/";
    size_t len = strlen(id);
    len += lb_decimal_u64(id + len, (uint64_t)tid);
    return schedstat_path(path, size, id, len);
}

bool lb_run_delay_ns(pid_t tid, uint64_t *ns)
{
    char path[96], buf[128];
    if (tid < 0 || (tid ? !task_schedstat_path(path, sizeof path, tid)
                        : !own_schedstat_path(path, sizeof path)))
        return false;
    if (lb_read_head(path, buf, sizeof buf) <= 0)
        return false;
    /* "<on-CPU ns> <run delay ns> <timeslices>\n" */
    const char *p = buf;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p != ' ')
        return false;
    p++;
    uint64_t delay = 0;
    const char *digits = p;
    while (*p >= '0' && *p <= '9')
        delay = delay * 10 + (uint64_t)(*p++ - '0');
    if (p == digits)
        return false;
    *ns = delay;
    return true;
}
