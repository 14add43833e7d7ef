/* Progress point by hardware breakpoints, or uprobes where breakpoints do
 * not count (whatif_progress.h).
 *
 * Concurrency: `addr`, `counter`, the uprobe's file and offset and
 * `hit_ns` are written at setup, before other threads exist.
 * `slots` hold the fds of running threads' events (-1: free, -2: taken by
 * the final read); a thread claims a free slot by CAS and empties its own
 * by exchange, and the one that empties a slot reads its fd. `ended` and
 * `failed` are atomic. */
#include "core/whatif_progress.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/common.h"
#include "util/raw_syscall.h"

#define PROGRESS_SLOTS 1024 /* running threads the final read can see */
#define SLOT_FREE      (-1)
#define SLOT_TAKEN     (-2)

enum counter {
    BY_BREAKPOINT,
    BY_UPROBE
};

static uintptr_t addr;
static enum counter counter;
static int uprobe_type;            /* the uprobe PMU's perf type */
static char uprobe_path[PATH_MAX]; /* the file of the module holding addr */
static uint64_t uprobe_offset;     /* addr's offset in that file */
static int slots[PROGRESS_SLOTS];
static uint64_t ended;        /* calls of the threads that have ended */
static int failed;            /* errno of the first event that could not open */
static LB_TLS int my_fd = -1; /* this thread's event; -1: none */
static LB_TLS int my_slot;    /* its slot + 1; 0: none */

static uint64_t hit_ns; /* what one counted call costs, measured at setup */

/* The event counting executions at `at` (by breakpoint) or at `offset` of
 * the file `path` (by uprobe). */
static int open_event_where(enum counter by, uintptr_t at, const char *path, uint64_t offset)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (by == BY_BREAKPOINT) {
        attr.type = PERF_TYPE_BREAKPOINT;
        attr.bp_type = HW_BREAKPOINT_X;
        attr.bp_addr = at;
        attr.bp_len = sizeof(long);
    } else {
        attr.type = (uint32_t)uprobe_type;
        attr.config1 = (uintptr_t)path; /* uprobe_path */
        attr.config2 = offset;          /* probe_offset */
    }
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return (int)lb_raw_syscall(SYS_perf_event_open, (long)&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC,
                               0);
}

static int open_event_at(enum counter by, uintptr_t at)
{
    return open_event_where(by, at, uprobe_path, uprobe_offset);
}

static int open_event(void)
{
    return open_event_at(counter, addr);
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

/* A function whose calls the setup counts, to learn whether breakpoints
 * count here at all: some virtual machines open them and never fire. */
__attribute__((noinline)) static void breakpoint_probe(void)
{
    __asm__ volatile("" ::: "memory");
}

#define PROBE_CALLS 4

/* n calls of breakpoint_probe, made through a pointer the compiler cannot
 * see through, so that each is a call. */
static void call_probe(int n)
{
    void (*volatile call)(void) = breakpoint_probe;
    for (int i = 0; i < n; i++)
        call();
}

static bool breakpoints_count(void)
{
    int fd = open_event_at(BY_BREAKPOINT, (uintptr_t)breakpoint_probe);
    if (fd < 0)
        return false;
    call_probe(PROBE_CALLS);
    uint64_t seen = read_count(fd);
    close(fd);
    return seen == PROBE_CALLS;
}

/* Where code lies in its module's file: found by find_file_offset. */
struct code_place {
    uintptr_t addr;
    char *path; /* PATH_MAX bytes */
    uint64_t offset;
    bool found;
};

/* The file and file offset of the code at place->addr, from the loaded
 * segment that holds it. */
static int find_file_offset(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct code_place *place = arg;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t at = place->addr - info->dlpi_addr;
        if (ph->p_type != PT_LOAD || at < ph->p_vaddr || at - ph->p_vaddr >= ph->p_memsz)
            continue;
        const char *name = info->dlpi_name;
        ssize_t n = 0;
        if (name && *name && strlen(name) < PATH_MAX)
            strcpy(place->path, name);
        else if (!(name && *name) &&
                 (n = readlink("/proc/self/exe", place->path, PATH_MAX - 1)) > 0)
            place->path[n] = '\0';
        else
            return 0;
        place->offset = at - ph->p_vaddr + ph->p_offset;
        place->found = true;
        return 1;
    }
    return 0;
}

/* The uprobe PMU's type from sysfs; false (errno set) without one. */
static bool read_uprobe_type(void)
{
    char text[16] = { 0 };
    int fd = open("/sys/bus/event_source/devices/uprobe/type", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    uprobe_type = n > 0 ? atoi(text) : 0;
    if (uprobe_type <= 0) {
        errno = ENODEV;
        return false;
    }
    return true;
}

#define COST_CALLS 64

/* Nanoseconds of COST_CALLS calls of breakpoint_probe. */
static uint64_t time_probe_calls(void)
{
    uint64_t start = lb_monotonic_ns();
    call_probe(COST_CALLS);
    return lb_monotonic_ns() - start;
}

/* What one counted call costs with the chosen counter: breakpoint_probe
 * timed with an event of that kind on it, less without; 0 if it cannot be
 * measured. */
static uint64_t measure_hit_ns(void)
{
    char path[PATH_MAX];
    struct code_place place = { (uintptr_t)breakpoint_probe, path, 0, false };
    if (counter == BY_UPROBE)
        dl_iterate_phdr(find_file_offset, &place);
    if (counter == BY_UPROBE && !place.found)
        return 0;
    int fd = open_event_where(counter, place.addr, path, place.offset);
    if (fd < 0)
        return 0;
    uint64_t counted = time_probe_calls();
    uint64_t seen = read_count(fd);
    close(fd);
    uint64_t plain = time_probe_calls(), again = time_probe_calls();
    plain = again < plain ? again : plain;
    return seen == COST_CALLS && counted > plain ? (counted - plain) / COST_CALLS : 0;
}

uint64_t lb_progress_hit_ns(void)
{
    return hit_ns;
}

bool lb_progress_setup(uintptr_t at)
{
    for (int i = 0; i < PROGRESS_SLOTS; i++)
        slots[i] = SLOT_FREE;
    addr = at;
    counter = BY_BREAKPOINT;
    if (!breakpoints_count()) {
        struct code_place place = { addr, uprobe_path, 0, false };
        dl_iterate_phdr(find_file_offset, &place);
        uprobe_offset = place.offset;
        bool found = place.found;
        counter = BY_UPROBE;
        if (!found) {
            errno = EINVAL;
            addr = 0;
            return false;
        }
        if (!read_uprobe_type()) {
            addr = 0;
            return false;
        }
    }
    int fd = open_event(); /* a trial: say now whether it can work */
    if (fd < 0) {
        addr = 0;
        return false;
    }
    close(fd);
    hit_ns = measure_hit_ns();
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
