/* The time windows' own thread (see window.h).
 *
 * With LOCKBLAME_INTERVAL set ("10s", "500ms"; "0": on request only), the
 * process starts one thread with the real pthread_create, every signal
 * blocked and no lockblame record (lb_self stays NULL, and it is never
 * adopted: lb_thread_never_adopt), so its SQLite and libdw calls go
 * straight to glibc, and the program's signals never land on it. It
 * wakes every 100 ms, holds no file descriptor (a daemon that closes
 * every descriptor cannot take one from it), and writes a window
 * at each multiple of the interval in wall-clock time (so that the
 * windows of a tree's processes end together), and when the request file
 * `<database>.snap/<pid>` exists: it renames the file to `<pid>.taken`
 * (one request, one window), writes, and removes it.
 *
 * Invariants:
 *  - window_lock serialises every window write: this thread's, the final
 *    one (finish hook) and fork (fork_prepare takes it, so no fork copies
 *    a write in progress; fork_parent and fork_child release it).
 *  - quiesce sets `stopping` and then takes the lock: the thread writes no
 *    window after that; it is left in its sleep, which exit ends.
 *  - A fork child starts its own thread (the parent's is not copied) and
 *    its own windows (lb_window_forget). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/duration.h"
#include "core/real.h"
#include "report/writer/output.h"
#include "report/writer/window.h"
#include "report/writer/writer.h"
#include "sampler/adopt.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/log.h"
#include "util/own_stack.h"
#include "util/raw_syscall.h"

#define LB_WINDOW_TICK_NS    100000000ull /* how often the thread looks for a request */
#define LB_WINDOW_QUIESCE_MS 10000u       /* the longest wait for a window being written */

static bool enabled;
static uint64_t interval_ns; /* 0: windows on request only */
static int stopping;
static bool failed; /* no (more) windows: one could not be written (under window_lock),
                    * or quiesce could not take the lock */
static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static char request_path[PATH_MAX], taken_path[PATH_MAX + 8];

static void lock(void)
{
    lb_real.mutex_lock(&window_lock);
}

static void unlock(void)
{
    lb_real.mutex_unlock(&window_lock);
}

static void set_request_path(void)
{
    /* `lockblame snapshot` makes the directory (a process that records
     * nothing leaves no trace) */
    snprintf(request_path, sizeof request_path, "%s.snap/%d", lb_output_path(), (int)getpid());
    snprintf(taken_path, sizeof taken_path, "%s.taken", request_path);
}

static void write_window(const char *reason)
{
    lock();
    /* Nothing before the process recorded something, as at exit (it then
     * writes nothing and loads none of the writer's libraries). A window
     * that cannot be written said so in one line; no more windows are
     * written (the whole-run write at exit still is). */
    if (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) &&
        (lb_window_written() || lb_write_recorded_something()) && lb_window_write(reason) != 0) {
        failed = true;
        __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    }
    unlock();
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The next interval boundary after now: a multiple of the interval in
 * wall-clock time, the same in every process of the tree, so that their
 * windows line up (the CLI numbers windows by these ends). */
static uint64_t next_boundary(uint64_t now)
{
    return interval_ns ? (now / interval_ns + 1) * interval_ns : UINT64_MAX;
}

static void *window_main(void *arg)
{
    (void)arg;
    lb_thread_never_adopt(); /* before its first call that could adopt it */
    prctl(PR_SET_NAME, "lockblame-win", 0, 0, 0);
    int saved_errno = errno;
    uint64_t boundary = next_boundary(realtime_ns());
    for (;;) {
        uint64_t now = realtime_ns();
        uint64_t nap = boundary > now && boundary - now < LB_WINDOW_TICK_NS ? boundary - now
                                                                            : LB_WINDOW_TICK_NS;
        struct timespec tick = { 0, (long)nap };
        while (nanosleep(&tick, &tick) != 0 && errno == EINTR)
            ;
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            break;
        if (rename(request_path, taken_path) == 0) {
            write_window("snapshot");
            unlink(taken_path); /* done: `lockblame snapshot` waits for this */
        }
        if (realtime_ns() >= boundary) {
            write_window("interval");
            boundary = next_boundary(realtime_ns());
        }
        errno = saved_errno;
    }
    return NULL;
}

/* Start the thread with every signal blocked (it inherits the mask), and
 * give the caller its own mask back. Raw calls: the sampler's wrappers of
 * the mask calls are for the program's threads. */
static void start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, LB_OWN_STACK_SIZE); /* libdw and SQLite, as at exit */
    pthread_t th;
    int rc = lb_real.create(&th, &attr, window_main, NULL);
    pthread_attr_destroy(&attr);
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
    if (rc != 0)
        lb_warn("cannot start the time windows' thread (%s); no windows", strerror(rc));
}

void lb_window_setup(void)
{
    const char *v = lb_getenv("LOCKBLAME_INTERVAL");
    if (!v || !*v || !*lb_output_path())
        return;
    if (!lb_parse_duration(v, &interval_ns)) {
        lb_warn_setting("LOCKBLAME_INTERVAL",
                        "bad LOCKBLAME_INTERVAL '%s' (want e.g. 10s, 500ms, 0); no time windows",
                        v);
        return;
    }
    enabled = true;
    set_request_path();
    start_thread();
}

void lb_window_quiesce(void)
{
    if (!enabled)
        return;
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    /* A window being written ends first; the lock is kept until exit. A
     * fatal signal on the window thread itself (its own write crashed)
     * would wait forever: after LB_WINDOW_QUIESCE_MS, no last window. */
    uint64_t deadline = lb_now_ns() + LB_WINDOW_QUIESCE_MS * 1000000ull;
    while (lb_real.mutex_trylock(&window_lock) != 0) {
        if (lb_now_ns() > deadline) {
            failed = true;
            return;
        }
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
    }
    unlink(request_path);
    unlink(taken_path);
}

void lb_window_finish(const char *reason)
{
    if (!enabled)
        return;
    /* the last window, with the whole-run profile (none when the process
     * recorded nothing and wrote no window) */
    if (!failed && (lb_window_written() || lb_write_recorded_something()))
        lb_window_write(reason);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s.snap", lb_output_path());
    rmdir(dir); /* the last process of the tree removes it */
}

void lb_window_fork_prepare(void)
{
    if (enabled)
        lock();
}

void lb_window_fork_parent(void)
{
    if (enabled)
        unlock();
}

void lb_window_fork_child(void)
{
    if (!enabled)
        return;
    lb_real.mutex_init(&window_lock, NULL);
    lb_window_forget();
    set_request_path();
    if (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
        start_thread();
}
