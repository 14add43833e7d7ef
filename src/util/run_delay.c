#include "util/run_delay.h"

#include <stdio.h>

#include "util/read_head.h"

bool lb_run_delay_ns(pid_t tid, uint64_t *ns)
{
    char path[64], buf[128];
    if (tid)
        snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
    else
        snprintf(path, sizeof path, "/proc/thread-self/schedstat");
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
