/* The perf_event backend: one event per thread (generic events encoded
 * here, named PMU events by libpfm4, loaded on demand: util/lazy_pfm.c),
 * counting user mode only, delivering its overflow signal to its own
 * thread (F_SETOWN_EX + F_OWNER_TID, F_SETSIG).
 *
 * Why user mode only, although kernel time is work (docs/DESIGN.md "Metrics"): an
 * overflow in kernel mode signals at once, and a thread about to block in
 * poll, epoll_wait, select or a futex wait then returns EINTR to the
 * program (measured: 11 EINTRs from poll in 50K round trips with
 * task-clock counting kernel time, none natively). Kernel time still
 * counts: for cycles, the writer scales samples by the threads' CPU clocks
 * (user + kernel); for task-clock, the CPU time no sample saw is credited
 * to the start routine (unsampled.c). The CPU-time timer, the default
 * without a PMU, samples kernel time in place: its expiry runs as task
 * work on the way back to user mode (POSIX_CPU_TIMERS_TASK_WORK), so it
 * interrupts no system call. *
 * File descriptors: each event fd is moved above the program's range
 * (lb_perf_place_fd), so the program's own open() still gets the lowest
 * numbers it would get natively; when no high slot is left (RLIMIT_NOFILE
 * reached) thread_start fails with -EMFILE and the caller falls back to
 * the timer backend for that thread.
 *
 * Arming: the event gets a small mmap ring (LB_PERF_RING_BYTES) with
 * wakeup_events = 1, so every overflow signals us with the event left
 * enabled, and the handler only moves the ring's tail (no system call per
 * sample). Where the ring cannot be mapped, PERF_EVENT_IOC_REFRESH 1 lets
 * exactly one overflow through; the kernel then disables the event and
 * sends our signal with si_code POLL_HUP, and the handler refreshes it.
 * The samples' records in the ring are never read: the signal's context
 * is the sample.
 *
 * Invariants: lb_perf_attr is written by lb_perf_prepare during setup only
 * and read-only afterwards. A thread's fd is owned as described in
 * backend.h (has_perf exchange). Events are opened with O_CLOEXEC; after
 * fork the inherited fd still drives the parent's event, so the child only
 * closes it (never ioctl/fcntl on it). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/pfm_encode.h"
#include "sampler/backend.h"
#include "util/raw_syscall.h"
#include "sampler/sampler.h"
#include "util/lazy_deps.h"
#include "util/pages.h"

static struct perf_event_attr lb_perf_attr;

/* The lowest fd number an event may take: the upper quarter of the soft
 * RLIMIT_NOFILE, at least 64 numbers below it. Read per call (cheap):
 * the program may raise its limit. 0 when the limit is too small to keep
 * any room, and then the event keeps the number the kernel gave it. */
static int lb_perf_fd_floor(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    rlim_t lim = rl.rlim_cur > (rlim_t)INT_MAX ? (rlim_t)INT_MAX : rl.rlim_cur;
    if (lim < 128)
        return 0;
    return (int)(lim - (lim / 4 > 64 ? lim / 4 : 64));
}

/* Moves fd to the lowest free number >= the floor (close-on-exec kept).
 * Returns the new fd; on failure closes fd and returns -1 with errno
 * EMFILE (no high number left: the caller must not take a low one). */
static int lb_perf_place_fd(int fd)
{
    int floor = lb_perf_fd_floor();
    if (floor == 0 || fd >= floor)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
    int err = errno;
    close(fd);
    if (high < 0) {
        errno = err == EINVAL ? EMFILE : err;
        return -1;
    }
    return high;
}

static int lb_perf_open_self(void)
{
    int fd = (int)lb_raw_syscall(SYS_perf_event_open, (long)&lb_perf_attr, 0 /* this thread */,
                                 -1 /* any cpu */, -1 /* no group */, PERF_FLAG_FD_CLOEXEC, 0);
    return fd < 0 ? fd : lb_perf_place_fd(fd);
}

/* The events the sampler chooses by itself, encoded as libpfm4 would
 * (its "perf" PMU table maps these names to the kernel's generic events),
 * so that a default run never loads libpfm4 (util/lazy_pfm.c). True if name is
 * one of them. */
static bool lb_perf_generic_encode(const char *name, struct perf_event_attr *attr)
{
    static const struct {
        const char *name;
        uint32_t type;
        uint64_t config;
    } generic[] = {
        { "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
        { "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
        { "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
        { "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
    };
    for (size_t i = 0; i < sizeof generic / sizeof generic[0]; i++) {
        if (strcmp(name, generic[i].name) == 0) {
            memset(attr, 0, sizeof *attr);
            attr->type = generic[i].type;
            attr->config = generic[i].config;
            return true;
        }
    }
    return false;
}

/* Any other name: libpfm4, loaded and initialized on first use. */
static int lb_perf_pfm_encode(const char *name, struct perf_event_attr *attr, char *why,
                              size_t whylen)
{
    static int pfm_state; /* 0 untried, 1 ready, -1 failed */
    if (pfm_state == 0) {
        char err[256];
        if (!lb_pfm_open(err, sizeof err)) {
            snprintf(why, whylen, "libpfm4 unavailable: %s", err);
            pfm_state = -1;
            return -1;
        }
        int rc = pfm_initialize();
        pfm_state = rc == PFM_SUCCESS ? 1 : -1;
        if (pfm_state < 0) {
            snprintf(why, whylen, "libpfm4: %s", pfm_strerror(rc));
            return -1;
        }
    }
    if (pfm_state < 0) {
        snprintf(why, whylen, "libpfm4 unavailable");
        return -1;
    }
    int rc = lb_pfm_encode(name, attr);
    if (rc != PFM_SUCCESS) {
        snprintf(why, whylen, "%s", pfm_strerror(rc));
        return -1;
    }
    return 0;
}

int lb_perf_prepare(const char *name, uint64_t period, uint64_t freq, bool *is_time,
                    bool *with_kernel, char *why, size_t whylen)
{
    struct perf_event_attr attr;
    if (!lb_perf_generic_encode(name, &attr) && lb_perf_pfm_encode(name, &attr, why, whylen) != 0)
        return -1;
    attr.size = sizeof attr;
    attr.disabled = 1;
    attr.exclude_kernel = 1; /* see the top of this file */
    attr.exclude_hv = 1;
    attr.wakeup_events = 1;
    attr.inherit = 0;
    if (period) {
        attr.freq = 0;
        attr.sample_period = period;
    } else {
        attr.freq = 1;
        attr.sample_freq = freq;
    }
    lb_perf_attr = attr;

    int fd = lb_perf_open_self();
    if (fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        memset(&lb_perf_attr, 0, sizeof lb_perf_attr);
        return -1;
    }
    close(fd);
    *with_kernel = !lb_perf_attr.exclude_kernel;
    *is_time = attr.type == PERF_TYPE_SOFTWARE &&
               (attr.config == PERF_COUNT_SW_TASK_CLOCK || attr.config == PERF_COUNT_SW_CPU_CLOCK);
    return 0;
}

/* Opens, routes and arms the calling thread's event. The fd is published
 * (has_perf) before the first refresh, so the first sample can re-arm.
 * Returns 0 or -errno; on failure nothing stays open. */
static int lb_perf_thread_start(lb_thread_t *t)
{
    if (__atomic_load_n(&t->sampler->has_perf, __ATOMIC_ACQUIRE))
        return 0;
    int fd = lb_perf_open_self();
    if (fd < 0)
        return -errno;
    struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = gettid() };
    if (fcntl(fd, F_SETSIG, __atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE)) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    t->sampler->perf_fd = fd;
    /* A ring buffer lets every overflow signal us (wakeup_events = 1)
     * with the event left enabled: no PERF_EVENT_IOC_REFRESH system call
     * per sample, which costs tens of us on a VM. Without it (mmap
     * refused), fall back to one-shot REFRESH arming. */
    t->sampler->perf_ring = lb_pages_map_shared(LB_PERF_RING_BYTES, fd);
    __atomic_store_n(&t->sampler->has_perf, true, __ATOMIC_RELEASE);
    if (ioctl(fd, t->sampler->perf_ring ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_REFRESH,
              t->sampler->perf_ring ? 0 : 1) < 0) {
        int err = errno;
        if (__atomic_exchange_n(&t->sampler->has_perf, false, __ATOMIC_ACQ_REL)) {
            t->sampler->perf_fd = -1;
            if (t->sampler->perf_ring)
                lb_pages_free(t->sampler->perf_ring, LB_PERF_RING_BYTES);
            t->sampler->perf_ring = NULL;
            close(fd);
        }
        return -err;
    }
    return 0;
}

static void lb_perf_thread_stop(lb_thread_t *t)
{
    if (!__atomic_exchange_n(&t->sampler->has_perf, false, __ATOMIC_ACQ_REL))
        return;
    int fd = t->sampler->perf_fd;
    void *ring = t->sampler->perf_ring;
    t->sampler->perf_fd = -1;
    t->sampler->perf_ring = NULL;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    lb_pages_free(ring, LB_PERF_RING_BYTES);
    close(fd);
}

/* Routes t's future overflow signals to signo. Any thread may call it; it
 * owns the fd meanwhile (has_perf exchange), so the fd cannot be closed
 * and its number reused under the fcntl. Returns 0 or -errno. */
static int lb_perf_retarget(lb_thread_t *t, int signo)
{
    if (!__atomic_exchange_n(&t->sampler->has_perf, false, __ATOMIC_ACQ_REL))
        return 0;
    int rc = fcntl(t->sampler->perf_fd, F_SETSIG, signo) < 0 ? -errno : 0;
    __atomic_store_n(&t->sampler->has_perf, true, __ATOMIC_RELEASE);
    return rc;
}

/* Ring mode: discard the records (we unwind from the signal context, not
 * from the ring) by moving data_tail up to data_head, so the ring never
 * fills and the next overflow signals again. REFRESH mode: only the
 * overflow that used up the refresh (POLL_HUP, from our own fd) re-arms;
 * anything else would raise the kernel's overflow limit. */
static void lb_perf_rearm(lb_thread_t *t, const siginfo_t *info)
{
    struct perf_event_mmap_page *ring = t->sampler->perf_ring;
    if (ring) {
        uint64_t head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
        __atomic_store_n(&ring->data_tail, head, __ATOMIC_RELEASE);
        return;
    }
    if (info->si_code != POLL_HUP || !__atomic_load_n(&t->sampler->has_perf, __ATOMIC_ACQUIRE) ||
        info->si_fd != t->sampler->perf_fd)
        return;
    ioctl(t->sampler->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
}

/* One overflow, one period (frequency mode adjusts the period instead). */
static uint32_t lb_perf_weight(const siginfo_t *info)
{
    (void)info;
    return 1;
}

const lb_sampler_ops_t lb_sampler_perf_ops = {
    .name = "perf_event",
    .thread_start = lb_perf_thread_start,
    .thread_stop = lb_perf_thread_stop,
    .retarget = lb_perf_retarget,
    .rearm = lb_perf_rearm,
    .weight = lb_perf_weight,
};
