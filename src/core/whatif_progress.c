/* Progress point by hardware breakpoints (whatif_progress.h).
 *
 * Concurrency: `addr` is written at setup, before other threads exist.
 * `slots` hold the fds of running threads' events (-1: free, -2: taken by
 * the final read); a thread claims a free slot by CAS and empties its own
 * by exchange, and the one that empties a slot reads its fd. `ended` and
 * `failed` are atomic. */
#include "core/whatif_progress.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/common.h"
#include "util/raw_syscall.h"

#define PROGRESS_SLOTS 1024 /* running threads the final read can see */
#define SLOT_FREE      (-1)
#define SLOT_TAKEN     (-2)

static uintptr_t addr;
static int slots[PROGRESS_SLOTS];
static uint64_t ended;        /* calls of the threads that have ended */
static int failed;            /* errno of the first event that could not open */
static LB_TLS int my_fd = -1; /* this thread's event; -1: none */
static LB_TLS int my_slot;    /* its slot + 1; 0: none */

static int open_event(void)
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
    return (int)lb_raw_syscall(SYS_perf_event_open, (long)&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC,
                               0);
}

static uint64_t read_count(int fd)
{
    uint64_t count;
    return read(fd, &count, sizeof count) == (ssize_t)sizeof count ? count : 0;
}

void lb_progress_thread_start(void)
{
    if (!addr)
        return;
    int saved_errno = errno;
    int fd = open_event();
    if (fd < 0) {
        int expected = 0;
        __atomic_compare_exchange_n(&failed, &expected, errno, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        errno = saved_errno;
        return;
    }
    my_fd = fd;
    for (int i = 0; i < PROGRESS_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (__atomic_compare_exchange_n(&slots[i], &expected, fd, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            my_slot = i + 1;
            break;
        }
    }
    errno = saved_errno;
}

void lb_progress_thread_stop(void)
{
    if (my_fd < 0)
        return;
    int saved_errno = errno;
    /* Without a slot the fd is this thread's alone; with one, the final
     * read may have taken it (and counted it) already. */
    bool mine =
        !my_slot || __atomic_exchange_n(&slots[my_slot - 1], SLOT_FREE, __ATOMIC_ACQ_REL) == my_fd;
    if (mine) {
        __atomic_fetch_add(&ended, read_count(my_fd), __ATOMIC_RELAXED);
        close(my_fd);
    }
    my_fd = -1;
    my_slot = 0;
    errno = saved_errno;
}

bool lb_progress_setup(uintptr_t at)
{
    for (int i = 0; i < PROGRESS_SLOTS; i++)
        slots[i] = SLOT_FREE;
    addr = at;
    int fd = open_event(); /* a trial: say now whether it can work */
    if (fd < 0) {
        addr = 0;
        return false;
    }
    close(fd);
    return true;
}

void lb_progress_fork_child(void)
{
    if (!addr)
        return;
    for (int i = 0; i < PROGRESS_SLOTS; i++)
        if (slots[i] >= 0 && slots[i] != my_fd)
            close(slots[i]); /* the parent's threads' events: not counted here */
    for (int i = 0; i < PROGRESS_SLOTS; i++)
        slots[i] = SLOT_FREE;
    if (my_fd >= 0)
        close(my_fd); /* counts the parent's thread, not this one */
    my_fd = -1;
    my_slot = 0;
    ended = 0;
    lb_progress_thread_start();
}

long long lb_progress_calls(void)
{
    if (!addr)
        return -1;
    int why = __atomic_load_n(&failed, __ATOMIC_RELAXED);
    if (why) {
        errno = why;
        return -1;
    }
    uint64_t sum = 0;
    for (int i = 0; i < PROGRESS_SLOTS; i++) {
        int fd = __atomic_exchange_n(&slots[i], SLOT_TAKEN, __ATOMIC_ACQ_REL);
        if (fd >= 0)
            sum += read_count(fd); /* left open: its thread may still run */
    }
    return (long long)(sum + __atomic_load_n(&ended, __ATOMIC_RELAXED));
}
