/* The tree's background merger (merger.h, which states the invariants).
 * The root's side runs in its fork hook and before its final write, on
 * the forking (or finishing) thread; the merger's side in the merger
 * process alone, on one thread, with every signal blocked. */
#include "report/writer/merger.h"

#include <errno.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/phase.h"
#include "core/thread.h"
#include "report/writer/ledger.h"
#include "report/writer/output.h"
#include "report/writer/spool_bound.h"
#include "util/clock.h"
#include "util/fork_pages.h"
#include "util/own_stack.h"
#include "util/proc_numbers.h"
#include "util/raw_syscall.h"
#include "util/read_head.h"
#include "util/std_fds.h"

/* The lowest RLIMIT_NPROC under which no merger starts. */
#define LB_MERGER_NPROC_ROOM 4096u

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static pid_t merger;  /* the root's merger while it may run, else 0 */
static bool given_up; /* a merger could not work here: none starts again */
static bool own_heap; /* malloc is glibc's (at setup): see lb_merger_setup */

/* A merger's exit status: 0 when it added what it found (or found it
 * taken), else MERGER_CANNOT. */
#define MERGER_CANNOT 1

/* The merger's work: the sealed pending files added, batches of at most
 * the bound's capped worth (lb_output_merge_sealed). Its status into
 * *status. */
static void merge_sealed(void *status)
{
    if (!lb_spool_bound_take_duty_now())
        return; /* a process on the bound's duty commits: it adds them */
    if (lb_output_merge_sealed(LB_SPOOL_CAPPED_MOST) != 0)
        *(int *)status = MERGER_CANNOT;
    lb_spool_bound_release();
}

/* The merger apart from the program: no descriptor of its, a process
 * group of its own (a job-control stop of the program's group, which
 * would report the merger's stop to the root, does not reach it), a name
 * of its own (pgrep, killall and pidof of the program's name do not find
 * it), and `/` as its directory (it holds no mount of the program's
 * busy; the run's paths are absolute). false when the descriptors
 * cannot be closed (close_range refused: a kernel before 5.9, a seccomp
 * filter): the merger ends at once. */
static bool set_apart(void)
{
    if (lb_raw_syscall(SYS_close_range, 0, ~0ul, 0, 0, 0, 0) != 0)
        return false;
    (void)lb_std_fds_hold(); /* /dev/null as 0, 1 and 2: its lines (none in a success) go
                              * nowhere, and SQLite's files get 3 and up */
    lb_raw_syscall(SYS_setpgid, 0, 0, 0, 0, 0, 0);
    lb_raw_syscall(SYS_prctl, PR_SET_NAME, (long)"lockblame-merge", 0, 0, 0, 0);
    if (lb_output_path()[0] == '/')
        lb_raw_syscall(SYS_chdir, (long)"/", 0, 0, 0, 0, 0);
    return true;
}

/* The merger process, from the raw clone on: never returns. */
__attribute__((noreturn)) static void merger_main(void)
{
    lb_own_pid_confirm(); /* its own pid, not the root's (util/proc_numbers.h) */
    int status = MERGER_CANNOT;
    if (set_apart()) {
        lb_thread_t *self = lb_self; /* the root's thread's record, copied */
        lb_enter(self);              /* SQLite's locks and allocations go straight to glibc */
        status = 0;
        if (lb_call_on_own_stack(merge_sealed, &status, LB_OWN_STACK_SIZE, true) != 0)
            merge_sealed(&status);
    }
    for (;;)
        lb_raw_syscall(SYS_exit_group, status, 0, 0, 0, 0, 0);
}

/* Whether the process runs one thread: the registry's live records, and
 * the kernel's count (a thread without a record of lockblame's, e.g. one
 * whose tables could not be made, is seen there only). */
static bool one_thread(void)
{
    unsigned live = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        live += !__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
    if (live != 1)
        return false;
    char status[2048];
    return lb_read_head("/proc/self/status", status, sizeof status) > 0 &&
           strstr(status, "\nThreads:\t1\n") != NULL;
}

/* Whether the user's process limit leaves a merger room: none set, or
 * one no program runs near (a program that forks until fork fails, as
 * conformance suites do under a low `ulimit -u`, must fail at its own
 * count). */
static bool process_limit_roomy(void)
{
    struct rlimit limit;
    if (lb_raw_syscall(SYS_getrlimit, RLIMIT_NPROC, (long)&limit, 0, 0, 0, 0) != 0)
        return false;
    return limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= LB_MERGER_NPROC_ROOM;
}

/* Whether the root may start a merger now (merger.h): the bound less
 * one log's worth pending (at least LB_MERGER_START records), so that a
 * merger adds about the batch a child on the bound's duty would have, in
 * one transaction: a merger's set-up (the database opened, the module
 * files read for the names the records leave to the merge) and each
 * transaction's page writes cost about what a few dozen records' merge
 * does, and mergers of half the bound took the tree ~10% more CPU time
 * than the children's capped commits. */
static bool may_start(void)
{
    unsigned bound = lb_spool_bound_max();
    unsigned start = bound - LB_SPOOL_LOG_RECORDS > LB_MERGER_START ? bound - LB_SPOOL_LOG_RECORDS
                                                                    : LB_MERGER_START;
    return own_heap && !__atomic_load_n(&given_up, __ATOMIC_RELAXED) && lb_self &&
           lb_runtime_monitoring() && lb_spool_enabled() && bound > LB_MERGER_START &&
           lb_spool_bound_pending() >= start && lb_ledger_spool_open() &&
           lb_spool_bound_duty_free() && process_limit_roomy() && one_thread();
}

/* The raw clone, with every signal blocked around it: the merger starts
 * with them blocked and keeps them so; the root's mask is restored. */
static void start(void)
{
    sigset_t all, before;
    sigfillset(&all);
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&before, _NSIG / 8, 0, 0);
    long pid = lb_raw_syscall(SYS_clone, 0 /* no flag, exit signal 0 */, 0, 0, 0, 0, 0);
    if (pid == 0)
        merger_main();
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&before, 0, _NSIG / 8, 0, 0);
    if (pid > 0)
        __atomic_store_n(&merger, (pid_t)pid, __ATOMIC_RELEASE);
}

/* The merger reaped if it ended: true, or false while it runs. Gone
 * (ECHILD: a wait of the program's with __WALL took it) counts as
 * ended. One that could not work (its status, or a signal) gives the
 * background merge up for this image: it would fail again at every
 * fork. */
static bool reaped(int options)
{
    /* Read once: another thread's fork hook may reap it meanwhile (a
     * root that went threaded after the start), and a pid of 0 would
     * name the process group in wait4 and kill. */
    pid_t pid = __atomic_load_n(&merger, __ATOMIC_ACQUIRE);
    if (pid <= 0)
        return true;
    int status = 0;
    long rc;
    do
        rc = lb_raw_syscall(SYS_wait4, pid, (long)&status, __WCLONE | options, 0, 0, 0);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        return false;
    if (rc > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        __atomic_store_n(&given_up, true, __ATOMIC_RELAXED);
    __atomic_compare_exchange_n(&merger, &pid, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return true;
}

/* The merger waited for, LB_MERGER_WAIT_NS at most by the monotonic
 * clock: its batch under way takes a fraction of that, and one that
 * takes longer (stopped, or hung on a module file of a dead mount) is
 * killed, so that the program's end never waits on it; its transaction
 * and claims are then the journal's and the next merger's (the root's
 * final write). A killed merger is waited for as long again, then left
 * (one in an uninterruptible sleep). */
#define LB_MERGER_WAIT_NS (2ull * 1000000000ull)
#define LB_MERGER_POLL_NS 1000000l

/* Polls until the merger is reaped or `deadline` passes: reaped or not. */
static bool reaped_by(uint64_t deadline)
{
    struct timespec poll = { 0, LB_MERGER_POLL_NS };
    while (!reaped(WNOHANG)) {
        if (lb_monotonic_ns() >= deadline)
            return false;
        lb_raw_syscall(SYS_nanosleep, (long)&poll, 0, 0, 0, 0, 0);
    }
    return true;
}

static void wait_bounded(void)
{
    if (reaped_by(lb_monotonic_ns() + LB_MERGER_WAIT_NS))
        return;
    pid_t pid = __atomic_load_n(&merger, __ATOMIC_ACQUIRE);
    if (pid > 0)
        lb_raw_syscall(SYS_kill, pid, SIGKILL, 0, 0, 0, 0);
    reaped_by(lb_monotonic_ns() + LB_MERGER_WAIT_NS);
}

void lb_merger_setup(void)
{
    /* A merger is a copy of the root made inside its fork: the malloc of
     * a replacement allocator registered after lockblame's fork handlers
     * holds its locks until its own parent handler runs, later. So only
     * with glibc's malloc (the malloc found by name lies in the object
     * that holds getpid, which no allocator replaces: libc), whose locks
     * the fork released before. */
    void *found = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info in_found, in_libc;
    own_heap = found && dladdr(found, &in_found) && dladdr((void *)&getpid, &in_libc) &&
               in_found.dli_fbase == in_libc.dli_fbase;
}

void lb_merger_fork_prepare(void)
{
    if (__atomic_load_n(&merger, __ATOMIC_RELAXED)) {
        int saved_errno = errno;
        reaped(WNOHANG); /* an ended merger holds no process slot the fork needs */
        errno = saved_errno;
    }
}

void lb_merger_fork_parent(void)
{
    if (!lb_output_tree_root())
        return;
    int saved_errno = errno;
    if (reaped(WNOHANG) && may_start())
        start();
    errno = saved_errno;
}

void lb_merger_fork_child(void)
{
    LB_STORE_CHANGED(&merger, 0);
}

void lb_merger_wait(void)
{
    int saved_errno = errno;
    wait_bounded();
    errno = saved_errno;
}
