/* Progress point by hardware breakpoint (whatif_progress.h).
 *
 * Concurrency: the event's fd is set once at setup, before any thread but
 * the first exists, and read-only after; the kernel keeps the counts. */
#include "core/whatif_progress.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int progress_fd = -1;

bool lb_progress_open(uintptr_t addr)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_BREAKPOINT;
    attr.bp_type = HW_BREAKPOINT_X;
    attr.bp_addr = addr;
    attr.bp_len = sizeof(long);
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.inherit = 1; /* threads created afterwards: see the header */
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return false;
    progress_fd = (int)fd;
    return true;
}

long long lb_progress_calls(void)
{
    uint64_t count;
    if (progress_fd < 0 || read(progress_fd, &count, sizeof count) != (ssize_t)sizeof count)
        return -1;
    return (long long)count;
}
